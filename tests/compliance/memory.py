"""An in-memory backend of both seams: the reference that shows the protocols are backend-neutral.

:class:`MemoryBackend` holds the rows of the three kinds in lists (a broken writer can leave a
duplicate, so the suites can see one); :class:`MemoryReads` and :class:`MemoryWrites` implement
:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads` and
:class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites` over it. Filters are the Milvus
boolean expressions :mod:`~langchain_graphrag_milvus.milvus.expr` builds, parsed here
(:func:`compile_filter`: comparisons, ``in`` / ``not in`` lists, ``and`` / ``or`` / ``not``,
parentheses; anything else is an :class:`~langchain_graphrag_milvus.errors.InvalidFilterError`).
Searches are exact cosine scans. Not part of the package: a second database would write its own
adapter; this one only runs the compliance suites without a server (``tests/unit/test_seam_compliance_memory.py``).
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from langchain_graphrag_milvus.errors import CollectionNotFoundError, EmbeddingDimensionError, InvalidFilterError
from langchain_graphrag_milvus.milvus.read_seam import MAX_TOP_K, Hit, StoreReads
from langchain_graphrag_milvus.milvus.schema import KINDS, Kind
from langchain_graphrag_milvus.milvus.state_seam import StoreState
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites

__all__ = ["MemoryBackend", "MemoryReads", "MemoryWrites", "compile_filter"]

Row = dict[str, Any]
_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)'
    r"|(?P<op>==|!=|>=|<=|>|<|\(|\)|\[|\]|,)|(?P<name>[A-Za-z_][A-Za-z0-9_]*))",
    re.S,
)
_UNESCAPE = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
}


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise InvalidFilterError(f"cannot parse the filter {text!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        raw = m.group(kind)
        if kind == "str":
            value: Any = re.sub(r"\\(.)", lambda e: _UNESCAPE.get(e.group(1), e.group(1)), raw[1:-1], flags=re.S)
        elif kind == "num":
            value = float(raw) if any(c in raw for c in ".eE") else int(raw)
        elif kind == "name" and raw.lower() in ("and", "or", "not", "in", "true", "false"):
            kind, value = "kw", raw.lower()
        else:
            value = raw
        out.append((kind, value))
    return out


class _Parser:
    """Recursive descent over the tokens; each rule returns a predicate on a row."""

    def __init__(self, text: str) -> None:
        self.text, self.toks, self.i = text, _tokens(text), 0

    def fail(self) -> InvalidFilterError:
        return InvalidFilterError(f"cannot parse the filter {self.text!r} (token {self.i})")

    def peek(self) -> tuple[str, Any]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", None)

    def take(self, kind: str, value: Any = None) -> Any:
        k, v = self.peek()
        if k != kind or (value is not None and v != value):
            raise self.fail()
        self.i += 1
        return v

    def parse(self) -> Callable[[Row], bool]:
        pred = self.either()
        if self.peek()[0] != "end":
            raise self.fail()
        return pred

    def either(self) -> Callable[[Row], bool]:
        parts = [self.both()]
        while self.peek() == ("kw", "or"):
            self.i += 1
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else lambda r: any(p(r) for p in parts)

    def both(self) -> Callable[[Row], bool]:
        parts = [self.negated()]
        while self.peek() == ("kw", "and"):
            self.i += 1
            parts.append(self.negated())
        return parts[0] if len(parts) == 1 else lambda r: all(p(r) for p in parts)

    def negated(self) -> Callable[[Row], bool]:
        if self.peek() == ("kw", "not"):
            self.i += 1
            inner = self.negated()
            return lambda r: not inner(r)
        if self.peek() == ("op", "("):
            self.i += 1
            inner = self.either()
            self.take("op", ")")
            return inner
        return self.comparison()

    def value(self) -> Any:
        kind, v = self.peek()
        if kind in ("str", "num") or (kind == "kw" and v in ("true", "false")):
            self.i += 1
            return v == "true" if kind == "kw" else v
        raise self.fail()

    def comparison(self) -> Callable[[Row], bool]:
        field = self.take("name")
        kind, op = self.peek()
        if (kind, op) in (("kw", "in"), ("kw", "not")):
            negate = op == "not"
            self.i += 1
            if negate:
                self.take("kw", "in")
            values = self.listed()
            return lambda r: (r.get(field) in values) != negate
        if kind != "op" or op not in _COMPARE:
            raise self.fail()
        self.i += 1
        value, compare = self.value(), _COMPARE[op]

        def test(r: Row) -> bool:
            got = r.get(field)
            try:
                return got is not None and compare(got, value)
            except TypeError:
                return False

        return test

    def listed(self) -> list[Any]:
        self.take("op", "[")
        values: list[Any] = []
        while self.peek() != ("op", "]"):
            if values:
                self.take("op", ",")
            values.append(self.value())
        self.take("op", "]")
        return values


def compile_filter(text: str | None) -> Callable[[Row], bool]:
    """A predicate on rows for a Milvus boolean expression (None or blank: every row)."""
    if text is None or not text.strip():
        return lambda r: True
    return _Parser(text).parse()


class MemoryBackend:
    """The rows of the three kinds (lists: a duplicate stays visible), the dimension, a lock."""

    def __init__(self, partition_key_field: str | None = None) -> None:
        self.rows: dict[Kind, list[Row]] = {k: [] for k in KINDS}
        self.dim: int | None = None
        self.partition_key_field = partition_key_field
        self.lock = threading.RLock()


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _pick(r: Row, fields: Sequence[str] | None) -> Row:
    if fields is None:
        return {k: v for k, v in r.items() if k != "vector"}
    return {"pk": r["pk"], **{f: r[f] for f in fields if f in r}}


class MemoryReads(StoreReads):
    """The read seam over a :class:`MemoryBackend`."""

    def __init__(self, backend: MemoryBackend) -> None:
        self.backend = backend

    def _matching(self, kind: Kind, filter_expr: str | None) -> list[Row]:
        test = compile_filter(filter_expr)
        with self.backend.lock:
            return [r for r in self.backend.rows[kind] if test(r)]

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        """Exact cosine search."""
        if not vectors or limit < 1:
            return [[] for _ in vectors]
        if self.backend.dim is not None and len(vectors[0]) != self.backend.dim:
            raise EmbeddingDimensionError(f"vectors of {len(vectors[0])} dimensions, stored {self.backend.dim}")
        rows = self._matching(kind, filter_expr)
        out = []
        for v in vectors:
            scored = sorted(((_cosine(v, r["vector"]), r) for r in rows), key=lambda s: -s[0])
            top = scored[: min(limit, MAX_TOP_K)]
            out.append([Hit(str(r["pk"]), s, {f: r[f] for f in output_fields if f in r}) for s, r in top])
        return out

    def fetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, Row]:
        """Rows by id, inside the filter."""
        if isinstance(ids, str):
            raise TypeError(f"ids must be a list of ids, not the string {ids!r}")
        wanted = set(map(str, ids))
        if not wanted:
            return {}
        return {r["pk"]: _pick(r, output_fields) for r in self._matching(kind, filter_expr) if r["pk"] in wanted}

    def query(
        self, kind: Kind, filter_expr: str, output_fields: Sequence[str], *, limit: int = MAX_TOP_K
    ) -> list[Row]:
        """Rows matching the filter (at most ``limit``)."""
        rows = self._matching(kind, filter_expr)
        return [_pick(r, output_fields) for r in rows[: max(0, min(limit, MAX_TOP_K))]]

    def iterate(
        self, kind: Kind, output_fields: Sequence[str], batch_size: int = 4096, *, filter_expr: str | None = None
    ) -> Iterator[Row]:
        """Every row inside the filter."""
        for r in self._matching(kind, filter_expr):
            yield _pick(r, output_fields)

    def counts(self) -> dict[str, int]:
        """Rows of each kind."""
        with self.backend.lock:
            return {k: len(self.backend.rows[k]) for k in KINDS}

    def matching_passage_values(
        self, ids: Sequence[str], filter_expr: str, field: str | None = None
    ) -> list[tuple[str, Any]]:
        """(id, value) of the passages of ``ids`` inside the filter."""
        wanted = set(ids)
        rows = self._matching("passages", filter_expr)
        return [(r["pk"], None if field is None else r.get(field)) for r in rows if r["pk"] in wanted]


@contextlib.contextmanager
def _locked(lock: threading.RLock) -> Iterator[None]:
    with lock:
        yield


class MemoryWrites(StoreWrites):
    """The write seam over a :class:`MemoryBackend`: writes replace by id, deletes are at once visible."""

    def __init__(self, backend: MemoryBackend) -> None:
        self.backend = backend

    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        """Replace the rows of these ids, append the others."""
        new = {str(r["pk"]): dict(r) for r in rows}
        with self.backend.lock:
            kept = [r for r in self.backend.rows[kind] if r["pk"] not in new]
            self.backend.rows[kind] = kept + list(new.values())

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        """Drop the rows of these ids."""
        gone = set(ids)
        with self.backend.lock:
            self.backend.rows[kind] = [r for r in self.backend.rows[kind] if r["pk"] not in gone]

    def exists(self) -> bool:
        """True once :meth:`ensure_collections` ran."""
        return self.backend.dim is not None

    def check_open(self) -> int:
        """The dimension."""
        if self.backend.dim is None:
            raise CollectionNotFoundError("no collections in memory; ingest data first")
        return self.backend.dim

    def ensure_collections(self, dim: int) -> None:
        """Fix the dimension (once)."""
        if self.backend.dim is not None and self.backend.dim != dim:
            raise EmbeddingDimensionError(f"the memory store holds {self.backend.dim}-dimensional vectors, not {dim}")
        self.backend.dim = dim

    def guard(self, graph: Any) -> AbstractContextManager[None]:
        """The backend's lock (one process: nothing else to hold)."""
        return _locked(self.backend.lock)

    def keep_lease(self) -> bool:
        """Nothing to renew."""
        return False

    @property
    def partition_key_field(self) -> str | None:
        """As given."""
        return self.backend.partition_key_field

    def stored_partition_key(self) -> str | None:
        """The partition key field once the rows exist."""
        return None if self.backend.dim is None else self.backend.partition_key_field

    @property
    def location(self) -> str:
        """``memory``."""
        return "memory"

    def tenant_rows(self) -> bool:
        """Per tenant whenever there are tenants."""
        return self.backend.partition_key_field is not None

    def fit_indexes(self) -> list[Kind]:
        """No index to fit."""
        return []


class MemoryState(StoreState):
    """The store's state in memory: a generation counter, a store id and the relation properties."""

    def __init__(self, backend: MemoryBackend, prefix: str = "memory") -> None:
        self.backend = backend
        self.uri = "memory"
        self.collection_prefix = prefix
        self.partition_key_field = backend.partition_key_field
        self.lock = threading.RLock()  # the state's own: reads take the backend's lock from other threads
        self.fingerprint: dict[str, str] = {}
        self.props: dict[str, Any] = {"store_id": "memory-store", "generation": 0}

    @property  # type: ignore[override]
    def dim(self) -> int | None:
        """The backend's dimension (None before the first write)."""
        return self.backend.dim

    @dim.setter
    def dim(self, value: int | None) -> None:
        pass  # nothing cached here to forget

    def check_open(self) -> int:
        """The dimension, or CollectionNotFoundError before the first write."""
        return MemoryWrites(self.backend).check_open()

    def stamp(self) -> tuple[str | None, int]:
        """Store id and generation."""
        return str(self.props["store_id"]), int(self.props["generation"])

    def identity(self) -> tuple[str, int]:
        """Store id and generation."""
        return str(self.props["store_id"]), int(self.props["generation"])

    def set_generation(self, value: int) -> None:
        """Keep the new counter."""
        self.props["generation"] = value

    def tenant_rows(self) -> bool:
        """Per tenant whenever there are tenants."""
        return self.partition_key_field is not None

    def index_metric(self, kind: Kind) -> str:
        """Cosine, as :meth:`MemoryReads.search` scores."""
        return "COSINE"

    def index_type(self, kind: Kind) -> str:
        """Exhaustive, as :meth:`MemoryReads.search` scores every row."""
        return "FLAT"

    def forget_index_types(self) -> None:
        """No index."""

    def properties(self) -> dict[str, Any]:
        """The recorded properties (after :meth:`check_open`)."""
        self.check_open()
        return dict(self.props)

    def relation_properties(self) -> tuple[dict[str, Any], int] | None:
        """The recorded properties and the dimension; None before the first write."""
        return None if self.backend.dim is None else (dict(self.props), self.backend.dim)

    def record_properties(self, properties: Mapping[str, str]) -> dict[str, Any]:
        """Keep ``properties``."""
        self.props.update(properties)
        return dict(self.props)
