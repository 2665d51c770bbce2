"""What the offline entity linker matches against: distinct name keys, each with a display name.

The linker matches a query's words against every entity name's *key* (:func:`linker_key`:
the name's folded tokens joined by one space). :class:`LinkerNames` holds the distinct keys
in first-seen order (``choices``), the display name of each (``names``), the exact lookup
key → display name (``by_key``), and builds the fuzzy :class:`~.name_index.NameIndex` and
the word :class:`~.name_index.TokenIndex` over the keys on first use.

Made from plain lists (a linker over a few names) it keeps lists and a dict; made by a
:class:`~.name_table.NameTable` its keys are a :class:`~.strings.StringArray`, its display
names a view into the table and ``by_key`` a :class:`~.strings.StringLookup` (~10 bytes a key
instead of a dict's ~100).

Example:
    >>> names = LinkerNames(["leonhard euler"], ["Leonhard Euler"])
    >>> names.by_key.get("leonhard euler"), names.longest
    ('Leonhard Euler', 2)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat

import numpy as np

from langchain_graphrag_milvus.text.name_index import NameIndex, TokenIndex
from langchain_graphrag_milvus.text.strings import StringLookup
from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS, name_tokens

__all__ = ["MAX_NAME_TOKENS", "KEY_RULES", "linker_key", "LinkerNames", "KeyNames"]

#: Names of more words than this are never linked.
MAX_NAME_TOKENS = 12
#: Version of the key rules; saved keys of another version are recomputed.
KEY_RULES = 1


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


class KeyNames(Mapping[str, str]):
    """Key → display name through a :class:`~.strings.StringLookup` over the keys (the exact lookup).

    Args:
        lookup: Finds a key's position among the choices.
        names: The display name at each position.
    """

    __slots__ = ("lookup", "names")

    def __init__(self, lookup: StringLookup, names: Sequence[str]) -> None:
        self.lookup = lookup
        self.names = names

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        """The display name of ``key``, or ``default``."""
        position = self.lookup.find(key) if isinstance(key, str) else None
        return default if position is None else self.names[position]

    def __getitem__(self, key: str) -> str:
        name = self.get(key)
        if name is None:
            raise KeyError(key)
        return name

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.lookup.find(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.lookup.strings)

    def __len__(self) -> int:
        return len(self.lookup)


class LinkerNames:
    """The linker's choices: distinct keys (first-seen order) and each one's display name.

    Iterating it yields the display names, so any factory that wants names accepts it.

    Args:
        choices: Distinct keys.
        names: Display name of each key.
        index: A fuzzy index already built over ``choices`` (else built on first use).
        rows: The table row each key was first seen in (kept for saving).
        longest: Most words in a key (counted if not given).
        lookup: An exact lookup over ``choices`` (else ``by_key`` is a dict).
    """

    def __init__(
        self,
        choices: Sequence[str],
        names: Sequence[str],
        index: NameIndex | None = None,
        *,
        rows: Sequence[int] | np.ndarray | None = None,
        longest: int | None = None,
        lookup: StringLookup | None = None,
    ) -> None:
        if len(choices) != len(names) or (index is not None and len(index) != len(choices)):
            raise ValueError("choices, names and index must have one entry per key")
        if lookup is not None and len(lookup) != len(choices):
            raise ValueError("the lookup must have one entry per key")
        self.choices = choices
        self.names = names
        #: Key → display name (the exact lookup).
        self.by_key: Mapping[str, str] = KeyNames(lookup, names) if lookup is not None else dict(zip(choices, names))
        #: Most words in a key.
        self.longest = max(map(str.count, choices, repeat(" ")), default=0) + 1 if longest is None else longest
        #: The table row each key was first seen in (when made by a name table).
        self.rows = rows
        self._index = index
        self._tokens: TokenIndex | None = None
        self._lock = threading.Lock()

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
