"""The compliance suite of the write seam (:class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites`).

Any backend runs it: subclass :class:`WriteSeamCompliance` and give it a fixture ``wseam``
returning a :class:`WriteCase`: the write and read seams of one store whose collections the
suite creates itself (through :meth:`StoreWrites.ensure_collections`), and the kinds the store
may write (an existing collection's passages are not its own). Every case writes rows under ids
of its own, so one store per backend serves them all, and reads what it wrote back through the
same backend's read seam: ``query`` with a ``pk in [...]`` filter built by :mod:`.expr` (a list:
a duplicated row shows twice), ``fetch`` (at the read consistency the writes leave) and ``counts``.
The cases check what is stored afterwards, not only that the calls succeed; each can fail (see
``tests/unit/test_write_compliance.py``, which runs them on a planted broken backend).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.errors import EmbeddingDimensionError, GraphRAGError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.schema import KINDS, Kind
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites

__all__ = ["HOSTILE_IDS", "WriteCase", "WriteSeamCompliance", "row"]

DIM = 8
#: Ids that an unescaped expression would break or widen, and their harmless neighbours.
HOSTILE_IDS = [
    'x" or pk != "',
    "x",
    'q"uote',
    "back\\slash",
    "back\\",
    "\\",
    '"',
    "tab\tnew\nline",
    "ünïcødé ✓ 中文 🙂",
    "zero\u200bwidth\u2028sep",
    "nul\x00byte",
    "pk in []",
]
#: Ids for hypothesis: any Unicode but lone surrogates, not blank (what ``ingest.identity.check_id`` accepts).
ANY_ID = st.text(
    st.sampled_from('"\\\' \n[],') | st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12
).filter(lambda s: bool(s.strip()))


def _vector(seed: str) -> list[float]:
    """A deterministic unit vector for a string (the contents do not matter to the writes)."""
    digest = hashlib.blake2b(seed.encode("utf-8", "surrogatepass"), digest_size=DIM).digest()
    raw = [float(b - 127) or 1.0 for b in digest]
    norm = sum(v * v for v in raw) ** 0.5
    return [v / norm for v in raw]


def row(kind: Kind, pk: str, text: str, partition_key: str | None = None) -> dict[str, Any]:
    """A valid row of ``kind`` (this package's schema) with id ``pk`` and text ``text``."""
    base: dict[str, Any] = {"pk": pk, "text": text, "vector": _vector(text)}
    if kind == "entities":
        return {**base, "synonym_ids": []}
    if kind == "relations":
        return {**base, "subject_id": "s" * 16, "object_id": "o" * 16, "predicate": text, "passage_ids": [pk]}
    extra = {partition_key: "tenant-a"} if partition_key else {}
    return {**base, "doc_hash": "h" * 16, "source_id": pk, **extra}


@dataclass
class WriteCase:
    """A backend under test.

    Attributes:
        writes: Its write seam (its collections made by the suite: ``ensure_collections(DIM)``).
        reads: The read seam of the same store.
        graph: What its guard keeps honest (the store's graph cache).
        kinds: The kinds it may write (the others must be refused).
        partition_key: The passages' partition key field, if any.
    """

    writes: StoreWrites
    reads: StoreReads
    graph: Any
    kinds: tuple[Kind, ...] = KINDS
    partition_key: str | None = None
    made: list[str] = field(default_factory=list)

    def ids(self, n: int, *, tag: str = "") -> list[str]:
        """``n`` fresh ids, unique to this call."""
        stem = uuid.uuid4().hex[:8]
        return [f"{tag}{stem}-{i:03d}" for i in range(n)]

    def rows(self, kind: Kind, ids: Sequence[str], text: str = "v1") -> list[dict[str, Any]]:
        """Rows of ``kind`` for these ids (text ``"<text> <id>"``)."""
        return [row(kind, pk, f"{text} {pk}", self.partition_key) for pk in ids]

    def stored(self, kind: Kind, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(id, text) of every stored row of these ids, duplicates included, sorted (a strongly consistent query)."""
        if not ids:
            return []
        rows = self.reads.query(kind, expr.in_list("pk", list(ids)), ("text",), limit=4 * len(ids) + 8)
        return sorted((r["pk"], r["text"]) for r in rows)


def _each_kind(case: WriteCase, check: Callable[[Kind], None]) -> None:
    for kind in case.kinds:
        check(kind)


class WriteSeamCompliance:
    """The cases; a subclass provides the ``wseam`` fixture."""

    # ------------------------------------------------------------------ collections
    def test_collections_open_with_their_dimension(self, wseam: WriteCase) -> None:
        assert wseam.writes.exists()
        assert wseam.writes.check_open() == DIM
        wseam.writes.ensure_collections(DIM)  # again: checked, kept
        assert wseam.writes.check_open() == DIM
        with pytest.raises(EmbeddingDimensionError):
            wseam.writes.ensure_collections(DIM + 1)
        assert isinstance(wseam.writes.location, str) and wseam.writes.location
        assert wseam.writes.partition_key_field == wseam.partition_key
        assert wseam.writes.stored_partition_key() == wseam.partition_key
        assert wseam.writes.tenant_rows() is (wseam.partition_key is not None)
        assert wseam.writes.fit_indexes() == []  # nothing to switch at this size

    # ------------------------------------------------------------------ rows
    def test_written_rows_read_back_exactly_once(self, wseam: WriteCase) -> None:
        def check(kind: Kind) -> None:
            before = wseam.reads.counts()[kind]
            ids = wseam.ids(7)
            wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=3)  # three requests
            assert wseam.stored(kind, ids) == sorted((pk, f"v1 {pk}") for pk in ids)
            got = wseam.reads.fetch(kind, ids, ("text", "vector"))
            assert set(got) == set(ids)
            for pk in ids:
                assert got[pk]["vector"] == pytest.approx(_vector(f"v1 {pk}"), abs=1e-6)
            assert wseam.reads.counts()[kind] == before + 7

        _each_kind(wseam, check)

    def test_an_upsert_replaces_and_never_duplicates(self, wseam: WriteCase) -> None:
        def check(kind: Kind) -> None:
            ids = wseam.ids(5)
            wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=10)
            before = wseam.reads.counts()[kind]
            extra = wseam.ids(2, tag="new")  # named in existing, never stored: written once all the same
            wseam.writes.write(kind, wseam.rows(kind, [*ids, *extra], "v2"), existing=[*ids, *extra], batch_size=2)
            assert wseam.stored(kind, [*ids, *extra]) == sorted((pk, f"v2 {pk}") for pk in [*ids, *extra])
            assert wseam.reads.counts()[kind] == before + 2
            got = wseam.reads.fetch(kind, ids[:1], ("vector",))
            assert got[ids[0]]["vector"] == pytest.approx(_vector(f"v2 {ids[0]}"), abs=1e-6)

        _each_kind(wseam, check)

    def test_deleting_missing_ids_is_a_no_op(self, wseam: WriteCase) -> None:
        def check(kind: Kind) -> None:
            ids = wseam.ids(3)
            wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=10)
            before = wseam.reads.counts()
            wseam.writes.delete(kind, [f"missing-{uuid.uuid4().hex}", *HOSTILE_IDS])
            wseam.writes.delete(kind, [])
            assert wseam.reads.counts() == before
            assert wseam.stored(kind, ids) == sorted((pk, f"v1 {pk}") for pk in ids)

        _each_kind(wseam, check)

    def test_a_delete_is_visible_to_the_next_read(self, wseam: WriteCase) -> None:
        def check(kind: Kind) -> None:
            ids = wseam.ids(6)
            wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=10)
            assert set(wseam.reads.fetch(kind, ids)) == set(ids)
            wseam.writes.delete(kind, ids[:4])
            assert set(wseam.reads.fetch(kind, ids)) == set(ids[4:])  # at the consistency the delete left
            assert wseam.stored(kind, ids) == sorted((pk, f"v1 {pk}") for pk in ids[4:])
            wseam.writes.write(kind, wseam.rows(kind, ids[:1], "back"), batch_size=10)  # written again after it
            got = {pk: r["text"] for pk, r in wseam.reads.fetch(kind, ids, ("text",)).items()}
            assert got == {ids[0]: f"back {ids[0]}", **{pk: f"v1 {pk}" for pk in ids[4:]}}

        _each_kind(wseam, check)

    def test_batches_larger_than_the_batch_size(self, wseam: WriteCase) -> None:
        kind = wseam.kinds[-1]
        before = wseam.reads.counts()[kind]
        ids = wseam.ids(23)
        wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=4)
        wseam.writes.write(kind, wseam.rows(kind, ids, "v2"), existing=ids, batch_size=4)
        assert wseam.stored(kind, ids) == sorted((pk, f"v2 {pk}") for pk in ids)
        missing = [f"gone-{i}" for i in range(1100)]  # more ids than one delete request takes
        wseam.writes.delete(kind, [*missing[:600], *ids[::2], *missing[600:]])
        assert wseam.stored(kind, ids) == sorted((pk, f"v2 {pk}") for pk in ids[1::2])
        assert wseam.reads.counts()[kind] == before + len(ids[1::2])

    # ------------------------------------------------------------------ ids are data
    def test_hostile_ids_are_written_and_deleted_exactly(self, wseam: WriteCase) -> None:
        def check(kind: Kind) -> None:
            tag = uuid.uuid4().hex[:6]
            ids = [f"{tag}{pk}" for pk in HOSTILE_IDS]
            wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=5)
            assert wseam.stored(kind, ids) == sorted((pk, f"v1 {pk}") for pk in ids)
            wseam.writes.write(kind, wseam.rows(kind, ids[:3], "v2"), existing=ids[:3], batch_size=5)
            assert len(wseam.stored(kind, ids)) == len(ids)
            hostile = [pk for pk in ids if '"' in pk or "\\" in pk]
            wseam.writes.delete(kind, hostile)
            kept = [pk for pk in ids if pk not in hostile]
            assert [pk for pk, _ in wseam.stored(kind, ids)] == sorted(kept)  # not one row more or less
            wseam.writes.delete(kind, kept)
            assert wseam.stored(kind, ids) == []

        _each_kind(wseam, check)

    def test_any_ids_round_trip(self, wseam: WriteCase) -> None:
        kind = wseam.kinds[0]

        @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(names=st.lists(ANY_ID, min_size=1, max_size=4, unique=True), gone=st.lists(st.booleans()))
        @example(names=['x" or pk != "', "x", "\\", '"'], gone=[True, False, True])
        def round_trip(names: list[str], gone: list[bool]) -> None:
            tag = uuid.uuid4().hex[:6]
            ids = [f"{tag}{n}" for n in names]
            wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=2)
            dropped = [pk for pk, drop in zip(ids, gone) if drop]
            wseam.writes.delete(kind, dropped)
            assert wseam.stored(kind, ids) == sorted((pk, f"v1 {pk}") for pk in ids if pk not in dropped)
            wseam.writes.delete(kind, ids)
            assert wseam.stored(kind, ids) == []

        round_trip()

    # ------------------------------------------------------------------ ownership and the guard
    def test_only_its_own_kinds_are_written(self, wseam: WriteCase) -> None:
        for kind in (k for k in KINDS if k not in wseam.kinds):
            with pytest.raises(GraphRAGError):
                wseam.writes.write(kind, [row(kind, "p1", "x")], batch_size=1)
            with pytest.raises(GraphRAGError):
                wseam.writes.delete(kind, ["p1"])
        if wseam.kinds == KINDS:
            pytest.skip("the store owns every kind")

    def test_writes_inside_the_guard(self, wseam: WriteCase) -> None:
        kind = wseam.kinds[0]
        ids = wseam.ids(2)
        with wseam.writes.guard(wseam.graph):
            with wseam.writes.guard(wseam.graph):  # re-entrant: an upsert deletes, then ingests
                assert wseam.writes.keep_lease() is False  # held since the guard began (or none to hold)
                wseam.writes.write(kind, wseam.rows(kind, ids), batch_size=1)
            wseam.writes.delete(kind, ids[:1])
        assert [pk for pk, _ in wseam.stored(kind, ids)] == ids[1:]
