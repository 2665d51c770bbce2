"""Fewer round trips on a real store (Milvus Lite and a server): same Documents, counted requests, concurrent reads.

* A passage row that came with the passage search is the row a fetch returns: the
  Documents built from either are equal (plain and partition-key stores, user metadata).
* The default query's Milvus round trips, counted by a spy on the store's own methods.
* The sync executor's concurrent ``Gather`` answers like one-by-one calls through the real
  client, and a failing search still comes back typed, the first in order.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION
from langchain_graphrag_milvus.errors import InvalidFilterError
from langchain_graphrag_milvus.retrieval.effects import Embed, Fetch, LinkEntities, Search
from langchain_graphrag_milvus.retrieval.executors import answer_sync, gather_sync
from langchain_graphrag_milvus.retrieval.graph_pipeline import PASSAGE_FIELDS, passage_document
from langchain_graphrag_milvus.retrieval.stages import RELATION_FIELDS
from langchain_graphrag_milvus.text.names import entity_id

from ..fakes import LexicalEmbeddings

TEXTS = {
    "ada": ("Ada Lovelace wrote the first program.", [["Ada Lovelace", "wrote", "the first program"]]),
    "babbage": ("Charles Babbage designed the Analytical Engine.", [["Charles Babbage", "designed", "the engine"]]),
    "menabrea": ("Menabrea described the engine in French.", [["Menabrea", "described", "the engine"]]),
}


@pytest.mark.parametrize("partitioned", [False, True], ids=["plain", "partition_key"])
def test_rows_from_the_passage_search_make_the_same_documents_as_fetched_rows(make_store, partitioned) -> None:
    store = make_store(LexicalEmbeddings(), **({"partition_key_field": "tenant"} if partitioned else {}))
    docs = [
        Document(
            id=pid,
            page_content=text,
            metadata={"triplets": triplets, "tenant": "a", "source": f"{pid}.txt", "year": 1843, "tags": ["x", pid]},
        )
        for pid, (text, triplets) in TEXTS.items()
    ]
    store.add_documents(docs)
    (vector,) = store.embedding.embed_documents(["Who wrote the first program?"])
    for filter_expr in (None, "tenant == 'a'"):
        (hits,) = store.search("passages", [vector], 10, filter_expr=filter_expr, output_fields=PASSAGE_FIELDS)
        rows = store.fetch("passages", [h.id for h in hits], PASSAGE_FIELDS, filter_expr=filter_expr)
        assert sorted(h.id for h in hits) == sorted(rows) == sorted(TEXTS)
        for h in hits:
            from_hit, fetched = passage_document(h.id, dict(h.fields)), passage_document(h.id, rows[h.id])
            assert from_hit == fetched and from_hit.metadata["year"] == 1843 and from_hit.metadata["tenant"] == "a"


class Spy:
    """Counts the store's Milvus reads and embedding calls (wrapping the real methods)."""

    def __init__(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, Any]] = []
        for name in ("search", "fetch"):
            real = getattr(store, name)

            def spy(kind: str, *args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
                self.calls.append((_name, kind))
                return _real(kind, *args, **kw)

            monkeypatch.setattr(store, name, spy)
        for name in ("asearch", "afetch"):
            areal = getattr(store, name)

            async def aspy(kind: str, *args: Any, _real: Any = areal, _name: str = name[1:], **kw: Any) -> Any:
                self.calls.append((_name, kind))
                return await _real(kind, *args, **kw)

            monkeypatch.setattr(store, name, aspy)
        embed = store.embedding.embed_documents

        def spy_embed(texts: list[str]) -> Any:
            self.calls.append(("embed", len(texts)))
            return embed(texts)

        monkeypatch.setattr(store.embedding, "embed_documents", spy_embed)


def no_held(store: Any, monkeypatch: Any) -> None:
    """The usual path: searches by Milvus (a store holding vectors answers them in the client: test_held_query.py)."""
    monkeypatch.setattr(store, "search_held", lambda searches: None)


def test_the_default_query_makes_one_embedding_call_and_two_searches(nano_store, monkeypatch) -> None:
    no_held(nano_store, monkeypatch)
    retriever = MilvusGraphRetriever(store=nano_store, k=2)
    want = retriever.invoke(NANO_QUESTION)  # warms the graph and the linker (their reads are not per query)
    spy = Spy(nano_store, monkeypatch)
    docs = retriever.invoke(NANO_QUESTION)
    assert docs == want
    # the linker's names are graph entities: only the query is embedded, no entity search;
    # relations and passages in one concurrent gather; a fetch only for passages the search did not bring
    assert spy.calls[0] == ("embed", 1)
    assert sorted(spy.calls[1:3]) == [("search", "passages"), ("search", "relations")]
    assert spy.calls[3:] in ([], [("fetch", "passages")])


def test_a_concurrent_gather_answers_like_one_by_one_calls(nano_store) -> None:
    (vector,) = nano_store.embedding.embed_documents([NANO_QUESTION])
    vec = tuple(vector)
    effects = (
        Search("entities", (vec, vec), 3),
        Search("relations", (vec,), 20, None, RELATION_FIELDS),
        Search("passages", (vec,), 4, None, PASSAGE_FIELDS),
        Fetch("passages", ("no such id",), PASSAGE_FIELDS),
    )
    one_by_one = [answer_sync(e, nano_store) for e in effects]
    for _ in range(5):
        assert gather_sync(effects, nano_store) == one_by_one
    bad = (effects[0], Search("passages", (vec,), 4, "no_such_field ==", PASSAGE_FIELDS), effects[1])
    with pytest.raises(InvalidFilterError):
        gather_sync(bad, nano_store)


def test_a_gather_embeds_in_the_calling_thread_and_links_beside_it(nano_store, monkeypatch) -> None:
    """The embedding (its model runs without the GIL) is the calling thread's; the linker's Python a pool thread's.

    The answers come back in the effects' order, like one-by-one calls; of two failures the first in order is raised.
    """
    threads: dict[str, threading.Thread] = {}
    embed, linker_for = nano_store.embedding.embed_documents, nano_store.entity_linker

    def spy_embed(texts: list[str]) -> Any:
        threads["embed"] = threading.current_thread()
        return embed(texts)

    def spy_linker(filter_expr: str | None = None) -> Any:
        threads["linker"] = threading.current_thread()
        return linker_for(filter_expr)

    monkeypatch.setattr(nano_store.embedding, "embed_documents", spy_embed)
    monkeypatch.setattr(nano_store, "entity_linker", spy_linker)
    effects = (LinkEntities(NANO_QUESTION, None), Embed((NANO_QUESTION,)), Embed(("Who taught Euler?",)))
    one_by_one = [answer_sync(e, nano_store) for e in effects]
    assert gather_sync(effects, nano_store) == one_by_one and one_by_one[0]
    assert threads["embed"] is threading.current_thread() or threads["embed"].name.startswith("graphrag-search")
    gather_sync(effects[:2], nano_store)
    assert threads["embed"] is threading.current_thread()
    assert threads["linker"] is not threading.current_thread()

    def broken_embed(texts: list[str]) -> Any:
        raise RuntimeError("the embedding failed")

    monkeypatch.setattr(nano_store.embedding, "embed_documents", broken_embed)
    with pytest.raises(InvalidFilterError):  # the linker's error: first in order, though the embedding failed first
        gather_sync((LinkEntities(NANO_QUESTION, "no_such_field =="), Embed((NANO_QUESTION,))), nano_store)
    with pytest.raises(RuntimeError, match="embedding failed"):
        gather_sync((LinkEntities(NANO_QUESTION, None), Embed((NANO_QUESTION,))), nano_store)


def test_no_relation_seeds_means_no_relation_search(nano_store, monkeypatch) -> None:
    """``ppr_relation_seeds=0``: one search (the passages'), sync and async, the same Documents."""
    no_held(nano_store, monkeypatch)
    explicit = MilvusGraphRetriever(store=nano_store, k=2, ppr_relation_seeds=0)
    want = explicit.invoke(NANO_QUESTION)
    spy = Spy(nano_store, monkeypatch)
    assert explicit.invoke(NANO_QUESTION) == want and len(want) == 2
    assert spy.calls[0] == ("embed", 1)
    assert spy.calls[1] == ("search", "passages")
    assert ("search", "relations") not in spy.calls and spy.calls[2:] in ([], [("fetch", "passages")])
    spy.calls.clear()
    assert asyncio.run(explicit.ainvoke(NANO_QUESTION)) == want
    assert ("search", "passages") in spy.calls and ("search", "relations") not in spy.calls
    spy.calls.clear()
    MilvusGraphRetriever(store=nano_store, k=2).invoke(NANO_QUESTION)  # the default searches relations
    assert ("search", "relations") in spy.calls


def test_relations_of_the_linked_entities_only(nano_store, monkeypatch) -> None:
    """``relation_scope="entities"``: the relation search is filtered to the linked entities' relations."""
    no_held(nano_store, monkeypatch)
    from langchain_graphrag_milvus.retrieval import graph_pipeline

    filters: list[str | None] = []
    real = nano_store.search

    def spy(kind: str, *args: Any, **kw: Any) -> Any:
        if kind == "relations":
            filters.append(kw.get("filter_expr"))
        return real(kind, *args, **kw)

    monkeypatch.setattr(nano_store, "search", spy)
    scoped = MilvusGraphRetriever(store=nano_store, k=2, relation_scope="entities", ppr_relation_seeds=50)
    names = nano_store.entity_linker().find(NANO_QUESTION)
    assert names  # the nano question names graph entities
    docs = scoped.invoke(NANO_QUESTION)
    assert len(docs) == 2 and len(filters) == 1 and filters[0] and filters[0].startswith("pk in")
    (vector,) = nano_store.embedding.embed_documents([NANO_QUESTION])
    (hits,) = real("relations", [vector], 50, filter_expr=filters[0], output_fields=("subject_id", "object_id"))
    linked = {entity_id(n) for n in names}
    assert hits and all(h.fields["subject_id"] in linked or h.fields["object_id"] in linked for h in hits)
    everything = real("relations", [vector], 50, output_fields=("subject_id", "object_id"))[0]
    assert len(everything) > len(hits)  # the filter did restrict the search
    # past PK_SCOPE_MAX relations the filter names the entities instead: the same hits
    monkeypatch.setattr(graph_pipeline, "PK_SCOPE_MAX", 0)
    assert scoped.invoke(NANO_QUESTION) == docs
    assert len(filters) == 2 and filters[1] and "subject_id in" in filters[1]
    (by_entity,) = real("relations", [vector], 50, filter_expr=filters[1], output_fields=("subject_id", "object_id"))
    assert [(h.id, h.fields) for h in by_entity] == [(h.id, h.fields) for h in hits]
    filters.pop()
    # a query that links no entity searches every relation
    filters.clear()
    scoped.invoke("zzzz qqqq")
    assert filters == [None]


def test_relation_settings_are_checked(nano_store) -> None:
    with pytest.raises(ValueError, match="ppr_relation_seeds"):
        MilvusGraphRetriever(store=nano_store, ppr_relation_seeds=-1)
    retriever = MilvusGraphRetriever(store=nano_store, k=2)
    with pytest.raises(ValueError, match="ppr_relation_seeds"):
        retriever.invoke(NANO_QUESTION, ppr_relation_seeds=-3)
    with pytest.raises(ValueError, match="relation_scope"):
        retriever.invoke(NANO_QUESTION, relation_scope="nearby")
    assert retriever.invoke(NANO_QUESTION, relation_scope="auto")
    assert retriever.invoke(NANO_QUESTION, ppr_relation_seeds=0, relation_scope="entities")


def test_auto_scope_filters_the_relation_search_on_large_graphs_only(nano_store, monkeypatch) -> None:
    no_held(nano_store, monkeypatch)
    from langchain_graphrag_milvus.retrieval import rankings

    filters: list[str | None] = []
    real = nano_store.search

    def spy(kind: str, *args: Any, **kw: Any) -> Any:
        if kind == "relations":
            filters.append(kw.get("filter_expr"))
        return real(kind, *args, **kw)

    monkeypatch.setattr(nano_store, "search", spy)
    auto = MilvusGraphRetriever(store=nano_store, k=2)
    assert auto.relation_scope == "auto"
    auto.invoke(NANO_QUESTION)
    assert filters == [None]  # a small graph: every relation
    monkeypatch.setattr(rankings, "AUTO_PUSH_RELATIONS", 1)  # as if the graph were large
    filters.clear()
    auto.invoke(NANO_QUESTION)
    MilvusGraphRetriever(store=nano_store, k=2, relation_scope="all").invoke(NANO_QUESTION)
    assert len(filters) == 2 and filters[0] and filters[0].startswith("pk in") and filters[1] is None
    filters.clear()
    asyncio.run(auto.ainvoke(NANO_QUESTION))
    assert filters == []  # async goes through asearch; the sync spy saw nothing
