"""Many strings in two arrays, and an exact lookup over them (numpy and the standard library only).

A million Python strings cost ~60 bytes each before their text, and a dict or list over them
8–50 more. The name structures of a store (entity names, linker keys, the word index's
words) keep their strings instead as:

* :class:`StringArray` — one UTF-8 blob with each string followed by a newline, and the byte
  offset of each string's start (``len + 1`` offsets, int32 while the blob is under 2 GiB).
  It is the saved layout too (:func:`~.name_table.encode_strings`), so a saved array is
  used as it is, memory-mapped. A string is decoded when it is read (well under a microsecond).
* :class:`StringLookup` — the position of a string among a :class:`StringArray`'s: CRC-32
  hashes sorted (with their positions, 8 bytes per string) and a bitmap of the hashes (one
  byte per string) that answers most misses without a search. Hash equality is confirmed
  by comparing the strings, so a collision never returns a wrong position.

Example:
    >>> names = StringArray.from_strings(["Leonhard Euler", "", "Gödel"])
    >>> names[2], len(names), list(names.take([2, 0]))
    ('Gödel', 3, ['Gödel', 'Leonhard Euler'])
    >>> StringLookup(names).find("Gödel"), StringLookup(names).find("Euler")
    (2, None)
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

__all__ = ["StringArray", "StringLookup", "crc", "crc_of", "offsets_dtype"]

_SEP = 10  # the newline after every string in the blob
_CHUNK = 4096  # strings decoded at once when iterating
_ERRORS = "surrogatepass"  # lone surrogates (valid in Python strings) survive the round trip


def offsets_dtype(total: int) -> type[np.signedinteger[Any]]:
    """int32 for offsets into a blob of ``total`` bytes if they fit, else int64."""
    return np.int32 if total < 2**31 else np.int64


class StringArray(Sequence[str]):
    """Strings as one UTF-8 blob (a newline after each) and the offset where each starts.

    String ``i`` is ``blob[offsets[i] : offsets[i + 1] - 1]``. Immutable; :meth:`take` and
    :meth:`concat` make new arrays without decoding anything.

    Args:
        blob: The bytes (uint8), e.g. memory-mapped from a saved file.
        offsets: ``len + 1`` increasing byte offsets starting at 0 and ending at ``len(blob)``.
        check: Verify the offsets, the newlines and that the blob is UTF-8.

    Raises:
        ValueError: ``check`` found offsets that do not fit the blob, or bytes that are not UTF-8.
    """

    __slots__ = ("blob", "offsets", "_raw", "_at")

    def __init__(self, blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.integer[Any]], check: bool = True) -> None:
        blob = np.ascontiguousarray(blob)
        offsets = np.ascontiguousarray(offsets)
        if check:
            _check(blob, offsets)
        self.blob = blob
        self.offsets = offsets
        self._raw = blob.data.cast("B") if blob.size else memoryview(b"")
        self._at = offsets.data

    @classmethod
    def from_strings(cls, values: Iterable[str]) -> StringArray:
        """The array of ``values`` (in order)."""
        encoded = [v.encode("utf-8", _ERRORS) for v in values]
        lengths = np.fromiter((len(b) + 1 for b in encoded), np.int64, len(encoded))
        total = int(lengths.sum())
        offsets = np.zeros(len(encoded) + 1, offsets_dtype(total))
        np.cumsum(lengths, out=offsets[1:])
        blob = np.frombuffer(b"\n".join(encoded) + b"\n" if encoded else b"", np.uint8)
        return cls(blob, offsets, check=False)

    @classmethod
    def empty(cls) -> StringArray:
        """An array of no strings."""
        return cls(np.empty(0, np.uint8), np.zeros(1, np.int32), check=False)

    def __len__(self) -> int:
        return len(self._at) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        at, n = self._at, len(self._at) - 1
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("string index out of range")
        return str(self._raw[at[i] : at[i + 1] - 1], "utf-8", _ERRORS)

    def __iter__(self) -> Iterator[str]:
        n, at, raw = len(self), self._at, self._raw
        for a in range(0, n, _CHUNK):
            b = min(a + _CHUNK, n)
            parts = str(raw[at[a] : at[b]], "utf-8", _ERRORS).split("\n")
            if len(parts) == b - a + 1:  # no string of the chunk holds a newline: one split
                yield from parts[:-1]
            else:
                yield from (self[i] for i in range(a, b))

    def __repr__(self) -> str:
        shown = ", ".join(repr(s) for s in self[:3])
        return f"StringArray([{shown}{', ...' if len(self) > 3 else ''}], n={len(self)})"

    def lengths(self) -> npt.NDArray[np.int64]:
        """The byte length of each string (UTF-8, without its newline)."""
        return np.diff(self.offsets).astype(np.int64) - 1

    def take(self, rows: npt.ArrayLike) -> StringArray:
        """The strings at ``rows`` (in that order), gathered without decoding."""
        rows = np.asarray(rows, np.int64).reshape(-1)
        if not len(rows):
            return StringArray.empty()
        starts = self.offsets[:-1].astype(np.int64)[rows]
        sizes = self.offsets[1:].astype(np.int64)[rows] - starts
        total = int(sizes.sum())
        offsets = np.zeros(len(rows) + 1, offsets_dtype(total))
        np.cumsum(sizes, out=offsets[1:])
        blob = np.empty(total, np.uint8)
        for a in range(0, len(rows), 1 << 16):  # a byte index per chunk, not one for the whole blob
            b = min(a + (1 << 16), len(rows))
            lo, hi = int(offsets[a]), int(offsets[b])
            where = np.repeat(starts[a:b] - offsets[a:b], sizes[a:b]) + np.arange(lo, hi, dtype=np.int64)
            blob[lo:hi] = self.blob[where]
        return StringArray(blob, offsets, check=False)

    def concat(self, other: StringArray) -> StringArray:
        """These strings, then ``other``'s."""
        if not len(other):
            return self
        if not len(self):
            return other
        total = len(self.blob) + len(other.blob)
        dtype = offsets_dtype(total)
        offsets = np.concatenate([self.offsets.astype(dtype), other.offsets[1:].astype(dtype) + len(self.blob)])
        return StringArray(np.concatenate([self.blob, other.blob]), offsets, check=False)

    def same_at(self, rows: npt.ArrayLike, other: StringArray, other_rows: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether ``self[rows[j]] == other[other_rows[j]]`` for each ``j`` (bytes compared, vectorised)."""
        rows, other_rows = np.asarray(rows, np.int64), np.asarray(other_rows, np.int64)
        same = self.lengths()[rows] == other.lengths()[other_rows]
        both = np.flatnonzero(same)
        if len(both):
            mine, theirs = self.take(rows[both]), other.take(other_rows[both])
            differ = np.logical_or.reduceat(mine.blob != theirs.blob, mine.offsets[:-1].astype(np.int64))
            same[both] = ~differ
        return np.asarray(same, np.bool_)

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """``{prefix}blob`` and ``{prefix}offsets`` (see :meth:`from_arrays`)."""
        return {f"{prefix}blob": self.blob, f"{prefix}offsets": self.offsets}

    @classmethod
    def from_arrays(cls, arrays: Any, prefix: str) -> StringArray:
        """The array saved by :meth:`arrays` (checked; ``KeyError`` if one is missing).

        Also reads the layout saved before it, without a newline after the last string (copied).
        """
        blob, offsets = np.asarray(arrays[f"{prefix}blob"]), np.asarray(arrays[f"{prefix}offsets"])
        if len(offsets) > 1 and offsets.ndim == 1 and int(offsets[-1]) == len(blob) + 1:
            blob = np.concatenate([blob.astype(np.uint8), np.array([_SEP], np.uint8)])
        return cls(blob, offsets)


def _check(blob: np.ndarray, offsets: np.ndarray) -> None:
    n = len(offsets) - 1
    if (
        blob.ndim != 1
        or blob.dtype != np.uint8
        or offsets.ndim != 1
        or n < 0
        or offsets.dtype.kind not in "iu"
        or int(offsets[0]) != 0
        or int(offsets[-1]) != len(blob)
    ):
        raise ValueError("string offsets do not fit their blob")
    if n and (np.any(np.diff(offsets.astype(np.int64)) < 1) or np.any(blob[offsets[1:].astype(np.int64) - 1] != _SEP)):
        raise ValueError("string offsets are not increasing or do not end at newlines")
    raw = blob.data.cast("B") if blob.size else memoryview(b"")
    at = offsets.astype(np.int64).tolist() if n < _CHUNK else None
    try:
        for a in range(0, n, 1 << 16):  # whole strings at a time: chunks start at a character
            b = min(n, a + (1 << 16))
            lo, hi = (at[a], at[b]) if at is not None else (int(offsets[a]), int(offsets[b]))
            str(raw[lo:hi], "utf-8", _ERRORS)
    except UnicodeDecodeError as exc:
        raise ValueError(f"strings are not UTF-8: {exc}") from None


class StringLookup:
    """The position of a string in a :class:`StringArray` (the first, if it occurs more than once).

    Args:
        strings: The strings to find.
        crc: Each string's :func:`crc` (computed if not given).

    Raises:
        ValueError: ``crc`` does not fit ``strings``.
    """

    __slots__ = ("strings", "hashes", "positions", "_bitmap", "_mask", "_sorted", "_where")

    def __init__(self, strings: Sequence[str], crc: npt.NDArray[np.uint32] | None = None) -> None:
        crc = crc_of(strings) if crc is None else np.asarray(crc)
        if len(crc) != len(strings) or crc.dtype != np.uint32:
            raise ValueError("string hashes do not fit their strings")
        order = np.argsort(crc, kind="stable")
        self._set(strings, crc[order], order.astype(np.int32))

    @classmethod
    def from_arrays(cls, strings: Sequence[str], arrays: Any, prefix: str) -> StringLookup:
        """The lookup saved by :meth:`arrays` over ``strings`` (``KeyError`` if an array is missing).

        Raises:
            ValueError: The arrays do not fit ``strings``.
        """
        hashes, positions = np.asarray(arrays[f"{prefix}hashes"]), np.asarray(arrays[f"{prefix}positions"])
        n = len(strings)
        if hashes.dtype != np.uint32 or positions.dtype.kind not in "iu" or len(hashes) != n or len(positions) != n:
            raise ValueError("saved string hashes do not fit their strings")
        if n and (int(positions.min()) < 0 or int(positions.max()) >= n or bool(np.any(hashes[1:] < hashes[:-1]))):
            raise ValueError("saved string hashes are not sorted or their positions are out of range")
        self = cls.__new__(cls)
        self._set(strings, hashes, positions)
        return self

    def _set(self, strings: Sequence[str], hashes: np.ndarray, positions: np.ndarray) -> None:
        self.strings = strings
        #: The strings' CRC-32 hashes, sorted; ``positions``: where each string is.
        self.hashes, self.positions = np.ascontiguousarray(hashes), np.ascontiguousarray(positions)
        bits = max(64, 1 << int(8 * max(len(strings), 1) - 1).bit_length())  # about 8 bits per string
        self._mask = bits - 1
        marks = np.unique(self.hashes & np.uint32(self._mask))
        weights = np.left_shift(1, marks & 7).astype(np.float64)
        self._bitmap = np.bincount(marks >> 3, weights, minlength=bits // 8).astype(np.uint8).tobytes()
        self._sorted = self.hashes.data
        self._where = self.positions.data

    def __len__(self) -> int:
        return len(self.hashes)

    def find(self, text: str) -> int | None:
        """The position of ``text``, or None."""
        h = zlib.crc32(text.encode("utf-8", _ERRORS))
        m = h & self._mask
        if not self._bitmap[m >> 3] & (1 << (m & 7)):
            return None
        sorted_, where, strings = self._sorted, self._where, self.strings
        j = bisect.bisect_left(sorted_, h)
        while j < len(sorted_) and sorted_[j] == h:
            position = where[j]
            if strings[position] == text:
                return position
            j += 1
        return None

    def crc(self) -> npt.NDArray[np.uint32]:
        """Each string's hash, in the strings' order."""
        out = np.empty(len(self.hashes), np.uint32)
        out[self.positions] = self.hashes
        return out

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """``{prefix}hashes`` and ``{prefix}positions`` (see :meth:`from_arrays`)."""
        return {f"{prefix}hashes": self.hashes, f"{prefix}positions": self.positions}


def crc_of(strings: Iterable[str] | StringArray) -> npt.NDArray[np.uint32]:
    """The CRC-32 of each string's UTF-8 bytes (what :class:`StringLookup` sorts)."""
    if isinstance(strings, StringArray):
        raw, at = strings._raw, strings._at
        return np.fromiter((zlib.crc32(raw[at[i] : at[i + 1] - 1]) for i in range(len(strings))), np.uint32)
    return np.fromiter((zlib.crc32(s.encode("utf-8", _ERRORS)) for s in strings), np.uint32)


def crc(text: str) -> int:
    """The CRC-32 of ``text``'s UTF-8 bytes."""
    return zlib.crc32(text.encode("utf-8", _ERRORS))
