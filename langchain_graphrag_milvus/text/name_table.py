"""Entity names with the offline linker's matching keys, kept as plain lists and saved as arrays.

The offline entity linker matches a query's words against every entity name's *key*: the
name's folded tokens (:func:`~.tokens.name_tokens`) joined by one space. Computing the keys
of a million names takes seconds, so they are computed once and kept next to the names:

* :class:`NameTable` — one row per entity, in the order of the store's name dict: id, text
  (as stored), key (``""`` if the name can never be linked) and display name (the cleaned
  text). :meth:`NameTable.for_names` reuses the rows of a previous table for unchanged
  names; :meth:`NameTable.arrays` / :meth:`NameTable.from_arrays` save and load it as
  ``.npy``-ready arrays (UTF-8 blobs with offsets: no pickle).
* :class:`LinkerNames` — what a linker needs: the distinct keys in first-seen order, each
  with the display name of its first entity, and the fuzzy :class:`~.name_index.NameIndex`
  over the keys (built on first use, saved with the table once built).

Example:
    >>> table = NameTable.for_names({"e1": "Leonhard  Euler", "e2": "the", "e3": "leonhard euler"})
    >>> table.keys
    ['leonhard euler', '', 'leonhard euler']
    >>> names = table.linker_names()
    >>> names.choices, names.names
    (['leonhard euler'], ['Leonhard Euler'])
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat

import numpy as np

from langchain_graphrag_milvus.text.name_index import NameIndex, TokenIndex
from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS, name_tokens

__all__ = ["MAX_NAME_TOKENS", "KEY_RULES", "linker_key", "LinkerNames", "NameTable", "encode_strings", "decode_strings"]

#: Names of more words than this are never linked.
MAX_NAME_TOKENS = 12
#: Version of the key rules; saved keys of another version are recomputed.
KEY_RULES = 1
_INDEX = "index_"


def linker_key(name: str) -> str:
    """The key under which the linker finds ``name``: folded tokens joined by spaces, or ``""``.

    ``""`` for a name without words, of more than :data:`MAX_NAME_TOKENS` words or made of
    stopwords only. Tokens never hold a space (they are runs of word characters, folded), so
    the joined key splits back into the same tokens.
    """
    tokens = name_tokens(name)
    if not tokens or len(tokens) > MAX_NAME_TOKENS or all(t in NAME_STOPWORDS for t in tokens):
        return ""
    return " ".join(tokens)


class LinkerNames:
    """The linker's choices: distinct keys (first-seen order) and each one's display name.

    Iterating it yields the display names, so any factory that wants names accepts it.

    Args:
        choices: Distinct keys.
        names: Display name of each key.
        index: A fuzzy index already built over ``choices`` (else built on first use).
    """

    def __init__(
        self,
        choices: list[str],
        names: list[str],
        index: NameIndex | None = None,
        *,
        rows: list[int] | None = None,
        longest: int | None = None,
    ) -> None:
        if len(choices) != len(names) or (index is not None and len(index) != len(choices)):
            raise ValueError("choices, names and index must have one entry per key")
        self.choices = choices
        self.names = names
        #: Key → display name (the exact lookup).
        self.by_key = dict(zip(choices, names))
        #: Most words in a key.
        self.longest = max(map(str.count, choices, repeat(" ")), default=0) + 1 if longest is None else longest
        #: The table row each key was first seen in (when made by :meth:`from_rows`).
        self.rows = rows
        self._index = index
        self._tokens: TokenIndex | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_rows(cls, keys: Sequence[str], displays: Sequence[str], index: NameIndex | None = None) -> LinkerNames:
        """The distinct keys of per-entity rows (``""`` skipped), first display name kept.

        ``index``: one saved earlier over these keys; ignored if its size does not fit.
        """
        first: dict[str, int] = {}
        for row, key in enumerate(keys):
            if key and key not in first:
                first[key] = row
        if index is not None and len(index) != len(first):
            index = None
        rows = list(first.values())
        return cls(list(first), [displays[r] for r in rows], index, rows=rows)

    @property
    def built_index(self) -> NameIndex | None:
        """The fuzzy index if it was built (or loaded) already; nothing is computed."""
        return self._index

    def index(self) -> NameIndex:
        """The fuzzy index over :attr:`choices` (built once, on first call)."""
        if self._index is None:
            with self._lock:
                if self._index is None:
                    self._index = NameIndex(self.choices)
        return self._index

    def token_index(self) -> TokenIndex:
        """The word index over :attr:`choices` for partial names (built once, on first call)."""
        if self._tokens is None:
            with self._lock:
                if self._tokens is None:
                    self._tokens = TokenIndex(self.choices)
        return self._tokens

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.choices)


class NameTable:
    """Entity id, text, linker key and display name, one row per entity (aligned lists).

    Args:
        ids: Entity ids, in the order of the store's name dict.
        texts: Each entity's text as stored.
        keys: Each text's :func:`linker_key`.
        displays: Each text cleaned (:func:`~.names.clean_text`).
        index: A fuzzy index over the table's :class:`LinkerNames` (saved earlier).
    """

    def __init__(
        self,
        ids: list[str],
        texts: list[str],
        keys: list[str],
        displays: list[str],
        index: NameIndex | None = None,
        linker_names: LinkerNames | None = None,
    ) -> None:
        if not len(ids) == len(texts) == len(keys) == len(displays):
            raise ValueError("a name table needs one id, text, key and display name per row")
        self.ids, self.texts, self.keys, self.displays = ids, texts, keys, displays
        self._linker_names = linker_names
        self._saved_index = index
        self._rows: dict[str, int] | None = None

    @classmethod
    def for_names(cls, names: Mapping[str, str], previous: NameTable | None = None) -> NameTable:
        """The table of ``names`` (id → text); rows of ``previous`` whose text is unchanged are reused."""
        rows = previous.row_of() if previous is not None else {}
        ids, texts, keys, displays = [], [], [], []
        for eid, text in names.items():
            row = rows.get(eid)
            if previous is not None and row is not None and previous.texts[row] == text:
                key, display = previous.keys[row], previous.displays[row]
            else:
                key = linker_key(text)
                display = clean_text(text) if key else text
                display = text if display == text else display  # one string, not two equal ones (memory)
            ids.append(eid)
            texts.append(text)
            keys.append(key)
            displays.append(display)
        return cls(ids, texts, keys, displays)

    def row_of(self) -> dict[str, int]:
        """Entity id → row (built once)."""
        if self._rows is None:
            self._rows = {eid: i for i, eid in enumerate(self.ids)}
        return self._rows

    def names(self) -> dict[str, str]:
        """Entity id → text, in row order."""
        return dict(zip(self.ids, self.texts))

    def linker_names(self) -> LinkerNames:
        """The linker's choices over this table (computed once; with the saved index if it fits)."""
        if self._linker_names is None:
            self._linker_names = LinkerNames.from_rows(self.keys, self.displays, self._saved_index)
        return self._linker_names

    def __len__(self) -> int:
        return len(self.ids)

    def arrays(self) -> dict[str, np.ndarray]:
        """The table as named arrays (the fuzzy index too once it is built); see :meth:`from_arrays`."""
        out: dict[str, np.ndarray] = {"rules": np.array([KEY_RULES], np.int64)}
        same = ["" if d == t else d for d, t in zip(self.displays, self.texts)]
        for name, values in (("ids", self.ids), ("texts", self.texts), ("keys", self.keys), ("displays", same)):
            out[f"{name}_blob"], out[f"{name}_offsets"] = encode_strings(values)
        linker_names = self.linker_names()
        if linker_names.rows is not None:  # loading then needs no pass over the rows
            out["first_rows"] = np.array(linker_names.rows, np.int64)
            out["longest"] = np.array([linker_names.longest], np.int64)
        index = linker_names.built_index
        if index is not None:
            out.update({_INDEX + k: v for k, v in index.arrays().items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> NameTable:
        """A table from :meth:`arrays`; keys of other rules are recomputed from the texts.

        Raises:
            ValueError: An array is missing, undecodable or inconsistent.
        """
        try:
            columns = ("ids", "texts", "keys", "displays")
            ids, texts, keys, same = (decode_strings(arrays[f"{n}_blob"], arrays[f"{n}_offsets"]) for n in columns)
            rules = int(np.asarray(arrays["rules"]).reshape(-1)[0])
        except (KeyError, IndexError, UnicodeDecodeError) as exc:
            raise ValueError(f"name table arrays are incomplete or undecodable: {exc}") from None
        if not len(ids) == len(texts) == len(keys) == len(same):
            raise ValueError("name table arrays disagree in length")
        if rules != KEY_RULES:
            return cls.for_names(dict(zip(ids, texts)))
        displays = [d if d else t for d, t in zip(same, texts)]
        saved = {k[len(_INDEX) :]: v for k, v in arrays.items() if k.startswith(_INDEX)}
        index = NameIndex.from_arrays(saved) if saved else None
        linker_names = None
        if "first_rows" in arrays and "longest" in arrays:
            rows = np.asarray(arrays["first_rows"], np.int64)
            if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= len(keys)):
                raise ValueError("name table rows out of range")
            first = rows.tolist()
            choices = [keys[r] for r in first]
            if index is not None and len(index) != len(choices):
                index = None
            longest = int(np.asarray(arrays["longest"]).reshape(-1)[0])
            linker_names = LinkerNames(choices, [displays[r] for r in first], index, rows=first, longest=longest)
        return cls(ids, texts, keys, displays, index, linker_names)


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
