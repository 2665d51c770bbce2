"""Finding a source's passages never truncates at Milvus' query window (it asks in halves, or raises)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.ingest.updates import passages_of_sources

from ..fakes import LexicalEmbeddings


def _docs(source: str, n: int) -> list[Document]:
    return [
        Document(
            id=f"{source}-{i}", page_content=f"{source} passage {i}", metadata={"source_id": source, "triplets": []}
        )
        for i in range(n)
    ]


def test_sources_filling_the_query_window_are_asked_in_halves_or_refused(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents(_docs("a", 3) + _docs("b", 3) + _docs("big", 5))
    context = store._ingest_context()

    # a and b together fill a window of 4 rows: the answer may be cut, so each is asked alone
    found = passages_of_sources(context, ["a", "b"], window=4)
    assert sorted(found) == [f"{s}-{i}" for s in "ab" for i in range(3)]
    # one source with as many passages as the window holds cannot be listed completely: refused
    with pytest.raises(GraphRAGError, match="'big' has 4 or more passages"):
        passages_of_sources(context, ["a", "big"], window=4)
    assert sorted(passages_of_sources(context, ["big"], window=6)) == [f"big-{i}" for i in range(5)]
    # the store's own deletes use Milvus' window: every passage of the source goes
    report = store.delete_documents(["big"])
    assert report.passages_deleted == 5 and store.counts()["passages"] == 6
