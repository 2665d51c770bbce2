"""Integrity of reads (issue 12, part B): a saved index that heals, fresh readers, tenant views
that hide everything outside them, and bounded work (capped parsing, timeouts, no blank Document).

Store-backed tests run on Milvus Lite and on the server (``make_store`` / ``backend``), and
retrievals both sync and async (``retrieve``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusPathRetriever, create_llm_reranker
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.errors import CorruptIndexError, StaleIndexError
from langchain_graphrag_milvus.graph import persist
from langchain_graphrag_milvus.path_retriever import NoPathEvents

from ..fakes import LexicalEmbeddings
from .test_tenants import documents as tenant_documents

LOGGER = "langchain_graphrag_milvus"


def ids(docs: list[Document]) -> list[str | None]:
    return [d.id for d in docs]


# ------------------------------------------------------------------ 4. a saved index that heals
def _truncate(path: Path) -> None:
    file = path / "rel_subject.npy"
    file.write_bytes(file.read_bytes()[:-7])


def _flip_a_byte(path: Path) -> None:  # same length, other content: only the checksum sees it
    file = path / "ent_rel_indices.npy"
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF
    file.write_bytes(bytes(data))


DAMAGE = {
    "truncated .npy": _truncate,
    "altered byte": _flip_a_byte,
    "invalid manifest.json": lambda p: (p / "manifest.json").write_text("{not json", encoding="utf-8"),
    "manifest of another shape": lambda p: (p / "manifest.json").write_text("[1, 2]", encoding="utf-8"),
    "missing .npy": lambda p: (p / "passage_offsets.npy").unlink(),
    "missing manifest": lambda p: (p / "manifest.json").unlink(),
}


async def test_a_damaged_index_is_rebuilt_with_a_warning_or_refused(make_store, retrieve, tmp_path, caplog) -> None:
    graph_path = tmp_path / "graph-index"
    writer = make_store(LexicalEmbeddings(), graph_path=graph_path)
    writer.add_records(nano_dataset())
    expected = ids(MilvusGraphRetriever(store=writer, k=3).invoke(NANO_QUESTION))
    persist.verify(graph_path)  # saved with lengths and checksums of every file
    kinds = list(DAMAGE)
    if make_store.backend == "server":  # each rebuild reads Milvus with "Strong" (~3 s): a subset there
        kinds = kinds[:3] if retrieve.mode == "sync" else kinds[:1]
    for what in kinds:
        damage = DAMAGE[what]
        damage(graph_path)
        strict = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=graph_path,
                            on_stale="error")  # fmt: skip
        with pytest.raises(CorruptIndexError, match="graph_path=.*graph-index") as err:
            await retrieve(MilvusGraphRetriever(store=strict, k=3), NANO_QUESTION)
        assert isinstance(err.value, StaleIndexError), what
        caplog.clear()
        reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=graph_path)
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            assert ids(await retrieve(MilvusGraphRetriever(store=reader, k=3), NANO_QUESTION)) == expected, what
        assert "is damaged" in caplog.text and "graph-index" in caplog.text, what
        persist.verify(graph_path)  # healed: rewritten from Milvus
        assert persist.load(graph_path).n_relations == writer.graph.n_relations


async def test_a_stale_index_names_graph_path(make_store, tmp_path) -> None:
    graph_path = tmp_path / "graph-index"
    writer = make_store(LexicalEmbeddings(), graph_path=graph_path)
    writer.add_records(nano_dataset()[:3])
    writer.graph  # noqa: B018  (built, hence saved)
    assert (graph_path / "manifest.json").exists()
    other = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix)  # no graph_path: does not save
    other.add_records(nano_dataset()[3:])
    strict = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=graph_path, on_stale="error")
    with pytest.raises(StaleIndexError, match="graph_path=.*graph-index") as err:
        strict.graph  # noqa: B018
    assert not isinstance(err.value, CorruptIndexError)


# ------------------------------------------------------------------ 5. fresh readers
ZETA = {
    "id": "zeta",
    "passage": "Zeta Quokka was a pupil of Johann Bernoulli.",
    "triplets": [["Zeta Quokka", "was a pupil of", "Johann Bernoulli"]],
}


async def test_a_reader_sees_another_writers_change(make_store, retrieve) -> None:
    writer = make_store(LexicalEmbeddings())
    writer.add_records(nano_dataset())
    prefix = writer.collection_prefix
    eager = make_store(LexicalEmbeddings(), prefix=prefix, refresh_interval=0)  # checks on every query
    never = make_store(LexicalEmbeddings(), prefix=prefix, refresh_interval=None)
    lazy = make_store(LexicalEmbeddings(), prefix=prefix, refresh_interval=3600)
    paths = {name: MilvusPathRetriever(store=store) for name, store in (("eager", eager), ("never", never))}
    pair = ["Zeta Quokka", "Leonhard Euler"]
    for retriever in paths.values():
        assert await retrieve(retriever, "?", entities=pair) == []  # Zeta Quokka is not there yet
    lazy.graph  # noqa: B018
    writer.add_records([ZETA])  # another store instance writes

    (doc,) = await retrieve(paths["eager"], "?", entities=pair)
    assert doc.metadata["_path"] == ["Zeta Quokka", "Johann Bernoulli", "Leonhard Euler"]
    assert doc.metadata["_passage_ids"][0] == "zeta"
    assert await retrieve(paths["never"], "?", entities=pair) == []  # refresh_interval=None: never checks
    assert "zeta" not in lazy.graph.passages  # not due before an hour
    assert never.refresh() is True and "zeta" in never.graph.passages  # an explicit check
    assert never.refresh() is False  # nothing changed since

    writer.delete_passages(["zeta"])
    assert await retrieve(paths["eager"], "?", entities=pair) == []
    assert "zeta" not in eager.graph.passages and "Zeta Quokka" not in eager.entity_names().values()


def test_the_writers_own_changes_cause_no_reload(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings(), refresh_interval=0)
    store.add_records(nano_dataset()[:3])
    graph = store.graph
    reads: list[int] = []
    monkeypatch.setattr(store._graph_cache, "_read_graph", lambda: reads.append(1))
    store.add_records(nano_dataset()[3:])  # updated in place; its own generation bumps are "seen"
    assert store.graph is not graph and store.graph.n_passages > graph.n_passages
    store.delete_passages([store.graph.passages.ids[0]])
    store.graph  # noqa: B018
    assert reads == []


def test_refresh_interval_is_validated(make_store) -> None:
    for bad in (-1, "1", True):
        with pytest.raises(ValueError, match="refresh_interval"):
            make_store(LexicalEmbeddings(), refresh_interval=bad)


async def test_the_llm_reranker_drops_what_is_out_of_the_pool(nano_store, retrieve) -> None:
    answer = '{"useful_relationships": [' + ", ".join(f'"[{i}] x"' for i in range(200_000, 0, -1)) + "]}"
    retriever = MilvusGraphRetriever(
        store=nano_store, k=2, max_candidates=5, reranker=create_llm_reranker(FakeListChatModel(responses=[answer]))
    )
    docs = await retrieve(retriever, NANO_QUESTION)
    assert len(docs) == 2 and docs[0].metadata["_ranked_by"] == "llm"


def _slow(seconds: float, answer: Any) -> RunnableLambda:
    def sync(_: Any) -> Any:
        time.sleep(seconds)
        return answer

    async def asynchronous(_: Any) -> Any:
        await asyncio.sleep(seconds)
        return answer

    return RunnableLambda(sync, afunc=asynchronous)


async def test_a_slow_reranker_falls_back_to_the_no_llm_order(nano_store, retrieve, caplog) -> None:
    plain = await retrieve(MilvusGraphRetriever(store=nano_store, k=3), NANO_QUESTION)
    slow = MilvusGraphRetriever(store=nano_store, k=3, reranker=_slow(1.0, [4, 3]), rerank_timeout=0.1)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        docs = await retrieve(slow, NANO_QUESTION)
    assert [(d.id, d.metadata["_ranked_by"]) for d in docs] == [(d.id, d.metadata["_ranked_by"]) for d in plain]
    assert "reranker failed (no answer within 0.1 s)" in caplog.text
    fast = await retrieve(slow, NANO_QUESTION, rerank_timeout=10)  # per call; answers in time
    assert fast[0].metadata["_ranked_by"] == "llm"


async def test_a_slow_extractor_falls_back_to_the_offline_linker(nano_store, retrieve, caplog) -> None:
    query = "How is Leonhard Euler related to Daniel Bernoulli?"
    extractor = _slow(2.0, ["Basel", "Jakob Bernoulli"])
    paths = MilvusPathRetriever(store=nano_store, entity_extractor=extractor, extractor_timeout=0.2)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        (doc,) = await retrieve(paths, query)
    assert doc.metadata["_pair"] == ["Leonhard Euler", "Daniel Bernoulli"]  # the linker's, not the extractor's
    assert "entity extraction failed (no answer within 0.2 s); using the offline linker" in caplog.text
    graph = MilvusGraphRetriever(store=nano_store, k=2, entity_extractor=extractor, extractor_timeout=0.2)
    plain = MilvusGraphRetriever(store=nano_store, k=2)
    assert ids(await retrieve(graph, query)) == ids(await retrieve(plain, query))
    with pytest.raises(ValueError, match="extractor_timeout"):
        await retrieve(paths, query, extractor_timeout=0)
    with pytest.raises(ValueError, match="rerank_timeout"):
        MilvusGraphRetriever(store=nano_store, rerank_timeout=-1)


async def test_an_extractor_answer_that_is_no_list_falls_back(nano_store, retrieve, caplog) -> None:
    paths = MilvusPathRetriever(store=nano_store, entity_extractor=RunnableLambda(lambda q: "Leonhard Euler"))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        (doc,) = await retrieve(paths, "How is Leonhard Euler related to Daniel Bernoulli?")
    assert doc.metadata["_pair"] == ["Leonhard Euler", "Daniel Bernoulli"] and "not a list" in caplog.text


async def test_no_path_returns_nothing_and_says_why(nano_store, retrieve) -> None:
    paths = MilvusPathRetriever(store=nano_store)
    chain = paths | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
    assert chain.invoke("Who was Daniel Bernoulli?") == ""  # no blank Document in the context
    events = NoPathEvents()
    assert await retrieve(paths, "Who was Daniel Bernoulli?", config={"callbacks": [events]}) == []
    assert events.last == {
        "reason": "need two entities in the graph; found 1 (Daniel Bernoulli)",
        "entities": ["Daniel Bernoulli"],
        "pairs": [],
    }
    seen = [
        e
        async for e in paths.astream_events("Who was Daniel Bernoulli?", version="v2")
        if e["event"] == "on_custom_event"
    ]
    assert [(e["name"], e["data"]["reason"]) for e in seen] == [
        ("graphrag_no_path", "need two entities in the graph; found 1 (Daniel Bernoulli)")
    ]


# ------------------------------------------------------------------ 6. tenant views hide everything outside them
PROBES = [
    "How is Alice Smith related to Globex?",  # Globex: a name only tenant b has
    "How is Globex related to Springfield?",
    "What does Globex sell in Springfield?",
    "Where does Alice Smith work, and what does Acme Corp make?",
    "Who founded Globex and where was Alice Smith born?",
]


@pytest.fixture(scope="module")
def both_and_a_only(module_stores):
    """The same tenant-a documents in two stores: one also holding tenant b, one without it (read only)."""
    both = module_stores(LexicalEmbeddings())
    both.add_documents(tenant_documents())
    a_only = module_stores(LexicalEmbeddings())
    a_only.add_documents([d for d in tenant_documents() if d.metadata["tenant"] == "a"])
    return both, a_only


def _seen(docs: list[Document]) -> list[tuple[str, dict[str, Any]]]:
    """What a caller gets; scores to 6 significant digits (float32 sums differ in order between graphs)."""
    return [
        (d.page_content, {k: float(f"{v:.6g}") if k in ("_score", "_raw_score") else v for k, v in d.metadata.items()})
        for d in docs
    ]


async def test_tenant_b_cannot_be_probed_through_paths(both_and_a_only, retrieve) -> None:
    both, a_only = both_and_a_only
    for query in PROBES:
        out = []
        for store in (both, a_only):
            events = NoPathEvents()
            retriever = MilvusPathRetriever(store=store, filter={"tenant": "a"}, sentences=True, entity_min_score=0.3)
            docs = await retrieve(retriever, query, config={"callbacks": [events]})
            out.append((_seen(docs), events.events))
        assert out[0] == out[1], query  # whatever tenant b holds changes nothing
        assert "Globex" not in repr(out[0]), query


@pytest.mark.parametrize("ranking", ["ppr", "similarity"])
async def test_tenant_b_cannot_be_probed_through_passages(both_and_a_only, retrieve, ranking) -> None:
    both, a_only = both_and_a_only
    for query in PROBES:
        out = []
        for store in (both, a_only):
            seen: list[Any] = []

            def rerank(payload: dict[str, Any], seen: list[Any] = seen) -> list[int]:
                seen.append((payload["relations"], payload["candidates"]))
                return [0]

            retriever = MilvusGraphRetriever(
                store=store, k=2, ranking=ranking, filter={"tenant": "a"}, reranker=RunnableLambda(rerank)
            )
            out.append((_seen(await retrieve(retriever, query)), seen))
        assert out[0] == out[1], query
        assert "Globex" not in repr(out[0]), query


CROWD_A = [
    Document(
        id="ca1",
        page_content="Globex Holdings Group hired Alice Smith.",
        metadata={"tenant": "a", "triplets": [["Globex Holdings Group", "hired", "Alice Smith"]]},
    )
]
CROWD_B = [  # 50 entities of tenant b nearer to the name "Globex" than tenant a's only one
    Document(
        id=f"cb{i}",
        page_content=f"Globex Unit{i} employs Bob Jones.",
        metadata={"tenant": "b", "triplets": [[f"Globex Unit{i}", "employs", "Bob Jones"]]},
    )
    for i in range(50)
]


@pytest.fixture(scope="module")
def crowded(module_stores):
    both = module_stores(LexicalEmbeddings())
    both.add_documents(CROWD_A + CROWD_B)
    a_only = module_stores(LexicalEmbeddings())
    a_only.add_documents(CROWD_A)
    return both, a_only


async def test_other_tenants_hits_cannot_crowd_out_a_tenants_own(crowded, retrieve) -> None:
    # the first searches return only tenant b's entities: the view search must look further
    both, a_only = crowded
    out = []
    for store in (both, a_only):
        paths = MilvusPathRetriever(store=store, filter={"tenant": "a"}, entity_min_score=0.5)
        graph = MilvusGraphRetriever(store=store, k=1, filter={"tenant": "a"}, ranking="similarity", hops=0)
        out.append(
            (
                _seen(await retrieve(paths, "?", entities=["Globex", "Alice Smith"])),
                _seen(await retrieve(graph, "Who did Globex hire?", entities=["Globex"])),
            )
        )
    assert out[0] == out[1]
    (path_docs, graph_docs) = out[0]
    assert path_docs[0][1]["_path"] == ["Globex Holdings Group", "Alice Smith"]
    assert graph_docs[0][1]["_ranked_by"] == "graph" and graph_docs[0][1]["_passage_id"] == "ca1"
