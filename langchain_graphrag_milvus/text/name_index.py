"""A character q-gram index that finds the candidates of a fuzzy name match (numpy only).

The offline entity linker compares the unmatched spans of a query with every known name
by rapidfuzz's ``fuzz.ratio`` (the normalised Indel similarity, 0-100). Scanning a million
names per span costs hundreds of milliseconds; :class:`NameIndex` returns, for one query
string and a cutoff, a small set of choice indices that is guaranteed to hold **every**
choice whose ratio with the query reaches the cutoff. Scoring only those (in choice order)
gives exactly the full scan's answer, ties included.

Why the candidates are complete. For strings of lengths ``m`` and ``n``,
``ratio = 200 * L / (m + n)`` where ``L`` is their longest common subsequence, so
``ratio >= c`` implies ``L >= c (m + n) / 200``: the lengths cannot differ much (the length
filter), and turning the query into the choice deletes at most ``m - L`` characters and
inserts at most ``n - L``. Both strings are padded with ``Q - 1`` sentinel characters on
each side, giving ``m + Q - 1`` q-grams to the query; a deletion destroys at most ``Q`` of
them and an insertion ``Q - 1``, so a match shares at least ``T`` of them (the count
filter). A choice that misses all of the query's ``m + Q - T`` rarest grams cannot reach
``T`` (prefix filtering), so only those grams' posting lists are read to gather
candidates; the count filter then checks each candidate against the query's grams, rarest
first, dropping a candidate as soon as the grams left cannot lift it to ``T``. Where
``T <= 0`` (very short strings, low cutoffs) nothing can be pruned and every choice of a
possible length is a candidate. The bounds are rounded outwards, so float rounding can
only add candidates, never lose one.

Layout: choices are renumbered by length (stable), so one length range is one contiguous
range of ids and each posting list (sorted ids) is cut to it by binary search. Every part
is a numpy array (:meth:`NameIndex.arrays` / :meth:`NameIndex.from_arrays`), so the index
can be saved next to a graph index and memory-mapped back.

Example:
    >>> index = NameIndex(["leonhard euler", "johann bernoulli", "euler"])
    >>> index.candidates("leonard euler", 90.0).tolist()
    [0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.text.strings import StringArray, StringLookup

__all__ = ["NameIndex", "TokenIndex", "Q"]

#: Gram length.
Q = 3
_PAD = "\x00"
_EPS = 1e-6
_ARRAYS = ("alphabet", "gram_codes", "indptr", "postings", "order", "lengths")


class NameIndex:
    """Candidates for a fuzzy match (``fuzz.ratio >= cutoff``) among fixed choice strings.

    Args:
        choices: The strings to search; candidates are indices into this sequence.
    """

    def __init__(self, choices: Sequence[str]) -> None:
        self._set(_build(list(choices)))

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> NameIndex:
        """An index from :meth:`arrays` (e.g. memory-mapped from disk).

        Raises:
            ValueError: An array is missing or the arrays disagree with each other.
        """
        missing = [name for name in _ARRAYS if name not in arrays]
        if missing:
            raise ValueError(f"name index arrays missing: {missing}")
        self = cls.__new__(cls)
        self._set({name: arrays[name] for name in _ARRAYS})
        n, grams = len(self._order), len(self._codes)
        if (
            len(self._lengths) != n
            or len(self._indptr) != grams + 1
            or (grams and int(self._indptr[-1]) != len(self._postings))
            or (n and len(self._postings) and int(np.max(self._postings)) >= n)
        ):
            raise ValueError("name index arrays disagree with each other")
        return self

    def _set(self, arrays: Mapping[str, np.ndarray]) -> None:
        self._alphabet = arrays["alphabet"]
        self._codes = arrays["gram_codes"]
        self._indptr = arrays["indptr"]
        self._postings = arrays["postings"]
        self._order = arrays["order"]
        self._lengths = arrays["lengths"]
        self._char_ids = {chr(int(c)): i for i, c in enumerate(self._alphabet.tolist())}

    def arrays(self) -> dict[str, np.ndarray]:
        """The index as named numpy arrays (see :meth:`from_arrays`)."""
        return {
            "alphabet": self._alphabet,
            "gram_codes": self._codes,
            "indptr": self._indptr,
            "postings": self._postings,
            "order": self._order,
            "lengths": self._lengths,
        }

    def __len__(self) -> int:
        return len(self._order)

    def candidates(self, text: str, cutoff: float) -> np.ndarray:
        """Indices (ascending) of the choices that may have ``fuzz.ratio(text, choice) >= cutoff``.

        Every choice that does is among them; most that do not are left out.
        """
        m, n_all = len(text), len(self._order)
        if n_all == 0 or cutoff > 100.0 + _EPS:
            return np.empty(0, np.int64)
        k = 1.0 - cutoff / 100.0
        if k >= 1.0 - _EPS or m == 0:
            return np.arange(n_all, dtype=np.int64)  # everything can reach the cutoff
        lo_len = math.floor(m * (1.0 - k) / (1.0 + k) - _EPS)
        hi_len = math.ceil(m * (1.0 + k) / (1.0 - k) + _EPS)
        lo = int(np.searchsorted(self._lengths, lo_len, "left"))
        hi = int(np.searchsorted(self._lengths, hi_len, "right"))
        if lo >= hi:
            return np.empty(0, np.int64)
        need_min = int(_shared_grams(m, np.arange(max(lo_len, 0), hi_len + 1), cutoff).min())
        if need_min <= 0:
            found = np.arange(lo, hi, dtype=np.int64)
        else:
            found = self._filtered(text, lo, hi, cutoff, need_min)
        return np.sort(self._order[found].astype(np.int64))

    def _filtered(self, text: str, lo: int, hi: int, cutoff: float, need_min: int) -> np.ndarray:
        """Ids in ``[lo, hi)`` that pass the prefix and count filters."""
        weights: dict[int, int] = {}
        unknown = 0
        for code in self._query_codes(text):
            if code < 0:
                unknown += 1
            else:
                weights[code] = weights.get(code, 0) + 1
        lists: list[tuple[int, int, np.ndarray]] = []  # (posting length, weight, ids in [lo, hi))
        if weights:
            codes = np.fromiter(weights, np.uint64, len(weights))
            pos = np.searchsorted(self._codes, codes)
            for code, p in zip(weights, pos.tolist()):
                ids = self._slice(p, code, lo, hi)
                lists.append((len(ids), weights[code], ids))
        lists.sort(key=lambda item: item[0])
        probe = len(text) + Q - 1 - need_min + 1 - unknown  # unknown grams are the rarest: empty
        heads: list[np.ndarray] = []
        for size, weight, ids in lists:
            if probe <= 0:
                break
            if size:
                heads.append(ids)
            probe -= weight
        if not heads:
            return np.empty(0, np.int64)
        found = _union(heads)
        m = len(text)
        need = _shared_grams(m, self._lengths[found].astype(np.int64), cutoff)
        shared = np.zeros(len(found), np.int64)
        rest = m + Q - 1 - unknown  # weight of the grams not counted yet
        for size, weight, ids in lists:  # rarest first: candidates that cannot reach ``need`` leave early
            rest -= weight
            if size:
                at = np.minimum(np.searchsorted(ids, found), size - 1)
                shared += (ids[at] == found) * weight
            alive = shared + rest >= need
            if not alive.all():
                found, shared, need = found[alive], shared[alive], need[alive]
                if not len(found):
                    break
        return np.asarray(found[shared >= need], np.int64)

    def _slice(self, p: int, code: int, lo: int, hi: int) -> np.ndarray:
        if p >= len(self._codes) or int(self._codes[p]) != code:
            return self._postings[:0]
        ids = self._postings[int(self._indptr[p]) : int(self._indptr[p + 1])]
        a, b = np.searchsorted(ids, (lo, hi))
        return ids[a:b]

    def _query_codes(self, text: str) -> list[int]:
        """The gram codes of the padded text; -1 for a gram with a character no choice has."""
        base = len(self._alphabet)
        ids = [self._char_ids.get(c, -1) for c in _PAD * (Q - 1) + text + _PAD * (Q - 1)]
        out = []
        for i in range(len(ids) - Q + 1):
            window = ids[i : i + Q]
            if min(window) < 0:
                out.append(-1)
                continue
            code = 0
            for c in window:
                code = code * base + c
            out.append(code)
        return out


def _shared_grams(m: int, n: np.ndarray, cutoff: float) -> np.ndarray:
    """Fewest padded q-grams a query of length ``m`` shares with a choice of length ``n`` that reaches ``cutoff``.

    ``ratio = 200 * L / (m + n)`` with ``L`` the longest common subsequence, so a match has
    ``L >= ceil(cutoff * (m + n) / 200)``; turning the query into the choice then deletes
    ``m - L`` characters (each destroys at most ``Q`` of the query's ``m + Q - 1`` grams) and
    inserts ``n - L`` (each destroys at most ``Q - 1``: the grams spanning its gap). Rounded
    so that float error can only lower the bound.
    """
    least = np.ceil(cutoff * (m + n) / 200.0 - _EPS).astype(np.int64)
    deletions = np.maximum(m - least, 0)
    insertions = np.maximum(n - least, 0)
    return np.asarray((m + Q - 1) - Q * deletions - (Q - 1) * insertions)


def _union(parts: list[np.ndarray]) -> np.ndarray:
    """Sorted distinct ids of several sorted id arrays (a sort: ``np.unique`` hashes first, slower)."""
    if len(parts) == 1:
        return parts[0]
    ids = np.sort(np.concatenate(parts))
    return ids[np.concatenate(([True], ids[1:] != ids[:-1]))] if len(ids) else ids


def _build(choices: list[str]) -> dict[str, Any]:
    """The arrays of an index over ``choices``."""
    n = len(choices)
    lengths = np.fromiter((len(s) for s in choices), np.int64, n)
    order = np.argsort(lengths, kind="stable").astype(np.uint32 if n < 2**32 else np.uint64)
    sorted_lengths = lengths[order].astype(np.int32)
    pad = _PAD * (Q - 1)
    joined = "".join(pad + choices[i] + pad for i in order.tolist())
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
    present = np.bincount(cps, minlength=1) if len(cps) else np.zeros(1, np.int64)
    alphabet = np.flatnonzero(present).astype(np.uint32)
    if len(alphabet) == 0:
        alphabet = np.array([0], np.uint32)
    table = np.zeros(max(int(alphabet[-1]) + 1, 1), np.uint64)
    table[alphabet] = np.arange(len(alphabet), dtype=np.uint64)
    chars = table[cps]
    base = np.uint64(len(alphabet))
    # grams: the padded string s of length L + 2(Q-1) has L + Q - 1 of them, starting at its first character
    per = sorted_lengths.astype(np.int64) + Q - 1
    starts = np.zeros(n, np.int64)  # where each padded string starts in ``chars``
    before = np.zeros(n, np.int64)  # how many grams the strings before it have
    starts[1:] = np.cumsum(per + Q - 1)[:-1]
    before[1:] = np.cumsum(per)[:-1]
    pos = np.repeat(starts - before, per) + np.arange(int(per.sum()), dtype=np.int64)
    codes = chars[pos]
    for j in range(1, Q):
        codes = codes * base + chars[pos + j]
    owner = np.repeat(np.arange(n, dtype=np.uint64), per)
    codes, owner = _unique_pairs(codes, owner, n, int(base))
    if len(codes):
        bounds = np.flatnonzero(np.diff(codes)) + 1
        gram_codes = codes[np.concatenate(([0], bounds))]
        indptr = np.concatenate(([0], bounds, [len(codes)])).astype(np.int64)
    else:
        gram_codes, indptr = np.empty(0, np.uint64), np.zeros(1, np.int64)
    return {
        "alphabet": alphabet,
        "gram_codes": gram_codes.astype(np.uint64),
        "indptr": indptr,
        "postings": owner.astype(np.uint32 if n < 2**32 else np.uint64),
        "order": order,
        "lengths": sorted_lengths,
    }


def _unique_pairs(codes: np.ndarray, owner: np.ndarray, n: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """(gram, owner) pairs sorted by gram then owner, without repeats."""
    if base**Q * max(n, 1) < 2**63:
        width = np.uint64(max(n, 1))
        packed = np.sort(codes * width + owner)  # a plain sort: np.unique hashes first, 10x slower
        if len(packed):
            packed = packed[np.concatenate(([True], packed[1:] != packed[:-1]))]
        return packed // width, packed % width
    idx = np.lexsort((owner, codes))
    codes, owner = codes[idx], owner[idx]
    keep = np.ones(len(codes), bool)
    keep[1:] = (codes[1:] != codes[:-1]) | (owner[1:] != owner[:-1])
    return codes[keep], owner[keep]


class TokenIndex:
    """Keys of several words by the words they hold: finds ``"leonhard euler"`` from ``"euler"``.

    Built over the linker's distinct keys (space-joined folded tokens); only keys of two or
    more words are indexed (a one-word key is an exact match, not a partial one).

    Args:
        choices: The keys; candidates are indices into this sequence.
    """

    def __init__(self, choices: Sequence[str]) -> None:
        self._choices = choices
        # flat postings: the distinct words sorted, and for word j the key indices
        # postings[offsets[j]:offsets[j + 1]] in increasing order (int32, no Python int per posting)
        words: list[str] = []
        owners: list[int] = []
        for i, key in enumerate(choices):
            if " " in key:
                for token in dict.fromkeys(key.split(" ")):
                    words.append(token)
                    owners.append(i)
        order = sorted(range(len(words)), key=words.__getitem__)  # stable: owners stay increasing per word
        self._postings = np.asarray(owners, dtype=np.int32)[np.asarray(order, dtype=np.int64)]
        sorted_words = [words[k] for k in order]
        del words, owners, order
        starts = [k for k in range(len(sorted_words)) if k == 0 or sorted_words[k] != sorted_words[k - 1]]
        # the distinct words in one UTF-8 blob, found by hash (not a list of strings: ~60 bytes less a word)
        self._words = StringArray.from_strings(sorted_words[k] for k in starts)
        self._lookup = StringLookup(self._words)
        bounds = [*starts, len(sorted_words)]
        self._offsets = np.asarray(bounds, dtype=np.int32 if len(sorted_words) < 2**31 else np.int64)

    def _posting(self, token: str) -> npt.NDArray[np.int32]:
        """The indices of the keys holding ``token`` (increasing; empty if none)."""
        j = self._lookup.find(token)
        if j is None:
            return self._postings[:0]
        return self._postings[self._offsets[j] : self._offsets[j + 1]]

    def containing(self, tokens: Sequence[str]) -> list[tuple[int, bool]]:
        """``(index, at_end)`` of the keys holding ``tokens`` as a contiguous run of words.

        ``at_end``: the run ends the key (``"euler"`` in ``"leonhard euler"``, a surname or
        a head noun), as opposed to a run inside it (``"euler"`` in ``"euler identity"``).
        Keys equal to the run are not returned.
        """
        if not tokens:
            return []
        lists = [self._posting(t) for t in tokens]
        rarest = min(lists, key=len).tolist()
        run = list(tokens)
        out = []
        for i in rarest:
            words = self._choices[i].split(" ")
            if len(words) <= len(run):
                continue
            width = len(run)
            ends = [s + width == len(words) for s in range(len(words) - width + 1) if words[s : s + width] == run]
            if ends:
                out.append((i, any(ends)))
        return out
