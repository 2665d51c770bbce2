"""The server's pure parts: the ingest gate, error statuses, request scoping (no Milvus, no HTTP)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("fastapi")

from langchain_graphrag_milvus import errors  # noqa: E402
from langchain_graphrag_milvus.server.middleware import error_body, error_status  # noqa: E402
from langchain_graphrag_milvus.server.state import (  # noqa: E402
    ChatModelNotConfiguredError,
    IngestBusyError,
    IngestGate,
    ServerLimits,
    ServerState,
)


async def test_gate_runs_one_ingest_and_queues_a_bounded_number():
    gate = IngestGate(queue=1)
    order: list[str] = []
    release = asyncio.Event()

    async def ingest(name: str, wait: bool) -> None:
        async with gate.slot():
            order.append(f"start {name}")
            if wait:
                await release.wait()
            order.append(f"end {name}")

    first = asyncio.create_task(ingest("a", True))
    await asyncio.sleep(0)
    second = asyncio.create_task(ingest("b", False))
    await asyncio.sleep(0)
    assert gate.running and gate.waiting == 1
    with pytest.raises(IngestBusyError):
        await ingest("c", False)
    release.set()
    await asyncio.gather(first, second)
    assert order == ["start a", "end a", "start b", "end b"]
    assert not gate.running and gate.waiting == 0


async def test_gate_without_queue_refuses_while_busy():
    gate = IngestGate(queue=0)
    async with gate.slot():
        with pytest.raises(IngestBusyError):
            async with gate.slot():
                pass
    async with gate.slot():  # free again
        pass


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (errors.InvalidFilterError("x"), 400),
        (errors.InvalidIdError("x"), 400),
        (errors.CollectionNotFoundError("x"), 404),
        (errors.UnknownIdError("x"), 404),
        (errors.ConcurrentWriteError("x"), 409),
        (IngestBusyError("x"), 429),
        (errors.StoreConnectionError("x"), 503),
        (ChatModelNotConfiguredError("x"), 503),
        (ValueError("x"), 400),
        (RuntimeError("secret internals"), 500),
    ],
)
def test_error_statuses(exc, status):
    assert error_status(exc) == status
    body = error_body(exc, status)
    if status == 500:
        assert body["error"] == "InternalError" and "secret" not in body["message"]
    else:
        assert body == {"error": type(exc).__name__, "message": "x"}


class _NoStore:
    collection_prefix = "p"


def test_scoped_filter_adds_the_tenant_and_refuses_another():
    state = ServerState(store=_NoStore(), partition_key="tenant", limits=ServerLimits(max_k=5))  # type: ignore[arg-type]
    assert state.scoped_filter({"source": "a"}, "t1") == {"source": "a", "tenant": "t1"}
    assert state.scoped_filter(None, None, all_tenants=True) is None
    with pytest.raises(ValueError, match="partitioned"):
        state.scoped_filter(None, None)
    with pytest.raises(errors.InvalidFilterError):
        state.scoped_filter({"tenant": "t2"}, "t1")
    with pytest.raises(errors.InvalidFilterError):
        state.scoped_filter({"bad field": "x"}, "t1")
    with pytest.raises(ValueError, match="between 1 and 5"):
        state.check_k(6)


def test_k_defaults_come_from_retrieval_defaults():
    """One home per default: the requests take k from retrieval/defaults.py (unset: the mode's)."""
    from langchain_graphrag_milvus.retrieval.defaults import K_BY_MODE, PASSAGES_K
    from langchain_graphrag_milvus.server.schemas import AskRequest, ExplainRequest, QueryRequest

    state = ServerState(store=_NoStore(), limits=ServerLimits(max_k=50))  # type: ignore[arg-type]
    for mode, k in K_BY_MODE.items():
        assert state.check_k(QueryRequest(query="q", mode=mode).k, mode) == k
        assert state.check_k(AskRequest(question="q", mode=mode).k, mode) == k
        assert state.check_k(3, mode) == 3
    assert ExplainRequest(query="q").k == PASSAGES_K
    with pytest.raises(ValueError, match="between 1 and 5"):
        ServerState(store=_NoStore(), limits=ServerLimits(max_k=5)).check_k(None, "paths")  # type: ignore[arg-type]


#: The evaluation harness reads its own depths (recall@2/@5, an index-recall probe), not a retriever default.
EVAL_MODULES = ("eval.py", "evaluation.py", "hybrid.py")


def test_no_caller_repeats_a_k_default():
    """``k`` defaults live in retrieval/defaults.py: no ``k: int = 4`` / ``k=4`` elsewhere in server/ or cli/."""
    import re
    from pathlib import Path

    import langchain_graphrag_milvus

    root = Path(langchain_graphrag_milvus.__file__).parent
    pattern = re.compile(r"\bk(: int)? ?= ?\d|\"-k\".*default=\d")
    found = [
        f"{path.relative_to(root)}:{n}: {line.strip()}"
        for folder in ("server", "cli")
        for path in sorted((root / folder).rglob("*.py"))
        if path.name not in EVAL_MODULES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
    plain = ServerState(store=_NoStore())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no tenants"):
        plain.scoped_filter(None, "t1")
