"""The two executors answer each effect from a store and run a pipeline alike, blocking or awaited."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.retrieval.effects import (
    Compute,
    EntityNames,
    Fetch,
    Gather,
    Invoke,
    Notify,
    Search,
    Steps,
    ask,
    search_all,
)
from langchain_graphrag_milvus.retrieval.executors import run_async, run_sync
from langchain_graphrag_milvus.retrieval.graph_pipeline import naive_pipeline


class CannedStore:
    """Answers reads from memory and records them (the members of RetrievalStore that these tests use)."""

    def __init__(self) -> None:
        self.embedding = DeterministicFakeEmbedding(size=4)
        self.calls: list[tuple[str, Any]] = []

    def search(self, kind: str, vectors: Sequence[Any], limit: int, **kw: Any) -> list[list[Hit]]:
        self.calls.append(("search", (kind, limit, kw.get("filter_expr"))))
        return [[Hit(f"{kind}-{i}", 1.0 - i / 10, {"text": f"t{i}"}) for i in range(limit)] for _ in vectors]

    async def asearch(self, *args: Any, **kw: Any) -> list[list[Hit]]:
        return self.search(*args, **kw)

    def fetch(self, kind: str, ids: Sequence[str], fields: Any, **kw: Any) -> dict[str, dict[str, Any]]:
        self.calls.append(("fetch", (kind, tuple(ids))))
        if kind == "relations":
            raise ConnectionError("Milvus is down")
        return {i: {"text": i} for i in ids}

    async def afetch(self, *args: Any, **kw: Any) -> dict[str, dict[str, Any]]:
        return self.fetch(*args, **kw)

    def entity_names(self) -> dict[str, str]:
        return {"e1": "Euler"}


def probe() -> Steps[dict[str, Any]]:
    """A small pipeline touching each kind of answer, and a failure it handles itself."""
    out: dict[str, Any] = {}
    out["searches"] = yield from search_all([Search("entities", ((0.0,),), 2), Search("passages", ((0.0,),), 1)])
    out["names"] = yield from ask(EntityNames(("e1", "e2")))
    out["double"] = yield from ask(Compute(lambda x: 2 * x, (21,)))
    out["invoked"] = yield from ask(Invoke(RunnableLambda(lambda s: s.upper()), "abc"))
    out["notified"] = yield from ask(Notify("graphrag_test", {"reason": "because"}))
    try:
        yield from ask(Fetch("relations", ("r1",), ("text",)))
    except ConnectionError as exc:  # thrown back into the pipeline, which decides
        out["error"] = str(exc)
    out["gathered"] = yield from ask(Gather((Fetch("passages", ("p1",), ("text",)), EntityNames(("e1",)))))
    return out


class Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        self.seen.append((name, data))


EXPECTED = {
    "names": {"e1": "Euler", "e2": ""},
    "double": 42,
    "invoked": "ABC",
    "notified": None,
    "error": "Milvus is down",
    "gathered": [{"p1": {"text": "p1"}}, {"e1": "Euler"}],
}


def test_sync_executor_answers_every_kind_of_effect() -> None:
    store = CannedStore()
    events = Events()
    manager = CallbackManager([events])
    out = run_sync(probe(), store, manager)  # type: ignore[arg-type]
    assert {k: v for k, v in out.items() if k != "searches"} == EXPECTED
    assert [[h.id for h in per[0]] for per in out["searches"]] == [["entities-0", "entities-1"], ["passages-0"]]
    assert events.seen == [("graphrag_test", {"reason": "because"})]


async def test_async_executor_gives_the_same_answers() -> None:
    sync_out = run_sync(probe(), CannedStore())  # type: ignore[arg-type]
    async_out = await run_async(probe(), CannedStore())  # type: ignore[arg-type]
    assert async_out == sync_out


async def test_a_pipeline_error_reaches_the_caller_from_both_executors() -> None:
    def failing() -> Steps[None]:
        yield from ask(Fetch("relations", ("r1",), ("text",)))  # not caught: the caller gets it

    with pytest.raises(ConnectionError, match="Milvus is down"):
        run_sync(failing(), CannedStore())  # type: ignore[arg-type]
    with pytest.raises(ConnectionError, match="Milvus is down"):
        await run_async(failing(), CannedStore())  # type: ignore[arg-type]


async def test_naive_pipeline_on_both_executors() -> None:
    store = CannedStore()
    docs = run_sync(naive_pipeline("q", 2, "x == 1"), store)  # type: ignore[arg-type]
    assert [d.id for d in docs] == ["passages-0", "passages-1"]
    assert store.calls == [("search", ("passages", 2, "x == 1"))]
    adocs = await run_async(naive_pipeline("q", 2, "x == 1"), CannedStore())  # type: ignore[arg-type]
    assert adocs == docs
