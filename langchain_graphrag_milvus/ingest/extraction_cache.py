"""The extraction cache (sqlite or memory) and the identity of an extractor that keys it.

**Extractor identity.** Cached triplets are keyed by (extractor identity, passage text),
so two stores sharing one cache file never get each other's triplets unless their
extractors are the same. The identity of an extractor is, in this order:

1. its ``run_name`` (``extractor.with_config(run_name="my-extractor-v2")``): a name you
   choose is trusted as is, so you decide when a changed extractor starts a new cache
   namespace. :func:`~langchain_graphrag_milvus.ingest.triplets.create_llm_triplet_extractor`
   sets ``graph_triplet_extraction[MODEL]``, with a digest of the prompt, entity types,
   schema and examples when they are not the defaults;
2. a ``cache_key`` string attribute, or the ``name`` a ``Runnable`` subclass sets on its
   instances (the offline extractor: rules version, spaCy pipeline and its version);
3. otherwise its name followed by ``@`` and a digest of its *code*: for a
   ``RunnableLambda`` the bytecode, constants and names of its function (not the file
   name or line numbers), its defaults and the values it closes over (their ``repr``
   without memory addresses); for sequences, bindings and parallel maps the digest of
   their parts; for any other object its class and ``repr``. Two different lambdas get
   two identities; the same lambda in a later process gets the same one.

**A cache file** is a sqlite database holding a ``triplets (key, value)`` table and a
``graphrag_cache`` marker row. A file that is not such a database (another program's
sqlite file, a text file, a truncated or altered one), or an entry whose value is not a
JSON list, raises :class:`~langchain_graphrag_milvus.errors.ExtractionCacheError`
naming the file; nothing is written into a file this package did not create.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import types
import weakref
from collections.abc import Sequence
from typing import Any

from langchain_graphrag_milvus.errors import ExtractionCacheError

__all__ = ["TripletCache", "extractor_name"]

_MARKER = "langchain-graphrag-milvus triplet cache 1"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _code_digest(code: types.CodeType, depth: int = 0) -> bytes:
    parts: list[bytes] = [code.co_code, repr((code.co_names, code.co_varnames, code.co_freevars)).encode()]
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and depth < 20:
            parts.append(_code_digest(const, depth + 1))
        else:
            parts.append(_ADDRESS.sub("", repr(const)).encode("utf-8", "backslashreplace"))
    return hashlib.sha256(b"\0".join(parts)).digest()


def _function_parts(func: Any, depth: int) -> list[bytes]:
    code = getattr(func, "__code__", None)
    if not isinstance(code, types.CodeType):
        return [_describe(func, depth + 1)]
    parts = [f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', '')}".encode(), _code_digest(code)]
    for value in getattr(func, "__defaults__", None) or ():
        parts.append(_describe(value, depth + 1))
    for cell in getattr(func, "__closure__", None) or ():
        try:
            parts.append(_describe(cell.cell_contents, depth + 1))
        except ValueError:  # an empty cell
            parts.append(b"<empty>")
    return parts


def _describe(obj: Any, depth: int = 0) -> bytes:
    """Bytes that change when ``obj``'s behaviour (as far as it can be seen) changes."""
    if depth > 8:
        return type(obj).__qualname__.encode()
    from langchain_core.runnables import RunnableBinding, RunnableLambda, RunnableParallel, RunnableSequence

    if isinstance(obj, RunnableLambda):
        parts = _function_parts(obj.func, depth) if hasattr(obj, "func") else []
        parts += _function_parts(obj.afunc, depth) if getattr(obj, "afunc", None) is not None else []
    elif isinstance(obj, RunnableSequence):
        parts = [_describe(step, depth + 1) for step in obj.steps]
    elif isinstance(obj, RunnableParallel):
        parts = [k.encode() + _describe(v, depth + 1) for k, v in sorted(obj.steps__.items())]
    elif isinstance(obj, RunnableBinding):
        parts = [_describe(obj.bound, depth + 1), _ADDRESS.sub("", repr(obj.kwargs)).encode("utf-8", "replace")]
    elif isinstance(obj, (types.FunctionType, types.MethodType)):
        parts = _function_parts(obj, depth)
    else:
        parts = [_ADDRESS.sub("", repr(obj)).encode("utf-8", "backslashreplace")]
    return hashlib.sha256(type(obj).__qualname__.encode() + b"\0" + b"\0".join(parts)).digest()


_NAMES: dict[int, tuple[Any, str]] = {}
_NAMES_LOCK = threading.RLock()  # (a collected extractor forgets its name under it, maybe inside it)


def extractor_name(extractor: Any) -> str:
    """The cache identity of an extractor (see the module rules).

    Computed once per extractor object: state its code changes as it runs (a list its closure
    appends to) does not change the identity of the same object within a process.
    """
    key = id(extractor)
    with _NAMES_LOCK:
        known = _NAMES.get(key)
    if known is not None and (known[0]() if isinstance(known[0], weakref.ref) else known[0]) is extractor:
        return known[1]
    name = _extractor_name(extractor)
    def forget(_ref: Any) -> None:
        with _NAMES_LOCK:
            _NAMES.pop(key, None)

    try:
        ref: Any = weakref.ref(extractor, forget)
    except TypeError:  # not weakly referenceable: kept (extractors are few and long-lived)
        ref = extractor
    with _NAMES_LOCK:
        _NAMES[key] = (ref, name)
    return name


def _extractor_name(extractor: Any) -> str:
    config = getattr(extractor, "config", None) or {}
    if config.get("run_name"):
        return str(config["run_name"])
    key = getattr(extractor, "cache_key", None)
    if isinstance(key, str) and key:
        return key
    from langchain_core.runnables import RunnableBinding, RunnableLambda, RunnableParallel, RunnableSequence

    composite = (RunnableLambda, RunnableSequence, RunnableParallel, RunnableBinding)
    name = extractor.get_name() if hasattr(extractor, "get_name") else type(extractor).__qualname__
    if not isinstance(extractor, composite) and isinstance(vars(extractor).get("name"), str):
        return str(name)  # a Runnable subclass that names its instances
    return f"{name}@{_describe(extractor).hex()[:16]}"


class TripletCache:
    """Extraction results by (extractor identity, passage text) in sqlite, or in memory.

    Raises:
        ExtractionCacheError: ``path`` is not an extraction cache of this package.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._memory: dict[str, str] = {}
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self.path = os.fspath(path) if path is not None else None
        if path is not None:
            where = self.path or ""
            if os.path.lexists(where) and not os.path.isfile(where):
                raise self._error("is not a regular file (a folder, a device or a broken link)")
            try:
                os.makedirs(os.path.dirname(os.path.abspath(where)), exist_ok=True)
            except OSError as exc:
                raise self._error(f"its folder cannot be created ({exc.strerror or exc})") from None
            self._conn = self._open(where)

    def _error(self, problem: str) -> ExtractionCacheError:
        return ExtractionCacheError(
            f"extraction_cache {self.path!r}: {problem}; point extraction_cache at a new file (or delete this one "
            "if it is a cache of this package)"
        )

    def _open(self, path: str) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(path, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(f"cannot be opened ({exc})") from None
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "graphrag_cache" not in tables:
                if tables != {"triplets"} or self._columns(conn) != ["key", "value"]:
                    raise self._error(f"is a sqlite database of something else (tables {sorted(tables)})")
            if "graphrag_cache" in tables:
                marker = conn.execute("SELECT value FROM graphrag_cache WHERE key = 'format'").fetchone()
                if marker != (_MARKER,) or self._columns(conn) != ["key", "value"]:
                    raise self._error("is not a triplet cache of this version (unknown format marker or columns)")
            with conn:
                conn.execute("CREATE TABLE IF NOT EXISTS triplets (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS graphrag_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("INSERT OR IGNORE INTO graphrag_cache (key, value) VALUES ('format', ?)", (_MARKER,))
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise self._error(f"cannot be read as a sqlite database ({exc})") from None
        except ExtractionCacheError:
            conn.close()
            raise
        return conn

    @staticmethod
    def _columns(conn: sqlite3.Connection) -> list[str]:
        return [str(r[1]) for r in conn.execute("PRAGMA table_info(triplets)")]

    @staticmethod
    def key(extractor_name: str, text: str) -> str:
        """Cache key of a passage text for an extractor."""
        return hashlib.sha256(f"{extractor_name}\x1f{text}".encode("utf-8", "surrogatepass")).hexdigest()

    def _decode(self, key: str, value: Any) -> list[Any]:
        try:
            decoded = json.loads(value)
        except (TypeError, ValueError, RecursionError):
            raise self._error(f"entry {key[:16]}... is not valid JSON (the file was altered)") from None
        if not isinstance(decoded, list):
            raise self._error(f"entry {key[:16]}... is not a list of triplets (the file was altered)")
        return decoded

    def get_many(self, keys: Sequence[str]) -> dict[str, list[Any]]:
        """Cached triplets for the keys that have them."""
        with self._lock:
            if self._conn is None:
                return {k: json.loads(self._memory[k]) for k in keys if k in self._memory}
            out: dict[str, list[Any]] = {}
            try:
                for i in range(0, len(keys), 500):
                    chunk = list(keys[i : i + 500])
                    rows = self._conn.execute(
                        f"SELECT key, value FROM triplets WHERE key IN ({','.join('?' * len(chunk))})", chunk
                    ).fetchall()
                    out.update((str(k), self._decode(str(k), v)) for k, v in rows)
            except sqlite3.DatabaseError as exc:
                raise self._error(f"cannot be read ({exc})") from None
            return out

    def put_many(self, items: dict[str, list[Any]]) -> None:
        """Store triplets (JSON) by key."""
        encoded = {k: json.dumps(v, ensure_ascii=False) for k, v in items.items()}
        with self._lock:
            if self._conn is None:
                self._memory.update(encoded)
                return
            try:
                with self._conn:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO triplets (key, value) VALUES (?, ?)", encoded.items()
                    )
            except sqlite3.DatabaseError as exc:
                raise self._error(f"cannot be written ({exc})") from None
