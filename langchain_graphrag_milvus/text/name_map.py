"""Entity id → name as a compact, immutable mapping: ids as uint64 keys, names as one UTF-8 blob.

A store keeps the name of every entity (the offline linker, the subgraph pictures and the
browse page read them). As a dict of 16-hex-digit ids to strings that is ~115 bytes per
entity; :class:`NameMap` keeps the integer behind each id (8 bytes: the ids are the
entities' uint64 graph keys written in hex, converted only by the id border
:mod:`langchain_graphrag_milvus.graph.ids`) and the names in a
:class:`~.strings.StringArray` (their UTF-8 bytes, a newline and a 4-byte offset), ~30
bytes per entity in all. It is a ``Mapping[str, str]`` in insertion order, equal to the
dict it replaces; writes make new maps (:meth:`NameMap.merged`, :meth:`NameMap.without`,
:meth:`NameMap.sorted_by_id`). Ids that are not 16 lowercase hex digits (possible in a
hand-made mapping, never made by this package) keep the map a plain dict inside.

Example:
    >>> names = NameMap.from_mapping({"00000000000000ff": "Leonhard Euler", "0000000000000001": "Basel"})
    >>> names["00000000000000ff"], list(names), names.get("x")
    ('Leonhard Euler', ['00000000000000ff', '0000000000000001'], None)
    >>> names.merged({"0000000000000002": "Gödel"}) == {**names, "0000000000000002": "Gödel"}
    True
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.ids import canonical_key, canonical_keys, find_keys, keys_to_ids, row_of_key
from langchain_graphrag_milvus.text.strings import StringArray

__all__ = ["NameMap"]

_CHUNK = 4096


class NameMap(Mapping[str, str]):
    """An immutable id → name mapping stored as arrays (see the module docstring).

    Build it with :meth:`from_mapping` or :meth:`from_items`; :meth:`from_arrays` takes the
    arrays of :meth:`arrays` (e.g. memory-mapped from a saved index).
    """

    __slots__ = ("_keys", "_order", "_sorted", "texts", "_plain")

    def __init__(
        self,
        keys: npt.NDArray[np.uint64] | None,
        texts: StringArray,
        plain: dict[str, str] | None = None,
    ) -> None:
        self._plain = plain
        self.texts = texts
        self._keys = np.ascontiguousarray(keys) if keys is not None else np.empty(0, np.uint64)
        self._order: npt.NDArray[np.int32] | None = None  # argsort of the keys, unless they are sorted
        if plain is None and len(self._keys) != len(texts):
            raise ValueError("a name map needs one key per name")
        if len(self._keys) > 1 and bool(np.any(self._keys[1:] <= self._keys[:-1])):
            order = np.argsort(self._keys, kind="stable")
            ks = self._keys[order]
            if bool(np.any(ks[1:] == ks[:-1])):
                raise ValueError("a name map's ids must be distinct")
            self._order = order.astype(np.int32)
        self._sorted = np.ascontiguousarray(self._keys).data if self._order is None else None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_items(cls, items: Iterable[tuple[str, str]] | dict[str, str]) -> NameMap:
        """The map of ``(id, name)`` pairs or of a dict (a repeated id keeps its first place and its last name)."""
        as_dict: dict[str, str] = items if isinstance(items, dict) else dict(items)
        keys = canonical_keys(list(as_dict))
        if keys is None:
            return cls(None, StringArray.from_strings(as_dict.values()), dict(as_dict))
        return cls(keys, StringArray.from_strings(as_dict.values()))

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str]) -> NameMap:
        """``mapping`` as a name map (itself if it is one)."""
        if isinstance(mapping, NameMap):
            return mapping
        return cls.from_items(mapping if isinstance(mapping, dict) else dict(mapping.items()))

    @classmethod
    def empty(cls) -> NameMap:
        """The map with no names."""
        return cls(np.empty(0, np.uint64), StringArray.empty())

    @property
    def key_array(self) -> npt.NDArray[np.uint64] | None:
        """The ids as uint64 keys, in the map's order (None when some id is not a key: a plain map)."""
        return None if self._plain is not None else self._keys

    def arrays(self) -> dict[str, np.ndarray]:
        """``id_keys`` and ``texts_blob`` / ``texts_offsets`` (``ids_blob`` / ``ids_offsets`` for other ids)."""
        if self._plain is not None:
            return {
                **StringArray.from_strings(self._plain).arrays("ids_"),
                **StringArray.from_strings(self._plain.values()).arrays("texts_"),
            }
        return {"id_keys": self._keys, **self.texts.arrays("texts_")}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> NameMap:
        """The map saved by :meth:`arrays` (or by the layout before it: ids as strings).

        Raises:
            KeyError: An array is missing.
            ValueError: The arrays do not fit each other.
        """
        texts = StringArray.from_arrays(arrays, "texts_")
        if "id_keys" in arrays:
            keys = np.asarray(arrays["id_keys"])
            if keys.dtype != np.uint64 or keys.ndim != 1:
                raise ValueError("saved entity keys are not a uint64 vector")
            return cls(keys, texts)
        ids = StringArray.from_arrays(arrays, "ids_")
        if len(ids) != len(texts):
            raise ValueError("saved entity ids and names disagree in length")
        return cls.from_items(zip(ids, texts))

    # ------------------------------------------------------------------ Mapping
    def __len__(self) -> int:
        return len(self._plain) if self._plain is not None else len(self.texts)

    def row(self, entity_id: str) -> int | None:
        """The position of ``entity_id`` in insertion order, or None."""
        if self._plain is not None:
            raise TypeError("this name map has ids that are not uint64 keys")
        key = canonical_key(entity_id)  # "0x..", "_", upper case: not this package's ids
        return None if key is None else row_of_key(self._keys, key, self._order, self._sorted)

    def __getitem__(self, entity_id: str) -> str:
        if self._plain is not None:
            return self._plain[entity_id]
        row = self.row(entity_id)
        if row is None:
            raise KeyError(entity_id)
        return self.texts[row]

    def __contains__(self, entity_id: object) -> bool:
        if self._plain is not None:
            return entity_id in self._plain
        return isinstance(entity_id, str) and self.row(entity_id) is not None

    def __iter__(self) -> Iterator[str]:
        if self._plain is not None:
            yield from self._plain
            return
        for a in range(0, len(self._keys), _CHUNK):
            yield from keys_to_ids(self._keys[a : a + _CHUNK])

    def items(self) -> ItemsView[str, str]:
        """``(id, name)`` pairs in insertion order (decoded a few thousand at a time)."""
        return _Items(self)

    def values(self) -> ValuesView[str]:
        """Names in insertion order."""
        return _Values(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NameMap) and self._plain is None and other._plain is None:
            if not np.array_equal(self._keys, other._keys):
                return False
            rows = np.arange(len(self))
            return bool(np.all(self.texts.same_at(rows, other.texts, rows)))
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # a mapping, like dict

    def __repr__(self) -> str:
        shown = ", ".join(f"{k!r}: {v!r}" for k, v in zip(self, list(self.values())[:3]))
        return f"NameMap({{{shown}{', ...' if len(self) > 3 else ''}}}, n={len(self)})"

    # ------------------------------------------------------------------ arrays
    @property
    def compact(self) -> bool:
        """True if the ids are kept as uint64 keys (False: a plain dict inside)."""
        return self._plain is None

    @property
    def keys_array(self) -> npt.NDArray[np.uint64]:
        """The uint64 key of each id, in insertion order (``TypeError`` for a plain map)."""
        if self._plain is not None:
            raise TypeError("this name map has ids that are not uint64 keys")
        return self._keys

    def rows_of_keys(self, keys: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """The position of each uint64 key (-1 where absent), vectorised."""
        if self._plain is not None:
            where = {eid: i for i, eid in enumerate(self._plain)}
            return np.array([where.get(eid, -1) for eid in keys_to_ids(keys)], np.int64)
        return find_keys(self._keys, keys, self._order)

    def names_of_keys(self, keys: npt.ArrayLike) -> list[str | None]:
        """The name of each uint64 key (None where absent)."""
        rows = self.rows_of_keys(keys).tolist()
        texts = self.texts if self._plain is None else list(self._plain.values())
        return [texts[r] if r >= 0 else None for r in rows]

    # ------------------------------------------------------------------ new maps
    def merged(self, new: Mapping[str, str]) -> NameMap:
        """``{**self, **new}`` as a name map (known ids keep their place and take the new name)."""
        if not new:
            return self
        other = NameMap.from_mapping(new)
        if self._plain is not None or other._plain is not None:
            return NameMap.from_items({**dict(self.items()), **dict(other.items())})
        rows = self.rows_of_keys(other._keys)
        fresh = np.flatnonzero(rows < 0)
        if len(fresh) == len(other):  # only new ids (the usual write): appended, nothing gathered
            return NameMap(np.concatenate([self._keys, other._keys]), self.texts.concat(other.texts))
        take = np.arange(len(self), dtype=np.int64)
        known = rows >= 0
        take[rows[known]] = len(self) + np.flatnonzero(known)
        take = np.concatenate([take, len(self) + fresh])
        texts = self.texts.concat(other.texts).take(take)
        return NameMap(np.concatenate([self._keys, other._keys[fresh]]), texts)

    def without(self, ids: Iterable[str]) -> NameMap:
        """This map without ``ids`` (unknown ids ignored)."""
        gone = set(ids)
        if not gone:
            return self
        if self._plain is not None:
            return NameMap.from_items({k: v for k, v in self._plain.items() if k not in gone})
        rows = [r for r in (self.row(i) for i in gone) if r is not None]
        if not rows:
            return self
        keep = np.ones(len(self), bool)
        keep[rows] = False
        kept = np.flatnonzero(keep)
        return NameMap(self._keys[kept], self.texts.take(kept))

    def sorted_by_id(self) -> NameMap:
        """This map in id order (``dict(sorted(self.items()))``)."""
        if self._plain is not None:
            return NameMap.from_items(dict(sorted(self._plain.items())))
        if self._order is None:
            return self
        return NameMap(self._keys[self._order], self.texts.take(self._order))


class _Items(ItemsView[str, str]):
    _mapping: NameMap

    def __iter__(self) -> Iterator[tuple[str, str]]:
        names = self._mapping
        if names._plain is not None:
            yield from names._plain.items()
            return
        yield from zip(names, names.texts)


class _Values(ValuesView[str]):
    _mapping: NameMap

    def __iter__(self) -> Iterator[str]:
        names = self._mapping
        yield from (names._plain.values() if names._plain is not None else names.texts)
