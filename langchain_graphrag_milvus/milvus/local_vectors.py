"""Entity and relation vectors held in the client, so a search over them needs no Milvus round trip.

Milvus Lite (the embedded default) answers every search by brute force, about 6 µs a row
(measured: 152 ms for musique100's 28,871 relations, 79 ms for its 21,260 entities), where
one matrix product here takes 2–3 ms. :class:`LocalVectors` keeps, per kind, a
:class:`VectorTable` (sorted uint64 keys, float32 rows) **in step with the graph**: the rows
a kind must hold are the graph's relations and the store's entities (the keys of what Milvus
holds, kept current by the graph cache), and a table is checked against them whenever the
graph changed. A relation's or entity's key is a hash of its text, so its vector never
changes while its key lives: what a table lacks comes from the rows this process wrote
(:meth:`LocalVectors.offer`), else is read from Milvus by key; what the graph lost is dropped.
The tables are saved with the graph index (:mod:`.graph_saved`) and memory-mapped on load.

Only an unfiltered search is answered here, with the index's metric (``COSINE`` or ``IP``)
over every row, as a ``FLAT`` index would (:mod:`.exact`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from langchain_graphrag_milvus.graph.ids import canonical_keys, find_keys, ids_to_keys, keys_to_ids
from langchain_graphrag_milvus.milvus.local_fields import encode_fields
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.text.strings import StringArray

__all__ = [
    "LOCAL_KINDS",
    "AUTO_MAX_ROWS",
    "FETCH_MAX",
    "VectorTable",
    "LocalVectors",
    "LocalMode",
    "IncompleteRead",
    "NowhereToKeep",
    "local_vectors_for",
]

#: The kinds whose vectors may be held here (passages are searched with the user's filters, in Milvus).
LOCAL_KINDS: tuple[Kind, ...] = ("entities", "relations")
#: Under ``local_search="auto"``, most rows of a kind held here (≈1.5 KiB each at 384 dimensions).
AUTO_MAX_ROWS = 300_000
#: Most missing rows a check reads by key; more (e.g. a store saved before vectors were) are read in one scan.
FETCH_MAX = 4096

logger = logging.getLogger("langchain_graphrag_milvus")

LocalMode = Literal["auto", "on", "off"]


@dataclass(frozen=True)
class VectorTable:
    """Rows of one kind: ``keys`` (uint64, sorted, unique) and ``matrix`` (float32, one row per key).

    Under ``COSINE`` the rows are stored at unit length, so every search is one matrix product.
    """

    keys: np.ndarray
    matrix: np.ndarray
    #: The rows' output fields (:mod:`.local_fields`, one JSON array each), if held; else hits are read by key.
    fields: StringArray | None = None
    #: Relations: the checksum of each row's passage ids (:func:`.local_fields.links_checksum`).
    links: np.ndarray | None = None

    @classmethod
    def build(
        cls,
        keys: np.ndarray,
        matrix: np.ndarray,
        cosine: bool,
        fields: StringArray | None = None,
        links: np.ndarray | None = None,
    ) -> VectorTable:
        """A table of these rows (any order; a key given twice keeps its last row)."""
        keys = np.asarray(keys, np.uint64)
        matrix = np.asarray(matrix, np.float32)
        if cosine and len(matrix):
            matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), np.float32(1e-30))
        rev = len(keys) - 1 - np.unique(keys[::-1], return_index=True)[1]  # each key's last row, keys sorted
        return cls(
            keys[rev],
            np.ascontiguousarray(matrix[rev]),
            fields.take(rev) if fields is not None else None,
            np.asarray(links, np.uint64)[rev] if links is not None else None,
        )

    def subset(self, mask: np.ndarray) -> VectorTable:
        """The rows where ``mask`` is True."""
        at = np.flatnonzero(mask)
        fields = self.fields.take(at) if self.fields is not None else None
        return VectorTable(self.keys[at], self.matrix[at], fields, self.links[at] if self.links is not None else None)

    @staticmethod
    def concat(parts: Sequence[VectorTable]) -> VectorTable:
        """The rows of all ``parts`` in order (not deduplicated; fields only if every part holds them)."""
        keys = np.concatenate([p.keys for p in parts])
        matrix = np.concatenate([p.matrix for p in parts])
        fields: StringArray | None = None
        links: np.ndarray | None = None
        if all(p.fields is not None for p in parts):
            fields = StringArray.empty()
            for p in parts:
                assert p.fields is not None
                fields = fields.concat(p.fields)
            if all(p.links is not None for p in parts):
                links = np.concatenate([p.links for p in parts if p.links is not None])
        return VectorTable(keys, matrix, fields, links)

    @classmethod
    def empty(cls) -> VectorTable:
        """A table of no rows."""
        return cls(np.zeros(0, np.uint64), np.zeros((0, 0), np.float32))

    @property
    def dim(self) -> int:
        """Vector dimension (0 for a table built from no rows)."""
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0

    def positions(self, ids: Sequence[str]) -> np.ndarray | None:
        """Row positions of these ids (once each), or None if the table lacks one (or one is not our id).

        Our ids are exactly 16 lowercase hex digits: another spelling of a key (``"0x…"``, upper
        case, ``_``, spaces) is another primary key to Milvus, which no row of the table holds.
        """
        try:
            parsed = canonical_keys(ids)
        except TypeError:
            return None
        if parsed is None:
            return None
        at = find_keys(self.keys, np.unique(parsed))
        if len(at) and int(at.min()) < 0:
            return None
        return at

    def top(
        self, queries: np.ndarray, limit: int, cosine: bool, rows: np.ndarray | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query, the row positions of its ``limit`` best rows and their scores, best first.

        ``rows``: only these row positions are scored (a search restricted to some keys).
        """
        queries = np.asarray(queries, np.float32)
        if cosine:
            queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), np.float32(1e-30))
        matrix = self.matrix if rows is None else self.matrix[rows]
        place = np.arange(len(self.keys)) if rows is None else np.asarray(rows, np.int64)
        out = []
        for query in queries:
            # one thread's SIMD loop: on a busy machine twice as fast as BLAS' threads (3.9 vs 8 ms p50, 29k rows)
            row = np.einsum("ij,j->i", matrix, query) if len(place) else np.zeros(0, np.float32)
            n = min(int(limit), len(row))
            best = np.argpartition(-row, n - 1)[:n] if 0 < n < len(row) else np.arange(len(row))
            best = best[np.lexsort((self.keys[place[best]], -row[best]))]  # by score, ties by key: deterministic
            out.append((place[best[:n]], row[best[:n]]))
        return out

    def synced(
        self,
        target: np.ndarray,
        offered: Sequence[VectorTable],
        fetch: Callable[[np.ndarray], VectorTable],
        target_links: np.ndarray | None = None,
    ) -> VectorTable:
        """This table holding exactly the ``target`` keys: rows it lacks from ``offered``, then ``fetch``.

        ``target_links`` (aligned with ``target``): the graph's passage-id checksum of each
        relation; a held row whose fields disagree with it is read again with the missing ones.
        """
        target = np.asarray(target, np.uint64)
        parts = [self, *offered]
        have = np.unique(np.concatenate([p.keys for p in parts])) if parts else np.zeros(0, np.uint64)
        missing = np.setdiff1d(target, have, assume_unique=False)
        stale = _stale(parts, target, target_links)
        if not offered and not len(missing) and not len(stale) and len(self.keys) == len(np.unique(target)):
            return self  # nothing changed (a saved table stays memory-mapped)
        if len(stale):
            parts = [p.subset(~np.isin(p.keys, stale)) for p in parts]
            missing = np.union1d(missing, stale)
        if len(missing):
            fetched = fetch(missing)
            if len(np.setdiff1d(missing, fetched.keys)):
                raise IncompleteRead(f"{len(np.setdiff1d(missing, fetched.keys))} rows were not found")
            # (a row read whose passage ids the graph does not match yet is Milvus' row: kept, read again next time)
            parts.append(fetched)
        # only rows of the target count (a stale table of another dimension must not block the check)
        parts = [p.subset(m) for p in parts if (m := np.isin(p.keys, target)).any()]
        if not parts:
            return VectorTable.empty()
        dims = {p.dim for p in parts}
        if len(dims) != 1:
            raise IncompleteRead(f"rows of different dimensions {sorted(dims)}")
        merged = VectorTable.concat(parts)
        return VectorTable.build(merged.keys, merged.matrix, False, merged.fields, merged.links)  # normalised


def _stale(parts: Sequence[VectorTable], target: np.ndarray, target_links: np.ndarray | None) -> np.ndarray:
    """Keys whose last holder in ``parts`` has a passage-id checksum other than the target's, or none.

    A key's last holder decides, as :meth:`VectorTable.build` keeps each key's last row: a relation
    a write linked to one more passage is offered again with its new links, and its older copy
    (the table's, or an earlier offer) is then replaced, not read again from Milvus.
    """
    if target_links is None or not len(target):
        return np.zeros(0, np.uint64)
    order = np.argsort(target, kind="stable")
    sorted_target, sorted_links = target[order], np.asarray(target_links, np.uint64)[order]
    out = []
    later = np.zeros(0, np.uint64)  # keys held by a later part
    for p in reversed(parts):
        if not len(p.keys):
            continue
        last = ~np.isin(p.keys, later)
        keys = p.keys[last]
        later = np.union1d(later, p.keys)
        if p.links is None:  # held without fields (e.g. saved before they were): read again
            out.append(keys[np.isin(keys, target)])
            continue
        at = np.minimum(np.searchsorted(sorted_target, keys), len(sorted_target) - 1)
        known = sorted_target[at] == keys
        out.append(keys[known & (sorted_links[at] != p.links[last])])
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.uint64)


class LocalVectors:
    """The tables of one store's entities and relations, kept in step with its graph (owned by the graph cache).

    Args:
        cosine: Whether the index's metric is ``COSINE`` (else ``IP``).
        max_rows: Most rows of a kind held here (``None``: no limit).
    """

    def __init__(self, *, cosine: bool = True, max_rows: int | None = AUTO_MAX_ROWS) -> None:
        self.cosine = cosine
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._build = threading.Lock()  # one check at a time: two would read the same rows
        self._tables: dict[Kind, tuple[object, VectorTable]] = {}
        self._offered: dict[Kind, list[VectorTable]] = {kind: [] for kind in LOCAL_KINDS}
        #: Per kind, the source a check could not hold (:class:`NowhereToKeep`): not checked again until it changes.
        self._refused: dict[Kind, object] = {}
        self._warned: set[Kind] = set()

    def offer(self, kind: Kind, rows: Iterable[Mapping[str, Any]]) -> None:
        """Rows this process wrote (``pk``, ``vector``, held fields): used by the next check instead of a read."""
        if kind not in LOCAL_KINDS:
            return
        rows = [r for r in rows if r.get("vector") is not None]
        if not rows:
            return
        keys = ids_to_keys([r["pk"] for r in rows])
        held = encode_fields(kind, rows)
        fields, links = held if held is not None else (None, None)
        table = VectorTable.build(keys, np.asarray([r["vector"] for r in rows], np.float32), self.cosine, fields, links)
        with self._lock:
            offered = self._offered[kind]
            if self.max_rows is not None and sum(len(t.keys) for t in offered) + len(keys) > self.max_rows:
                offered.clear()  # more than a table may hold: the check will search Milvus instead
                return
            offered.append(table)

    def table(self, kind: Kind, source: object, target: Target, fetch: Fetcher) -> VectorTable | None:
        """The table of ``kind`` holding exactly the ``target()`` keys (``source``: the state they come from).

        ``target()`` returns the keys, or the keys and (relations) the checksums of their
        passage ids in the graph (rows held with other passage ids are read again).

        Checked again only when ``source`` (the graph or the names) is another object than at the
        last check. None when the kind holds more than ``max_rows`` rows, or a read fails: the
        caller searches Milvus.
        """
        cached = self._tables.get(kind)
        if cached is not None and cached[0] is source:
            return cached[1]
        if self._refused.get(kind) is source:  # this state cannot be held: Milvus answers, nothing is read again
            return None
        with self._build:
            return self._check(kind, source, target, fetch)

    def _check(self, kind: Kind, source: object, target: Target, fetch: Fetcher) -> VectorTable | None:
        cached = self._tables.get(kind)
        if cached is not None and cached[0] is source:  # checked by another thread meanwhile
            return cached[1]
        if self._refused.get(kind) is source:
            return None
        wanted = target()
        keys, links = wanted if isinstance(wanted, tuple) else (wanted, None)
        keys = np.asarray(keys, np.uint64)
        if self.max_rows is not None and len(keys) > self.max_rows:
            return None
        with self._lock:
            offered, self._offered[kind] = self._offered[kind], []
            base = cached[1] if cached is not None else VectorTable.empty()
        try:
            table = base.synced(keys, offered, lambda missing: fetch(kind, missing, len(keys)), links)
        except NowhereToKeep as exc:  # lasts as long as this state: remembered, and said once
            self._refused[kind] = source
            if kind not in self._warned:
                self._warned.add(kind)
                said = "local_search: %s vectors not held in the client (%s); Milvus searches them; %s"
                logger.warning(said, kind, exc, "pass graph_path= to hold them (read once, saved there)")
            table = None
        except Exception as exc:  # a read failed or came back short: Milvus answers this search
            logger.debug("local %s vectors not checked (%s); searching Milvus", kind, exc)
            table = None
        if table is None or len(table.keys) != len(np.unique(keys)):
            with self._lock:  # keep what was offered for the next check; Milvus answers this search
                self._offered[kind] = offered + self._offered[kind]
            return None
        self._tables[kind] = (source, table)
        self._refused.pop(kind, None)
        self._keep_early(kind, offered, table)
        return table

    def _keep_early(self, kind: Kind, offered: Sequence[VectorTable], table: VectorTable) -> None:
        """Keep offered rows the graph does not hold yet (checked mid-write): the write's change adds them next.

        At most :data:`FETCH_MAX` of them, the latest (a key's vector never changes, so a row kept
        for a key that never comes is only memory; one that is dropped is read by key if it comes).
        """
        early = [t.subset(keep) for t in offered if (keep := ~np.isin(t.keys, table.keys)).any()]
        held, kept = 0, list[VectorTable]()
        for t in reversed(early):
            if held + len(t.keys) > FETCH_MAX:
                break
            kept.insert(0, t)
            held += len(t.keys)
        if kept:
            with self._lock:
                self._offered[kind] = kept + self._offered[kind]

    def seed(self, kind: Kind, table: VectorTable) -> None:
        """Start from a saved table (checked against the graph at its first use)."""
        self._tables[kind] = (None, table)

    def current(self, kind: Kind, source: object) -> VectorTable | None:
        """The table of ``kind`` if its last check was against ``source`` (nothing is read)."""
        cached = self._tables.get(kind)
        return cached[1] if cached is not None and cached[0] is source else None

    def forget(self) -> None:
        """Drop every table and offered row (the collections were dropped)."""
        with self._lock:
            self._tables.clear()
            self._refused.clear()
            self._offered = {kind: [] for kind in LOCAL_KINDS}

    def held(self) -> tuple[Any, ...]:
        """What the tables and offered rows hold (for the memory report)."""
        return (self._tables, self._offered)

    def hits(
        self,
        kind: Kind,
        table: VectorTable,
        queries: Sequence[Sequence[float]],
        limit: int,
        rows: np.ndarray | None = None,
    ) -> list[list[tuple[str, float]]]:
        """Per query vector, ``(id, score)`` of its ``limit`` best rows (of ``rows`` if given), best first."""
        return [
            list(zip(keys_to_ids(table.keys[positions]), (float(s) for s in scores)))
            for positions, scores in table.top(np.asarray(queries, np.float32), limit, self.cosine, rows)
        ]


class IncompleteRead(Exception):
    """Milvus did not return every row a table lacks (e.g. a write not yet visible): search Milvus this time."""


class NowhereToKeep(IncompleteRead):
    """More rows to read than a check reads by key, and no saved index to keep a scan in (until the graph changes)."""


Fetcher = Callable[[Kind, np.ndarray, int], VectorTable]
#: The keys a table must hold and, for relations, the graph's checksum of each one's passage ids.
Target = Callable[[], "tuple[np.ndarray, np.ndarray | None] | np.ndarray"]


def local_vectors_for(mode: LocalMode, *, lite: bool, cosine: bool) -> LocalVectors | None:
    """The store's :class:`LocalVectors` for setting ``local_search`` (None: every search goes to Milvus).

    ``"auto"``: on Milvus Lite (whose searches are brute force), up to :data:`AUTO_MAX_ROWS`
    rows per kind; ``"on"``: on any Milvus, with no limit; ``"off"``: never.

    Raises:
        ValueError: ``mode`` is none of these.
    """
    if mode not in ("auto", "on", "off"):
        raise ValueError(f"local_search must be 'auto', 'on' or 'off', got {mode!r}")
    if mode == "off" or (mode == "auto" and not lite):
        return None
    return LocalVectors(cosine=cosine, max_rows=AUTO_MAX_ROWS if mode == "auto" else None)
