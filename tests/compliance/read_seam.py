"""The compliance suite of the read seam (:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads`).

Any backend runs it: subclass :class:`ReadSeamCompliance` and give it a fixture ``seam``
returning a :class:`SeamCase`, the reads of a store that holds :data:`PASSAGES` (ids as
given, or the backend's own keys) with their triplets indexed, and nothing else (as
datastax graph-rag's ``testing/adapter_tests.py`` does for its adapters). The cases check
what comes back (ids, fields, scores, missing ids, filters escaped by :mod:`.expr`, empty
inputs, typed errors), not only that the calls succeed. The reads are only read: one store
per backend serves every case.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus.errors import EmbeddingDimensionError, GraphRAGError, InvalidFilterError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.read_seam import Hit, StoreReads
from langchain_graphrag_milvus.text.names import entity_id, relation_id

__all__ = ["PASSAGES", "SeamCase", "ReadSeamCompliance"]

#: (id, text, metadata, triplets): ids with a quote and a backslash, a source with both; "z-last"
#: sorts last so a scan's single page ends on a key pymilvus can page past.
PASSAGES: list[tuple[str, str, dict[str, Any], list[list[str]]]] = [
    (
        "p-plain",
        "Ada Lovelace wrote the first program for the Analytical Engine.",
        {"source": "notes/ada.txt", "year": 1843},
        [["Ada Lovelace", "wrote a program for", "Analytical Engine"]],
    ),
    (
        'p"quote',
        "Charles Babbage designed the Analytical Engine in London.",
        {"source": 'notes/"babbage".txt', "year": 1837},
        [["Charles Babbage", "designed", "Analytical Engine"]],
    ),
    (
        "p\\back",
        "Alan Turing described the universal machine in Cambridge.",
        {"source": "notes\\turing.txt", "year": 1936},
        [["Alan Turing", "described", "universal machine"]],
    ),
    (
        "z-last",
        "Grace Hopper wrote the first compiler for the Harvard Mark I.",
        {"source": "notes/hopper.txt", "year": 1952},
        [["Grace Hopper", "wrote", "first compiler"], ["Grace Hopper", "worked on", "Harvard Mark I"]],
    ),
]
ENTITIES = sorted({name for *_, triplets in PASSAGES for t in triplets for name in (t[0], t[2])})
RELATIONS = [relation_id(*t) for *_, triplets in PASSAGES for t in triplets]
HOSTILE = 'x" or year > 0 or source == "'  # unescaped, this would widen a filter to every row


@dataclass
class SeamCase:
    """A backend under test.

    Attributes:
        reads: Its read seam, over a store holding :data:`PASSAGES`.
        embedding: The model the store was filled with.
        ids: The stored id of each passage of :data:`PASSAGES`, in order (the given ids, or the backend's keys).
        pages_any_key: The backend's scans page past any key (else a page ending on a quoted key must raise).
    """

    reads: StoreReads
    embedding: Embeddings
    ids: list[str]
    #: True if the backend pages a scan past any key (Milvus cannot page past a quote: pymilvus' iterator).
    pages_any_key: bool = False

    @property
    def string_keys(self) -> bool:
        """True if the passages are stored under the given ids (quotes and backslashes included)."""
        return self.ids == [p[0] for p in PASSAGES]

    def by_year(self, year: int) -> str:
        """The stored id of the passage of ``year``."""
        return next(pid for pid, (_, _, meta, _) in zip(self.ids, PASSAGES) if meta["year"] == year)

    def vector(self, text: str) -> list[float]:
        """The query vector of ``text``."""
        return self.embedding.embed_query(text)


def _scores_descend(hits: Sequence[Hit]) -> bool:
    return all(a.score >= b.score - 1e-6 for a, b in zip(hits, hits[1:]))


class ReadSeamCompliance:
    """The cases; a subclass provides the ``seam`` fixture (a :class:`SeamCase`)."""

    # ------------------------------------------------------------------ fetch
    def test_fetch_returns_each_stored_id_once_and_leaves_missing_ids_out(self, seam: SeamCase) -> None:
        asked = [*seam.ids, "missing", seam.ids[0], "", 'nope" or pk != "']
        rows = seam.reads.fetch("passages", asked, ("text",))
        assert sorted(rows) == sorted(seam.ids)
        for pid, (_, text, _, _) in zip(seam.ids, PASSAGES):
            assert rows[pid]["pk"] == pid and rows[pid]["text"] == text
            assert "vector" not in rows[pid]

    def test_fetch_all_fields_holds_the_metadata(self, seam: SeamCase) -> None:
        rows = seam.reads.fetch("passages", seam.ids, None)
        for pid, (_, text, meta, _) in zip(seam.ids, PASSAGES):
            assert rows[pid]["text"] == text
            assert rows[pid]["source"] == meta["source"] and rows[pid]["year"] == meta["year"]
            assert "vector" not in rows[pid]

    def test_fetch_inside_a_filter_and_on_empty_input(self, seam: SeamCase) -> None:
        babbage = seam.by_year(1837)
        where = expr.eq_filter({"source": 'notes/"babbage".txt'})
        assert list(seam.reads.fetch("passages", seam.ids, ("text",), filter_expr=where)) == [babbage]
        hostile = expr.eq_filter({"source": HOSTILE})
        assert seam.reads.fetch("passages", seam.ids, filter_expr=hostile) == {}
        assert seam.reads.fetch("passages", []) == {}
        assert seam.reads.fetch("entities", iter([])) == {}
        with pytest.raises(TypeError):
            seam.reads.fetch("passages", seam.ids[0])

    def test_fetch_graph_rows_by_their_ids(self, seam: SeamCase) -> None:
        ids = [entity_id(name) for name in ENTITIES]
        entities = seam.reads.fetch("entities", [*ids, entity_id("Nobody")], ("text",))
        assert {row["text"] for row in entities.values()} == set(ENTITIES) and sorted(entities) == sorted(ids)
        relations = seam.reads.fetch("relations", RELATIONS, ("subject_id", "object_id", "passage_ids"))
        assert sorted(relations) == sorted(RELATIONS)
        for pid, (*_, triplets) in zip(seam.ids, PASSAGES):
            for s, p, o in triplets:
                row = relations[relation_id(s, p, o)]
                assert (row["subject_id"], row["object_id"]) == (entity_id(s), entity_id(o))
                assert [str(x) for x in row["passage_ids"]] == [pid]

    def test_afetch_answers_as_fetch(self, seam: SeamCase) -> None:
        where = expr.eq_filter({"year": 1952})
        sync = seam.reads.fetch("passages", [*seam.ids, "missing"], ("text",), filter_expr=where)
        got = asyncio.run(seam.reads.afetch("passages", [*seam.ids, "missing"], ("text",), filter_expr=where))
        assert got == sync and list(got) == [seam.by_year(1952)]
        assert asyncio.run(seam.reads.afetch("relations", [])) == {}

    # ------------------------------------------------------------------ search
    def test_search_ranks_the_passage_itself_first(self, seam: SeamCase) -> None:
        texts = [text for _, text, _, _ in PASSAGES]
        per_query = seam.reads.search("passages", [seam.vector(t) for t in texts], 3, output_fields=("text",))
        assert len(per_query) == len(texts)
        for pid, text, hits in zip(seam.ids, texts, per_query):
            assert len(hits) == 3 and len({h.id for h in hits}) == 3 and _scores_descend(hits)
            assert hits[0].id == pid and hits[0].fields["text"] == text
            assert hits[0].score == pytest.approx(1.0, abs=1e-3)  # a similarity, whatever the metric
            assert all(isinstance(h.id, str) and h.id in seam.ids for h in hits)

    def test_search_inside_a_filter_and_on_empty_input(self, seam: SeamCase) -> None:
        vector = seam.vector(PASSAGES[0][1])
        where = expr.in_list("source", ["notes\\turing.txt", 'notes/"babbage".txt'])
        (hits,) = seam.reads.search("passages", [vector], 10, filter_expr=where)
        assert sorted(h.id for h in hits) == sorted([seam.by_year(1837), seam.by_year(1936)])
        (none,) = seam.reads.search("passages", [vector], 10, filter_expr=expr.eq_filter({"source": HOSTILE}))
        assert none == []
        assert seam.reads.search("passages", [], 5) == []
        assert seam.reads.search("passages", [vector, vector], 0) == [[], []]
        with pytest.raises(EmbeddingDimensionError):
            seam.reads.search("passages", [[*vector, 0.0]], 2)
        with pytest.raises(InvalidFilterError):
            seam.reads.search("passages", [vector], 2, filter_expr="year >>> 1")

    def test_search_graph_rows(self, seam: SeamCase) -> None:
        (hits,) = seam.reads.search("entities", [seam.vector("Grace Hopper")], 2, output_fields=("text",))
        assert hits[0].id == entity_id("Grace Hopper") and hits[0].fields["text"] == "Grace Hopper"
        where = expr.eq_filter({"subject_id": entity_id("Grace Hopper")})
        (rels,) = seam.reads.search("relations", [seam.vector("Grace Hopper wrote")], 10, filter_expr=where)
        assert sorted(h.id for h in rels) == sorted(RELATIONS[-2:])

    def test_asearch_answers_as_search(self, seam: SeamCase) -> None:
        vectors = [seam.vector(PASSAGES[1][1]), seam.vector("universal machine")]
        sync = seam.reads.search("passages", vectors, 2, output_fields=("text",))
        got = asyncio.run(seam.reads.asearch("passages", vectors, 2, output_fields=("text",)))
        assert [[h.id for h in hits] for hits in got] == [[h.id for h in hits] for hits in sync]
        assert [h.fields["text"] for h in got[0]] == [h.fields["text"] for h in sync[0]]
        assert got[0][0].score == pytest.approx(sync[0][0].score, abs=1e-5)

    # ------------------------------------------------------------------ query
    def test_query_by_filter_returns_ids_and_fields(self, seam: SeamCase) -> None:
        where = expr.in_list("source", ['notes/"babbage".txt', "notes\\turing.txt", "missing"])
        rows = seam.reads.query("passages", where, ("text", "year"))
        expected = [(seam.by_year(1837), 1837), (seam.by_year(1936), 1936)]
        assert sorted((r["pk"], r["year"]) for r in rows) == sorted(expected)
        texts = {pid: text for pid, (_, text, _, _) in zip(seam.ids, PASSAGES)}
        assert all(r["text"] == texts[r["pk"]] for r in rows)
        entities = seam.reads.query("entities", expr.in_list("pk", [entity_id("Alan Turing")]), ("text",))
        assert [(r["pk"], r["text"]) for r in entities] == [(entity_id("Alan Turing"), "Alan Turing")]

    def test_query_limit_escaping_and_errors(self, seam: SeamCase) -> None:
        assert sorted(r["pk"] for r in seam.reads.query("passages", "year > 0", ())) == sorted(seam.ids)
        assert len(seam.reads.query("passages", "year > 0", (), limit=2)) == 2
        assert seam.reads.query("passages", "year > 0", (), limit=0) == []
        assert seam.reads.query("passages", expr.eq_filter({"source": HOSTILE}), ("text",)) == []
        assert seam.reads.query("passages", expr.eq_filter({"year": 1700}), ("text",)) == []
        with pytest.raises(InvalidFilterError):
            seam.reads.query("passages", "year >>> 1", ())

    # ------------------------------------------------------------------ scans and counts
    def test_iterate_yields_every_row_with_its_fields(self, seam: SeamCase) -> None:
        relations = list(seam.reads.iterate("relations", ("subject_id", "object_id")))
        assert sorted(r["pk"] for r in relations) == sorted(RELATIONS)
        assert {r["subject_id"] for r in relations} | {r["object_id"] for r in relations} == {
            entity_id(n) for n in ENTITIES
        }
        where = expr.eq_filter({"subject_id": entity_id("Grace Hopper")})
        assert sorted(r["pk"] for r in seam.reads.iterate("relations", (), filter_expr=where)) == sorted(RELATIONS[-2:])
        names = {r["pk"]: r["text"] for r in seam.reads.iterate("entities", ("text",), 3)}  # several pages
        assert names == {entity_id(n): n for n in ENTITIES}
        passages = {r["pk"]: r["text"] for r in seam.reads.iterate("passages", ("text",))}
        assert passages == {pid: text for pid, (_, text, _, _) in zip(seam.ids, PASSAGES)}

    def test_iterate_never_pages_past_a_key_it_cannot_quote(self, seam: SeamCase) -> None:
        if not seam.string_keys:
            pytest.skip("the backend's own keys hold no quotes")
        if seam.pages_any_key:
            assert len(list(seam.reads.iterate("passages", ("text",), 1))) == len(PASSAGES)
            return
        with pytest.raises(GraphRAGError, match="cannot be paged"):
            list(seam.reads.iterate("passages", ("text",), 1))

    def test_counts_are_exact(self, seam: SeamCase) -> None:
        assert seam.reads.counts() == {"entities": len(ENTITIES), "relations": len(RELATIONS), "passages": 4}

    def test_matching_passage_values(self, seam: SeamCase) -> None:
        later = "year >= 1900"
        matched = seam.reads.matching_passage_values([*seam.ids, "missing"], later, "year")
        assert sorted(matched) == sorted([(seam.by_year(1936), 1936), (seam.by_year(1952), 1952)])
        quoted = expr.eq_filter({"source": 'notes/"babbage".txt'})
        assert seam.reads.matching_passage_values(seam.ids, quoted) == [(seam.by_year(1837), None)]
        assert seam.reads.matching_passage_values(seam.ids, expr.eq_filter({"source": HOSTILE})) == []
        assert seam.reads.matching_passage_values([], later) == []
