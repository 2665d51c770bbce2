"""What a store's graph state holds in memory, item by item (:meth:`.graph_cache.GraphCache.memory_report`).

``GraphIndex.nbytes`` counts the graph's arrays; the store also keeps the entity names, the
name table, the linker's choices, its fuzzy and word indexes, the linker itself, tenant views
and changes not yet folded in. :func:`memory_report` measures each with one
:class:`~langchain_graphrag_milvus.graph.sizes.Sizer` (every Python object and array buffer
counted once, ``sys.getsizeof`` plus the buffers), in the order of :data:`ITEMS`: an object
shared by two items (an id string both in the names dict and the name table) is counted in
the first. Only what is built is counted: a store that never linked a query has no linker.
``tests/unit/test_memory_report.py`` checks the total against ``tracemalloc``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.graph.sizes import Sizer

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex
    from langchain_graphrag_milvus.text.name_table import NameTable

__all__ = ["ITEMS", "MemoryReport", "memory_report", "measure", "report_of", "release_free_memory"]

#: The items of a report, in the order they are measured.
ITEMS = (
    "graph arrays",
    "passage ids",
    "graph caches",
    "entity names",
    "name table",
    "linker names",
    "fuzzy index",
    "word index",
    "linker",
    "views",
    "pending changes",
    "local vectors",
    "local passages",
)


@dataclass(frozen=True)
class MemoryReport:
    """Bytes held in memory per item of a store's graph state.

    Attributes:
        items: Item (see :data:`ITEMS`) → bytes of heap memory.
        mapped: Bytes of arrays memory-mapped from a saved index (file pages, not heap).
        n_relations: Relations in the graph (for :attr:`per_million_relations`).
        array_bytes: What ``GraphIndex.nbytes`` says (arrays, passage ids estimated).
    """

    items: dict[str, int]
    mapped: int = 0
    n_relations: int = 0
    array_bytes: int = 0

    @property
    def total(self) -> int:
        """Bytes of heap memory in all items."""
        return sum(self.items.values())

    @property
    def per_million_relations(self) -> float:
        """MiB of heap memory per million relations (0.0 for an empty graph)."""
        return self.total / 2**20 / (self.n_relations / 1e6) if self.n_relations else 0.0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: items, total, mapped bytes, MiB per million relations."""
        return {
            "items": dict(self.items),
            "total": self.total,
            "mapped": self.mapped,
            "array_bytes": self.array_bytes,
            "mib_per_million_relations": round(self.per_million_relations, 1),
        }

    def format(self) -> str:
        """One line per item (MiB), largest first, and the total."""
        lines = [f"  {name}: {size / 2**20:.2f} MiB" for name, size in sorted(self.items.items(), key=lambda i: -i[1])]
        lines.append(
            f"  total: {self.total / 2**20:.2f} MiB in memory "
            f"({self.per_million_relations:.0f} MiB per million relations)"
        )
        if self.mapped:
            lines.append(f"  memory-mapped from the saved index: {self.mapped / 2**20:.2f} MiB")
        return "\n".join(lines)


def measure(
    parts: dict[str, tuple[Any, ...]], stops: dict[str, tuple[Any, ...]] | None = None
) -> tuple[dict[str, int], int]:
    """Bytes of each part (in order, shared objects counted in the first) and the mapped bytes.

    ``stops[name]``: objects inside that part to leave to a later part.
    """
    sizer = Sizer()
    stops = stops or {}
    sizes = {name: sizer.size(*objects, stop=stops.get(name, ())) for name, objects in parts.items()}
    return sizes, sizer.mapped


def memory_report(cache: Any) -> MemoryReport:
    """The report of a :class:`~.graph_cache.GraphCache` (its graph, names, linker, views, pending fold)."""
    return report_of(
        cache._graph,
        names=cache._entity_names,
        table=cache._names_table[1] if cache._names_table is not None else None,
        linker=cache._linker[1] if cache._linker is not None else None,
        views=cache._views,
        pending=cache._pending,
        vectors=cache.local.held() if cache.local is not None else None,
        passages=cache.held_passages() if getattr(cache, "held_passages", None) is not None else None,
    )


def report_of(
    graph: GraphIndex | None,
    *,
    names: Mapping[str, str] | None = None,
    table: NameTable | None = None,
    linker: Any = None,
    views: Any = None,
    pending: Any = None,
    vectors: Any = None,
    passages: Any = None,
) -> MemoryReport:
    """The report of these parts of a graph state (None: not built; see :data:`ITEMS`)."""
    linker_names = table._linker_names if table is not None else None
    index = linker_names._index if linker_names is not None else None
    tokens = linker_names._tokens if linker_names is not None else None
    g: tuple[Any, ...] = (graph,) if graph is not None else ()
    parts: dict[str, tuple[Any, ...]] = {
        "graph arrays": g,
        "passage ids": (graph.passages,) if graph is not None else (),
        "graph caches": (graph._cache,) if graph is not None else (),
        "entity names": (names,),
        "name table": (table,),
        "linker names": (linker_names,),
        "fuzzy index": (index,),
        "word index": (tokens,),
        "linker": (linker,),
        "views": (views,),
        "pending changes": (pending,),
        "local vectors": (vectors,),
        "local passages": tuple(part for part in passages or () if part is not None),
    }
    stops = {
        "graph arrays": (graph.passages, graph._cache) if graph is not None else (),
        "name table": (linker_names,),
        "linker names": (index, tokens),
    }
    items, mapped = measure(parts, stops)
    n = graph.n_relations if graph is not None else 0
    return MemoryReport(items, mapped, n, graph.nbytes if graph is not None else 0)


@cache
def _malloc_trim() -> Any:
    """The C library's ``malloc_trim`` (glibc; None elsewhere: musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Give the heap pages a build freed back to the system (glibc ``malloc_trim(0)``); True if it ran.

    Building the graph from Milvus rows, the names and the linker's indexes allocates far
    more than it keeps; glibc keeps the freed pages in the process, so its resident memory
    stayed about four times what the state holds (``benchmarks/bench_memory.py``: 798 MiB per
    million relations resident against 188 held, musique100's density). Called once after each
    such build; a no-op where glibc is not the allocator. It never frees anything in use.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    gc.collect()
    trim(0)
    return True
