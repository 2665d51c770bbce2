"""The one border for ids: every id ↔ key ↔ index conversion of the package lives here (numpy only).

Entities and relations are keyed by unsigned 64-bit integers: their Milvus ids are those
integers written as 16 lowercase hex digits (the ids are made by
:mod:`langchain_graphrag_milvus.text.names`). Three forms, one conversion each, and nothing
outside this module converts by hand (``tests/unit/test_id_border.py`` counts the places):

* Milvus id ``str`` ↔ uint64 key: :func:`id_to_key` / :func:`key_to_id`, and for many at once
  :func:`ids_to_keys` / :func:`keys_to_ids` (vectorised: no Python formatting per id for long
  lists); :func:`canonical_keys` / :func:`canonical_key` accept only the package's own spelling
  (16 lowercase hex digits) and answer None for any other;
* Milvus ids → array indices: :meth:`KeyMap.find_ids` (-1 where unknown) or
  :meth:`KeyMap.lookup_ids` (raises :class:`~langchain_graphrag_milvus.errors.UnknownIdError`);
  keys → rows of another key array: :func:`find_keys`, :func:`row_of_key`;
* array indices → Milvus ids: :meth:`KeyMap.ids_at` / :meth:`KeyMap.id_at`; → keys:
  :meth:`KeyMap.keys_at`.

Internal indices are
assigned in insertion order and never change when more keys are appended, so adding
triplets does not renumber the graph. Lookups go through the argsort of the keys and a sample
of the sorted keys (:class:`KeyMap`): 12.5 bytes per key instead of a Python dict's ~100.

Passages keep the user's string ids (:class:`~.string_ids.StringIdMap`: one UTF-8 blob and a
CRC-32 index, no Python object per id).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.errors import UnknownIdError
from langchain_graphrag_milvus.graph.string_ids import StringIdMap

__all__ = [
    "KeyMap",
    "StringIdMap",
    "id_to_key",
    "key_to_id",
    "ids_to_keys",
    "keys_to_ids",
    "canonical_key",
    "canonical_keys",
    "find_keys",
    "row_of_key",
]

IntArray = npt.NDArray[np.int32]
KeyArray = npt.NDArray[np.uint64]
#: A :class:`KeyMap` keeps every this-many-th key of its sorted order (the blocks of its search).
KEY_STEP = 16
_STEPS = np.arange(KEY_STEP)
SorterArray = npt.NDArray[np.int32] | npt.NDArray[np.int64]  # an argsort


def id_to_key(node_id: str) -> int:
    """The unsigned 64-bit key behind a 16-hex-digit entity or relation id.

    Raises:
        ValueError: ``node_id`` is not hexadecimal.

    Example:
        >>> id_to_key("00000000000000ff")
        255
    """
    return int(node_id, 16)


def key_to_id(key: int) -> str:
    """The 16-hex-digit id of a key (inverse of :func:`id_to_key`).

    Example:
        >>> key_to_id(255)
        '00000000000000ff'
    """
    return format(int(key), "016x")


#: below this many ids (keys) a Python loop parses (writes) them faster than the array code
_PARSE_MIN = 64
_FORMAT_MIN = 128
_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", np.uint8)
_NIBBLE = np.full(256, 255, np.uint8)  # ASCII byte -> its hex digit's value (255: not a lowercase hex digit)
_NIBBLE[_HEX_DIGITS] = np.arange(16, dtype=np.uint8)
_CANONICAL_CHARS = frozenset("0123456789abcdef")


def canonical_key(node_id: object) -> int | None:
    """The key of an id in the package's own spelling (16 lowercase hex digits), else None.

    ``int(x, 16)`` also reads ``"0x.."``, upper case, ``_`` and spaces: to Milvus those are other
    primary keys, so a lookup by id must not take them for a key.

    Example:
        >>> canonical_key("00000000000000ff"), canonical_key("00000000000000FF"), canonical_key(255)
        (255, None, None)
    """
    if not isinstance(node_id, str) or len(node_id) != 16 or not _CANONICAL_CHARS.issuperset(node_id):
        return None
    return int(node_id, 16)


def canonical_keys(ids: Sequence[object]) -> KeyArray | None:
    """The keys of ids all in the package's spelling (see :func:`canonical_key`), else None; vectorised.

    Raises:
        TypeError: Some id is not a string.

    Example:
        >>> canonical_keys(["000000000000000a", "00000000000000ff"]).tolist(), canonical_keys(["0xff"])
        ([10, 255], None)
    """
    n = len(ids)
    joined = "".join(ids)  # type: ignore[arg-type]  # a non-string raises TypeError
    try:
        raw = joined.encode("ascii")
    except UnicodeEncodeError:
        return None
    if len(raw) != 16 * n:
        return None
    if n == 0:
        return np.empty(0, np.uint64)
    digits = _NIBBLE[np.frombuffer(raw, np.uint8)].reshape(n, 16)
    if int(digits.max()) > 15:
        return None
    packed = (digits[:, 0::2] << np.uint8(4)) | digits[:, 1::2]  # 8 bytes per id, most significant first
    return np.ascontiguousarray(packed).view(">u8").ravel().astype(np.uint64)


def ids_to_keys(ids: Iterable[str]) -> KeyArray:
    """The keys of many ids, as a uint64 array (see :func:`id_to_key`; vectorised for long lists).

    Raises:
        ValueError: Some id is not hexadecimal.
        OverflowError: Some id is more than 64 bits.
    """
    listed = ids if isinstance(ids, list) else list(ids)
    if len(listed) >= _PARSE_MIN:
        keys = canonical_keys(listed)
        if keys is not None:
            return keys
    return np.array([int(i, 16) for i in listed], dtype=np.uint64)


def keys_to_ids(keys: npt.ArrayLike) -> list[str]:
    """The ids of many keys (see :func:`key_to_id`; vectorised for long arrays)."""
    arr = np.asarray(keys, dtype=np.uint64).ravel()
    if arr.size < _FORMAT_MIN:
        return [format(k, "016x") for k in arr.tolist()]
    octets = arr.astype(">u8").view(np.uint8).reshape(-1, 8)
    chars = np.empty((arr.size, 16), np.uint8)
    chars[:, 0::2] = _HEX_DIGITS[octets >> 4]
    chars[:, 1::2] = _HEX_DIGITS[octets & 15]
    as_str: list[str] = chars.view("S16").ravel().astype("U16").tolist()
    return as_str


def find_keys(keys: KeyArray, query: npt.ArrayLike, sorter: SorterArray | None = None) -> npt.NDArray[np.int64]:
    """The position in ``keys`` of each query key, -1 where absent (vectorised).

    Args:
        keys: Distinct keys, sorted unless ``sorter`` (their argsort) is given.
        query: The keys to find.
        sorter: The argsort of ``keys`` if they are not sorted.

    Example:
        >>> find_keys(np.array([30, 10], np.uint64), [10, 99, 30], sorter=np.array([1, 0])).tolist()
        [1, -1, 0]
    """
    q = np.asarray(query, np.uint64).reshape(-1)
    if not len(keys) or not q.size:
        return np.full(q.size, -1, np.int64)
    at = np.minimum(np.searchsorted(keys, q, sorter=sorter), len(keys) - 1)
    rows = (sorter[at] if sorter is not None else at).astype(np.int64)
    return np.asarray(np.where(keys[rows] == q, rows, -1), np.int64)


def row_of_key(
    keys: KeyArray, key: int, sorter: SorterArray | None = None, view: memoryview | None = None
) -> int | None:
    """The position of one key in ``keys`` (as :func:`find_keys`), or None.

    ``view``, a memoryview of sorted ``keys``, answers with :mod:`bisect` (no numpy call for one key).
    """
    if view is not None:
        j = bisect.bisect_left(view, key)
        return j if j < len(view) and view[j] == key else None
    j = int(np.searchsorted(keys, np.uint64(key), sorter=sorter))
    if j >= len(keys):
        return None
    row = int(sorter[j]) if sorter is not None else j
    return row if int(keys[row]) == key else None


class KeyMap:
    """Append-only map between uint64 keys and dense int32 indices.

    Held: the keys in index order, their argsort (int32) and every :data:`KEY_STEP`-th key of
    the sorted order (12.5 bytes a key; a sorted copy of the keys would add 7.5 more). A key is
    found by a binary search of that sample, then among the :data:`KEY_STEP` keys of its block;
    a batch of keys about as large as the map is searched in one sorted copy made for the call.

    Example:
        >>> m = KeyMap.empty()
        >>> m = m.extended(np.array([30, 10], dtype=np.uint64))
        >>> m.lookup(np.array([10, 30], dtype=np.uint64)).tolist()
        [1, 0]
        >>> m.find(np.array([10, 99], dtype=np.uint64)).tolist()
        [1, -1]
    """

    __slots__ = ("keys", "_sorted_index", "_sample")

    def __init__(self, keys: KeyArray, sorted_index: IntArray, sample: KeyArray | None = None) -> None:
        self.keys = keys
        self._sorted_index = sorted_index
        if sample is None:
            sample = np.ascontiguousarray(keys[sorted_index[::KEY_STEP]])
        self._sample = sample

    @classmethod
    def empty(cls) -> KeyMap:
        """A map with no keys."""
        return cls(np.empty(0, np.uint64), np.empty(0, np.int32))

    @classmethod
    def from_keys(cls, keys: npt.ArrayLike) -> KeyMap:
        """Map ``keys`` (unique) to ``0..n-1`` in the given order."""
        keys_arr = np.ascontiguousarray(keys, dtype=np.uint64)
        order = np.argsort(keys_arr, kind="stable").astype(np.int32)
        sorted_keys = keys_arr[order]
        if sorted_keys.size > 1 and bool(np.any(sorted_keys[1:] == sorted_keys[:-1])):
            raise ValueError("KeyMap keys must be unique")
        return cls(keys_arr, order, np.ascontiguousarray(sorted_keys[::KEY_STEP]))

    @classmethod
    def from_saved(cls, keys: KeyArray, sorted_keys: KeyArray, sorted_index: IntArray) -> KeyMap:
        """The map of the arrays :meth:`arrays` saved (the sample is read from ``sorted_keys``)."""
        return cls(keys, sorted_index, np.ascontiguousarray(sorted_keys[::KEY_STEP]))

    def __len__(self) -> int:
        return int(self.keys.size)

    def arrays(self) -> dict[str, npt.NDArray[np.generic]]:
        """The arrays that make up the map (for saving; ``sorted_keys`` is made for it, as saved before)."""
        return {"keys": self.keys, "sorted_keys": self.keys[self._sorted_index], "sorted_index": self._sorted_index}

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return int(self.keys.nbytes + self._sorted_index.nbytes + self._sample.nbytes)

    def find(self, keys: npt.ArrayLike) -> IntArray:
        """Indices of ``keys``; -1 where a key is unknown."""
        query = np.asarray(keys, dtype=np.uint64).ravel()
        n = self.keys.size
        if n == 0:
            return np.full(query.size, -1, np.int32)
        if query.size * KEY_STEP >= n:  # a large batch: one sorted copy for the call
            sorted_keys = self.keys[self._sorted_index]
            pos = np.minimum(np.searchsorted(sorted_keys, query), n - 1)
            hit = sorted_keys[pos] == query
            return np.where(hit, self._sorted_index[pos], -1).astype(np.int32)
        block = np.maximum(np.searchsorted(self._sample, query, side="right") - 1, 0)
        at = np.minimum(block[:, None] * KEY_STEP + _STEPS, n - 1)  # the block's sorted positions
        rows = self._sorted_index[at]
        same = self.keys[rows] == query[:, None]
        found = same.any(axis=1)
        return np.where(found, rows[np.arange(query.size), same.argmax(axis=1)], -1).astype(np.int32)

    def lookup(self, keys: npt.ArrayLike, what: str = "key") -> IntArray:
        """Indices of ``keys``.

        Raises:
            UnknownIdError: Some key is not in the map (the message names the first).
        """
        found = self.find(keys)
        if found.size and int(found.min()) < 0:
            missing = np.asarray(keys, dtype=np.uint64).ravel()[found < 0]
            raise UnknownIdError(f"{missing.size} {what}(s) not in the graph index, e.g. {key_to_id(missing[0])}")
        return found

    def find_ids(self, ids: Iterable[str]) -> IntArray:
        """Indices of the keys behind these 16-hex-digit ids; -1 where unknown.

        Example:
            >>> m = KeyMap.from_keys([id_to_key("000000000000000a")])
            >>> m.find_ids(["000000000000000a", "00000000000000ff"]).tolist()
            [0, -1]
        """
        return self.find(ids_to_keys(ids))

    def lookup_ids(self, ids: Iterable[str], what: str = "key") -> IntArray:
        """Indices of the keys behind these ids.

        Raises:
            UnknownIdError: Some id is not in the map (the message names the first).
        """
        return self.lookup(ids_to_keys(ids), what)

    def ids_at(self, indices: npt.ArrayLike) -> list[str]:
        """The 16-hex-digit ids at these indices (an index array or list, or a boolean mask).

        Example:
            >>> KeyMap.from_keys([10, 255]).ids_at([1, 0])
            ['00000000000000ff', '000000000000000a']
        """
        return keys_to_ids(self.keys_at(indices))

    def keys_at(self, indices: npt.ArrayLike) -> KeyArray:
        """The uint64 keys at these indices (an index array or list, ``[]`` included, or a boolean mask)."""
        at = np.asarray(indices)
        keys: KeyArray = self.keys[at if at.dtype == np.bool_ else at.astype(np.intp, copy=False)]
        return keys

    def id_at(self, index: int) -> str:
        """The 16-hex-digit id at one index."""
        return key_to_id(self.keys[int(index)])

    def extended(self, new_keys: npt.ArrayLike) -> KeyMap:
        """A new map with ``new_keys`` (unique, not yet present) appended."""
        add = np.ascontiguousarray(new_keys, dtype=np.uint64)
        if add.size == 0:
            return self
        start = self.keys.size
        add_order = np.argsort(add, kind="stable")
        add_sorted = add[add_order]
        old_sorted = self.keys[self._sorted_index]
        positions = np.searchsorted(old_sorted, add_sorted)
        sorted_keys = np.insert(old_sorted, positions, add_sorted)
        del old_sorted
        sorted_index = np.insert(self._sorted_index, positions, (add_order + start).astype(np.int32))
        sample = np.ascontiguousarray(sorted_keys[::KEY_STEP])
        del sorted_keys
        return KeyMap(np.concatenate([self.keys, add]), sorted_index, sample)
