"""An ingest reads each stored relation of a chunk once, even when the relation gains passage links."""

from __future__ import annotations

from langchain_core.documents import Document

from ..fakes import LexicalEmbeddings


def test_relations_gaining_links_are_fetched_once(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings())
    first = Document(id="d1", page_content="Ada met Bob.", metadata={"triplets": [["Ada", "met", "Bob"]]})
    store.add_documents([first])
    fetched: list[tuple[str, tuple[str, ...] | None]] = []
    real = store._reads.fetch

    def spy(kind, ids, output_fields=("pk",), **kwargs):
        fetched.append((kind, None if output_fields is None else tuple(output_fields)))
        return real(kind, ids, output_fields, **kwargs)

    monkeypatch.setattr(store._reads, "fetch", spy)
    report = store.add_documents(
        [Document(id="d2", page_content="Ada met Bob again.", metadata={"triplets": [["Ada", "met", "Bob"]]})]
    )
    assert report.relations_linked == 1 and report.relations_added == 0
    assert [f for f in fetched if f[0] == "relations"] == [
        ("relations", ("text", "vector", "subject_id", "object_id", "predicate", "passage_ids"))
    ]  # one read of the full rows: the relinked row is written from it
    (row,) = store.iterate("relations", ("passage_ids",))
    assert list(row["passage_ids"]) == ["d1", "d2"]
