"""Entity names with the offline linker's matching keys, kept in arrays and saved as they are kept.

The offline entity linker matches a query's words against every entity name's *key*
(:func:`~.linker_names.linker_key`). Computing the keys of a million names takes seconds, so
they are computed once and kept next to the names. :class:`NameTable` has one row per entity,
in the order of the store's :class:`~.name_map.NameMap` (id → text), and holds in arrays:

* the distinct keys in first-seen row order (``choices``, a :class:`~.strings.StringArray`),
  the row each was first seen in, and each row's key as an index into them (-1: a name that
  can never be linked);
* the display names (the cleaned texts) only where they differ from the text;
* an exact lookup over the keys (:class:`~.strings.StringLookup`) and, once built, the fuzzy
  index (:class:`~.name_index.NameIndex`).

:meth:`NameTable.for_names` reuses the rows of a previous table for unchanged names;
:meth:`NameTable.arrays` / :meth:`NameTable.from_arrays` save and load the table as
``.npy``-ready arrays (no pickle) that are used as loaded, memory-mapped. :meth:`NameTable.linker_names`
is the linker's view of it (:class:`~.linker_names.LinkerNames`).

Example:
    >>> table = NameTable.for_names({"e1": "Leonhard  Euler", "e2": "the", "e3": "leonhard euler"})
    >>> list(table.keys)
    ['leonhard euler', '', 'leonhard euler']
    >>> names = table.linker_names()
    >>> list(names.choices), list(names.names)
    (['leonhard euler'], ['Leonhard Euler'])
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.text.linker_names import KEY_RULES, MAX_NAME_TOKENS, LinkerNames, linker_key
from langchain_graphrag_milvus.text.name_index import NameIndex
from langchain_graphrag_milvus.text.name_map import NameMap
from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.strings import StringArray, StringLookup, crc

__all__ = ["MAX_NAME_TOKENS", "KEY_RULES", "linker_key", "LinkerNames", "NameTable", "encode_strings", "decode_strings"]

_INDEX = "index_"
_LAYOUT = 2  # 1: one string per row for ids, texts, keys and displays


class NameTable:
    """Entity ids and texts (a :class:`~.name_map.NameMap`), linker keys and display names, in arrays.

    Args:
        names: Entity id → text, in row order.
        choices: The distinct keys, in first-seen row order.
        key_index: Each row's key as an index into ``choices`` (-1: no key).
        first_rows: The row each key was first seen in (increasing).
        display_rows: The rows whose display name is not their text (increasing).
        display_texts: Those display names.
        lookup: Exact lookup over ``choices``.
        index: A fuzzy index over ``choices`` (saved earlier).
        longest: Most words in a key (counted if not given).

    Raises:
        ValueError: The arrays do not fit each other.
    """

    def __init__(
        self,
        names: NameMap,
        choices: StringArray,
        key_index: npt.NDArray[np.int32],
        first_rows: npt.NDArray[np.int32],
        display_rows: npt.NDArray[np.int32],
        display_texts: StringArray,
        lookup: StringLookup | None = None,
        index: NameIndex | None = None,
        longest: int | None = None,
    ) -> None:
        _check(len(names), len(choices), key_index, first_rows, display_rows, len(display_texts))
        self.names_map = names
        self.choices = choices
        self.key_index = np.ascontiguousarray(key_index)
        self.first_rows = np.ascontiguousarray(first_rows)
        self.display_rows = np.ascontiguousarray(display_rows)
        self.display_texts = display_texts
        self.lookup = lookup if lookup is not None else StringLookup(choices)
        self.longest = _longest(choices) if longest is None else int(longest)
        self._saved_index = index if index is not None and len(index) == len(choices) else None
        self._linker_names: LinkerNames | None = None
        self._display_at = self.display_rows.data

    # ------------------------------------------------------------------ building
    @classmethod
    def for_names(cls, names: Mapping[str, str], previous: NameTable | None = None) -> NameTable:
        """The table of ``names`` (id → text); rows of ``previous`` whose text is unchanged are reused."""
        nm = NameMap.from_mapping(names)
        texts, n = nm.texts, len(nm)
        prev_rows = np.full(n, -1, np.int64)
        if previous is not None and len(previous) and n:
            prev_rows = _previous_rows(nm, previous)
        reused = np.flatnonzero(prev_rows >= 0)
        row_key = np.full(n, -1, np.int64)
        exceptions: list[tuple[int, str]] = []
        old_choices, old_crc = StringArray.empty(), np.empty(0, np.uint32)
        if previous is not None and len(reused):
            old_choices, old_crc = previous.choices, previous.lookup.crc()
            row_key[reused] = previous.key_index[prev_rows[reused]]
            at = np.searchsorted(previous.display_rows, prev_rows[reused])
            hit = at < len(previous.display_rows)
            hit[hit] = previous.display_rows[at[hit]] == prev_rows[reused][hit]
            exceptions += zip(reused[hit].tolist(), (previous.display_texts[j] for j in at[hit].tolist()))
        new_keys: dict[str, int] = {}
        old_lookup = previous.lookup if previous is not None and len(reused) else None
        for r in np.flatnonzero(prev_rows < 0).tolist():
            text = texts[r]
            key = linker_key(text)
            if not key:
                continue
            display = clean_text(text)
            if display != text:
                exceptions.append((r, display))
            j = old_lookup.find(key) if old_lookup is not None else None
            row_key[r] = j if j is not None else len(old_choices) + new_keys.setdefault(key, len(new_keys))
        all_choices = old_choices.concat(StringArray.from_strings(new_keys))
        all_crc = np.concatenate([old_crc, np.fromiter(map(crc, new_keys), np.uint32, len(new_keys))])
        return cls._assemble(nm, row_key, all_choices, all_crc, exceptions)

    @classmethod
    def _assemble(
        cls,
        names: NameMap,
        row_key: np.ndarray,
        all_choices: StringArray,
        all_crc: np.ndarray,
        exceptions: list[tuple[int, str]],
    ) -> NameTable:
        """The table whose row ``r`` has key ``all_choices[row_key[r]]`` (-1: none): distinct keys by first row."""
        valid = np.flatnonzero(row_key >= 0)
        ids, first = np.unique(row_key[valid], return_index=True)
        first_rows = valid[first]
        order = np.argsort(first_rows, kind="stable")
        chosen, first_rows = ids[order], first_rows[order]
        remap = np.full(len(all_choices) + 1, -1, np.int64)  # the last entry: -1 stays -1
        remap[chosen] = np.arange(len(chosen))
        key_index = remap[row_key].astype(np.int32)
        choices = all_choices.take(chosen)
        exceptions.sort()
        display_rows = np.array([r for r, _ in exceptions], np.int32)
        display_texts = StringArray.from_strings(d for _, d in exceptions)
        lookup = StringLookup(choices, all_crc[chosen])
        return cls(names, choices, key_index, first_rows.astype(np.int32), display_rows, display_texts, lookup)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self.key_index)

    def names(self) -> NameMap:
        """Entity id → text, in row order."""
        return self.names_map

    @property
    def ids(self) -> list[str]:
        """Entity ids, in row order (a new list)."""
        return list(self.names_map)

    @property
    def texts(self) -> StringArray:
        """Each entity's text as stored."""
        return self.names_map.texts

    @property
    def keys(self) -> Sequence[str]:
        """Each row's linker key (``""``: never linked)."""
        return _Keys(self)

    @property
    def displays(self) -> Sequence[str]:
        """Each row's display name (its cleaned text, or the text itself)."""
        return _Displays(self, None)

    def display(self, row: int) -> str:
        """The display name of ``row``."""
        at = self._display_at
        j = bisect.bisect_left(at, row)
        if j < len(at) and at[j] == row:
            return self.display_texts[j]
        return self.names_map.texts[row]

    def linker_names(self) -> LinkerNames:
        """The linker's choices over this table (made once; with the saved fuzzy index if it fits)."""
        if self._linker_names is None:
            self._linker_names = LinkerNames(
                self.choices,
                _Displays(self, self.first_rows),
                self._saved_index,
                rows=self.first_rows,
                longest=self.longest,
                lookup=self.lookup,
            )
        return self._linker_names

    # ------------------------------------------------------------------ saving
    def arrays(self) -> dict[str, np.ndarray]:
        """The table as named arrays (the fuzzy index too once it is built); see :meth:`from_arrays`."""
        out: dict[str, np.ndarray] = {
            "rules": np.array([KEY_RULES], np.int64),
            "layout": np.array([_LAYOUT], np.int64),
            **self.names_map.arrays(),
            **self.choices.arrays("choices_"),
            "key_index": self.key_index,
            "first_rows": self.first_rows,
            "longest": np.array([self.longest], np.int64),
            "display_rows": self.display_rows,
            **self.display_texts.arrays("display_"),
            **self.lookup.arrays("lookup_"),
        }
        index = self.linker_names().built_index
        if index is not None:
            out.update({_INDEX + k: v for k, v in index.arrays().items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> NameTable:
        """A table from :meth:`arrays` (or the layout before it); keys of other rules are recomputed.

        Raises:
            ValueError: An array is missing, undecodable or inconsistent.
        """
        try:
            names = NameMap.from_arrays(arrays)
            rules = int(np.asarray(arrays["rules"]).reshape(-1)[0])
            if rules != KEY_RULES:
                return cls.for_names(names)
            if "key_index" not in arrays:
                return _from_layout_1(names, arrays)
            choices = StringArray.from_arrays(arrays, "choices_")
            lookup = StringLookup.from_arrays(choices, arrays, "lookup_")
            saved = {k[len(_INDEX) :]: v for k, v in arrays.items() if k.startswith(_INDEX)}
            return cls(
                names,
                choices,
                np.asarray(arrays["key_index"]),
                np.asarray(arrays["first_rows"]),
                np.asarray(arrays["display_rows"]),
                StringArray.from_arrays(arrays, "display_"),
                lookup,
                NameIndex.from_arrays(saved) if saved else None,
                int(np.asarray(arrays["longest"]).reshape(-1)[0]),
            )
        except (KeyError, IndexError, UnicodeDecodeError) as exc:
            raise ValueError(f"name table arrays are incomplete or undecodable: {exc!r}") from None


class _Keys(Sequence[str]):
    """The linker key of each row of a table."""

    def __init__(self, table: NameTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(len(self)))]
        j = int(self._table.key_index[row])
        return self._table.choices[j] if j >= 0 else ""

    def __iter__(self) -> Iterator[str]:
        choices = list(self._table.choices)
        return (choices[j] if j >= 0 else "" for j in self._table.key_index.tolist())


class _Displays(Sequence[str]):
    """Display names of a table's rows (``rows``: of those rows only, e.g. each key's first)."""

    def __init__(self, table: NameTable, rows: np.ndarray | None) -> None:
        self._table = table
        self._rows = rows
        self._at = np.ascontiguousarray(rows).data if rows is not None else None

    def __len__(self) -> int:
        return len(self._table) if self._rows is None else len(self._rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if self._at is None:
            return self._table.display(int(i) if i >= 0 else int(i) + len(self))
        return self._table.display(self._at[i])

    def __iter__(self) -> Iterator[str]:
        table = self._table
        texts = table.names_map.texts
        rows = range(len(table)) if self._rows is None else self._rows.tolist()
        exceptions = dict(zip(table.display_rows.tolist(), table.display_texts))
        if self._rows is None:
            return (exceptions.get(r, t) for r, t in enumerate(texts))
        return (exceptions[r] if r in exceptions else texts[r] for r in rows)


def _previous_rows(names: NameMap, previous: NameTable) -> np.ndarray:
    """The row of each of ``names``' rows in ``previous`` if its text is unchanged (-1 otherwise)."""
    old = previous.names_map
    if names.compact and old.compact:
        rows = old.rows_of_keys(names.keys_array)
    else:
        where = {eid: i for i, eid in enumerate(old)}
        rows = np.array([where.get(eid, -1) for eid in names], np.int64)
    matched = np.flatnonzero(rows >= 0)
    same = names.texts.same_at(matched, old.texts, rows[matched])
    out = np.full(len(names), -1, np.int64)
    out[matched[same]] = rows[matched[same]]
    return out


def _from_layout_1(names: NameMap, arrays: Mapping[str, np.ndarray]) -> NameTable:
    """A table saved with one string per row for keys and displays (``""``: the text itself)."""
    keys = StringArray.from_arrays(arrays, "keys_")
    same = StringArray.from_arrays(arrays, "displays_")
    if not len(keys) == len(same) == len(names):
        raise ValueError("name table arrays disagree in length")
    first: dict[str, int] = {}
    row_key = np.array([first.setdefault(k, len(first)) if k else -1 for k in keys], np.int64)
    exceptions = [(r, d) for r, d in enumerate(same) if d]
    distinct = StringArray.from_strings(first)
    table = NameTable._assemble(names, row_key, distinct, np.asarray(StringLookup(distinct).crc()), exceptions)
    saved = {k[len(_INDEX) :]: v for k, v in arrays.items() if k.startswith(_INDEX)}
    if saved:
        table._saved_index = NameIndex.from_arrays(saved)
        table._saved_index = table._saved_index if len(table._saved_index) == len(table.choices) else None
    return table


def _check(n: int, c: int, key_index: np.ndarray, first_rows: np.ndarray, display_rows: np.ndarray, d: int) -> None:
    """The arrays of a table fit each other (rows and keys in range, first rows increasing)."""
    if len(key_index) != n or len(first_rows) != c or len(display_rows) != d:
        raise ValueError("name table arrays disagree in length")
    for name, values, hi in (("key", key_index, c), ("first row", first_rows, n), ("display row", display_rows, n)):
        low = -1 if name == "key" else 0
        if np.asarray(values).dtype.kind not in "iu" or (len(values) and (values.min() < low or values.max() >= hi)):
            raise ValueError(f"name table {name}s out of range")
    if c and (np.any(np.diff(first_rows) <= 0) or np.any(key_index[first_rows] != np.arange(c))):
        raise ValueError("name table first rows do not match the keys")
    if d and np.any(np.diff(display_rows) <= 0):
        raise ValueError("name table display rows are not increasing")


def _longest(choices: StringArray) -> int:
    """Most words in a key (spaces + 1; 1 when there are none)."""
    if not len(choices):
        return 1
    spaces = np.add.reduceat((choices.blob == 32).astype(np.int64), choices.offsets[:-1].astype(np.int64))
    return int(spaces.max()) + 1


def encode_strings(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 blob (joined by newlines) and the byte offset of each string's start.

    ``offsets`` has ``len(values) + 1`` entries; string ``i`` is ``blob[offsets[i]:offsets[i+1]-1]``.
    """
    encoded = [v.encode("utf-8", "surrogatepass") for v in values]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) + 1 for b in encoded], out=offsets[1:])
    return np.frombuffer(b"\n".join(encoded), np.uint8), offsets


def decode_strings(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    """Inverse of :func:`encode_strings`.

    Raises:
        ValueError: The offsets do not fit the blob, or it is not UTF-8.
    """
    offsets = np.asarray(offsets)
    raw = bytes(np.asarray(blob, np.uint8))
    n = len(offsets) - 1
    if n < 0 or offsets.ndim != 1 or int(offsets[0]) != 0 or int(offsets[-1]) != len(raw) + (1 if n else 0):
        raise ValueError("string offsets do not fit their blob")
    if n == 0:
        return []
    if np.any(np.diff(offsets) < 1):
        raise ValueError("string offsets are not increasing")
    text = raw.decode("utf-8", "surrogatepass")
    parts = text.split("\n")
    if len(parts) == n:  # no string holds a newline (the usual case): one split
        return parts
    bounds = offsets.tolist()
    return [raw[a : b - 1].decode("utf-8", "surrogatepass") for a, b in zip(bounds[:-1], bounds[1:])]
