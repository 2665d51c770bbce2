"""Both compliance suites on the in-memory reference backend, and the write suite failing on planted broken ones.

The memory backend (``tests/compliance/memory.py``) passes every case of the read and the write
suite: the protocols ask nothing a non-Milvus store cannot give. Each broken writer below breaks
one rule of :class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites`, and the case
written for that rule fails on it (so the suite can fail; the same suite passes on Lite and on the
server, ``tests/integration/test_write_seam.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from langchain_graphrag_milvus.errors import InvalidFilterError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.text.names import entity_id, relation_id

from ..compliance.memory import MemoryBackend, MemoryReads, MemoryWrites, compile_filter
from ..compliance.read_seam import PASSAGES, ReadSeamCompliance, SeamCase
from ..compliance.write_seam import DIM, WriteCase, WriteSeamCompliance
from ..fakes import LexicalEmbeddings


def _filled() -> SeamCase:
    """A memory store holding the read suite's passages and their triplets (rows as the ingest writes them)."""
    embedding = LexicalEmbeddings()
    backend = MemoryBackend()
    writes = MemoryWrites(backend)
    writes.ensure_collections(embedding.size)
    entities: dict[str, dict[str, Any]] = {}
    relations: list[dict[str, Any]] = []
    passages = []
    for pid, text, meta, triplets in PASSAGES:
        passages.append({"pk": pid, "text": text, "vector": embedding.embed_query(text), "source_id": pid, **meta})
        for s, p, o in triplets:
            for name in (s, o):
                entities[name] = {"pk": entity_id(name), "text": name, "vector": embedding.embed_query(name)}
            relations.append({
                "pk": relation_id(s, p, o), "text": f"{s} {p} {o}", "vector": embedding.embed_query(f"{s} {p} {o}"),
                "subject_id": entity_id(s), "object_id": entity_id(o), "predicate": p, "passage_ids": [pid],
            })  # fmt: skip
    writes.write("entities", list(entities.values()), batch_size=3)
    writes.write("relations", relations, batch_size=3)
    writes.write("passages", passages, batch_size=3)
    return SeamCase(MemoryReads(backend), embedding, [p[0] for p in PASSAGES], pages_any_key=True)


@pytest.fixture(scope="module")
def seam() -> SeamCase:
    return _filled()


class TestReadSeamInMemory(ReadSeamCompliance):
    """The read suite on the memory backend."""


def _case(writes_class: type[MemoryWrites] = MemoryWrites) -> WriteCase:
    backend = MemoryBackend()
    writes = writes_class(backend)
    writes.ensure_collections(DIM)
    return WriteCase(writes, MemoryReads(backend), graph=None)


@pytest.fixture(scope="module")
def wseam() -> WriteCase:
    return _case()


class TestWriteSeamInMemory(WriteSeamCompliance):
    """The write suite on the memory backend."""


# ---------------------------------------------------------------------- planted broken writers
class AppendingWrites(MemoryWrites):
    """Never replaces: an upsert adds a second row."""

    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        self.backend.rows[kind] += [dict(r) for r in rows]


class FirstBatchWrites(MemoryWrites):
    """Writes the first batch only."""

    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        super().write(kind, rows[:batch_size], existing=existing, batch_size=batch_size)


class UnescapedDeleteWrites(MemoryWrites):
    """Deletes through an expression pasted from the raw ids (pymilvus' ``delete(ids=...)``)."""

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        test = compile_filter("pk in [" + ", ".join(f'"{i}"' for i in ids) + "]")
        self.backend.rows[kind] = [r for r in self.backend.rows[kind] if not test(r)]


class LateDeleteWrites(MemoryWrites):
    """Applies a delete only at the next write (a read in between still sees the rows)."""

    pending: list[tuple[Kind, Sequence[str]]]

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        self.__dict__.setdefault("pending", []).append((kind, list(ids)))

    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        for k, ids in self.__dict__.pop("pending", []):
            super().delete(k, ids)
        super().write(kind, rows, existing=existing, batch_size=batch_size)


class StrictDeleteWrites(MemoryWrites):
    """Refuses to delete an id that is not stored."""

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        stored = {r["pk"] for r in self.backend.rows[kind]}
        missing = [i for i in ids if i not in stored]
        if missing:
            raise KeyError(missing[0])
        super().delete(kind, ids)


@pytest.mark.parametrize(
    ("broken", "case"),
    [
        (AppendingWrites, "test_an_upsert_replaces_and_never_duplicates"),
        (FirstBatchWrites, "test_batches_larger_than_the_batch_size"),
        (FirstBatchWrites, "test_written_rows_read_back_exactly_once"),
        (UnescapedDeleteWrites, "test_hostile_ids_are_written_and_deleted_exactly"),
        (UnescapedDeleteWrites, "test_any_ids_round_trip"),
        (LateDeleteWrites, "test_a_delete_is_visible_to_the_next_read"),
        (StrictDeleteWrites, "test_deleting_missing_ids_is_a_no_op"),
    ],
)
def test_a_planted_broken_writer_fails_its_case(broken: type[MemoryWrites], case: str) -> None:
    suite = WriteSeamCompliance()
    getattr(suite, case)(_case())  # the case passes on the reference backend
    with pytest.raises((AssertionError, InvalidFilterError, KeyError)):
        getattr(suite, case)(_case(broken))


@pytest.mark.parametrize(
    ("text", "row", "expected"),
    [
        (expr.in_list("pk", ['a"b', "c\\d"]), {"pk": 'a"b'}, True),
        (expr.in_list("pk", ['a"b', "c\\d"]), {"pk": "c\\d"}, True),
        (expr.in_list("pk", ['x" or pk != "']), {"pk": "y"}, False),
        (expr.eq_filter({"source": "s\n", "year": 3}), {"source": "s\n", "year": 3}, True),
        ("(year >= 1900) and not (year == 1952)", {"year": 1936}, True),
        ("year > 0 or missing == 1", {"year": -1}, False),
        ("pk not in []", {"pk": "a"}, True),
    ],
)
def test_the_memory_filter_reads_what_expr_writes(text: str, row: dict[str, Any], expected: bool) -> None:
    assert compile_filter(text)(row) is expected


@pytest.mark.parametrize("bad", ["year >>> 1", "pk in [", '"a" == pk', "year == ", "(year > 1", "year = 1"])
def test_the_memory_filter_refuses_what_it_cannot_parse(bad: str) -> None:
    with pytest.raises(InvalidFilterError):
        compile_filter(bad)
