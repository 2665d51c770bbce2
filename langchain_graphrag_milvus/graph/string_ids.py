"""Passage ids ↔ dense indices in a few arrays: one UTF-8 blob, offsets, and a CRC-32 hash index (numpy only).

A graph keeps the user's string id of every passage. As a list of strings and a dict of their
indices that is ~120 bytes per passage, each string and each int a small object of its own;
decoded among the rows of a rebuild, the few that survive keep the allocator's pages of many freed
rows resident (``benchmarks/bench_memory.py``). :class:`StringIdMap` keeps the ids in one bytes
object (their UTF-8 bytes, lone surrogates kept) with their offsets, and finds an id by the
CRC-32 of its bytes: a sorted uint32 array of the hashes with the position of each, then a
comparison of the bytes (a collision only costs a second comparison). ~20 bytes per id
beside its text, and no Python object per id.

Example:
    >>> m = StringIdMap(["p1", "Zürich §2"])
    >>> m.ids[1], len(m), "p1" in m, m.find(["Zürich §2", "x"]).tolist()
    ('Zürich §2', 2, True, [1, -1])
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.errors import UnknownIdError

__all__ = ["StringIdMap", "IdStrings"]

IntArray = npt.NDArray[np.int32]
_ERRORS = "surrogatepass"  # any str round-trips (a lone surrogate too)


def _encode(ids: Iterable[str]) -> list[bytes]:
    return [pid.encode("utf-8", _ERRORS) for pid in ids]


class IdStrings(Sequence[str]):
    """The ids of a :class:`StringIdMap` in index order, decoded when read (a read-only sequence).

    Equal to a list or tuple of the same strings.
    """

    __slots__ = ("_blob", "_offsets")

    def __init__(self, blob: bytes, offsets: npt.NDArray[np.int64]) -> None:
        self._blob = blob
        self._offsets = offsets

    def __len__(self) -> int:
        return int(self._offsets.size) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        j = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= j < n:
            raise IndexError("passage index out of range")
        return self._blob[int(self._offsets[j]) : int(self._offsets[j + 1])].decode("utf-8", _ERRORS)

    def __iter__(self) -> Iterator[str]:
        blob, bounds = self._blob, self._offsets.tolist()
        for a, b in zip(bounds[:-1], bounds[1:]):
            yield blob[a:b].decode("utf-8", _ERRORS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IdStrings):
            return self._blob == other._blob and np.array_equal(self._offsets, other._offsets)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:  # a mutable-looking sequence: not hashable, as a list
        raise TypeError("unhashable type: 'IdStrings'")

    def __repr__(self) -> str:
        return f"IdStrings({list(self)!r})"


class StringIdMap:
    """Append-only map between string ids and dense indices (used for passages; see the module docstring)."""

    __slots__ = ("_blob", "_offsets", "_hashes", "_positions", "ids")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        encoded = _encode(ids)
        if len(set(encoded)) != len(encoded):
            raise ValueError("StringIdMap ids must be unique")
        self._set(b"".join(encoded), _offsets_of(encoded), _crcs(encoded))

    @classmethod
    def from_blob(cls, blob: bytes, offsets: npt.ArrayLike) -> StringIdMap:
        """The map of the ids ``blob[offsets[i]:offsets[i + 1]]`` (UTF-8; as :func:`~.persist.save` writes them).

        Raises:
            ValueError: The offsets do not cut the blob into UTF-8 strings, or an id repeats.
        """
        bounds = np.asarray(offsets, dtype=np.int64).ravel()
        if bounds.size == 0 or bounds[0] != 0 or bounds[-1] != len(blob) or bool(np.any(np.diff(bounds) < 0)):
            raise ValueError("passage id offsets do not fit their blob")
        blob.decode("utf-8", _ERRORS)  # the whole blob is UTF-8 ...
        raw = np.frombuffer(blob, np.uint8)
        cuts = bounds[1:-1]
        if cuts.size and bool(np.any((raw[cuts[cuts < raw.size]] & 0xC0) == 0x80)):  # ... cut between characters
            raise ValueError("a passage id offset cuts a UTF-8 character")
        ends = bounds.tolist()
        encoded = [blob[a:b] for a, b in zip(ends[:-1], ends[1:])]
        if len(set(encoded)) != len(encoded):
            raise ValueError("StringIdMap ids must be unique")
        out = cls.__new__(cls)
        out._set(bytes(blob), bounds, _crcs(encoded))
        return out

    def _set(self, blob: bytes, offsets: npt.NDArray[np.int64], crcs: npt.NDArray[np.uint32]) -> None:
        order = np.argsort(crcs, kind="stable")
        self._blob = blob
        self._offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self._hashes = np.ascontiguousarray(crcs[order])
        self._positions = order.astype(np.int32)
        #: The ids in index order (decoded when read).
        self.ids: Sequence[str] = IdStrings(self._blob, self._offsets)

    def __len__(self) -> int:
        return int(self._offsets.size) - 1

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and int(self.find([item])[0]) >= 0

    @property
    def nbytes(self) -> int:
        """Bytes held: the blob and the arrays."""
        return len(self._blob) + int(self._offsets.nbytes + self._hashes.nbytes + self._positions.nbytes)

    def arrays(self) -> tuple[bytes, npt.NDArray[np.int64]]:
        """The UTF-8 blob and the offsets (``len + 1``) of the ids."""
        return self._blob, self._offsets

    def find(self, ids: Sequence[str]) -> IntArray:
        """Indices of ``ids``; -1 where an id is unknown."""
        encoded = _encode(ids)
        crcs = _crcs(encoded)
        out = np.full(len(encoded), -1, np.int32)
        if not len(self) or not encoded:
            return out
        hashes, positions, blob, bounds = self._hashes, self._positions, self._blob, self._offsets
        at = np.searchsorted(hashes, crcs).tolist()
        n = hashes.size
        for k, (b, h, j) in enumerate(zip(encoded, crcs.tolist(), at)):
            while j < n and int(hashes[j]) == h:
                p = int(positions[j])
                if blob[int(bounds[p]) : int(bounds[p + 1])] == b:
                    out[k] = p
                    break
                j += 1
        return out

    def lookup(self, ids: Sequence[str]) -> IntArray:
        """Indices of ``ids``.

        Raises:
            UnknownIdError: Some id is not in the map.
        """
        found = self.find(ids)
        if found.size and int(found.min()) < 0:
            missing = [i for i, f in zip(ids, found.tolist()) if f < 0]
            raise UnknownIdError(f"{len(missing)} passage id(s) not in the graph index, e.g. {missing[0]!r}")
        return found

    def repack(self) -> None:
        """Nothing to do: the ids are one blob and arrays already, side by side (kept for callers of old)."""

    def take(self, indices: npt.ArrayLike) -> StringIdMap:
        """A new map of the ids at ``indices`` (distinct), in that order."""
        rows = np.asarray(indices, dtype=np.int64).ravel()
        return StringIdMap(self.ids[i] for i in rows.tolist())

    def extended(self, new_ids: Iterable[str]) -> StringIdMap:
        """A new map with ``new_ids`` (those not yet present, once each) appended; ``self`` is unchanged."""
        candidates = list(dict.fromkeys(new_ids))
        fresh = [pid for pid, f in zip(candidates, self.find(candidates).tolist()) if f < 0]
        if not fresh:
            return self
        encoded = _encode(fresh)
        out = StringIdMap.__new__(StringIdMap)
        offsets = np.concatenate([self._offsets, self._offsets[-1] + _offsets_of(encoded)[1:]])
        crcs = np.concatenate([self._hashes[np.argsort(self._positions, kind="stable")], _crcs(encoded)])
        out._set(self._blob + b"".join(encoded), offsets, crcs)
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {"blob": self._blob, "offsets": self._offsets}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._set(state["blob"], state["offsets"], _crcs(_slices(state["blob"], state["offsets"])))


def _offsets_of(encoded: list[bytes]) -> npt.NDArray[np.int64]:
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return offsets


def _crcs(encoded: Iterable[bytes]) -> npt.NDArray[np.uint32]:
    return np.fromiter(map(zlib.crc32, encoded), np.uint32)


def _slices(blob: bytes, offsets: npt.NDArray[np.int64]) -> list[bytes]:
    ends = np.asarray(offsets).tolist()
    return [blob[a:b] for a, b in zip(ends[:-1], ends[1:])]
