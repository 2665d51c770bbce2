"""Reading the graph's rows back from Milvus for a rebuild, in parallel ranges of the key space.

A rebuild needs, of each relation, its key, subject, object and passage ids, and of each
entity its name and synonym links: nothing else is read (no text, vector or predicate of
relations). Entity and relation keys are 16 lowercase hex digits, so the key space splits
into ranges on the first digit (``pk < "4"``, ``"4" <= pk < "8"`` ...: the first and last
range are open, so every string falls in exactly one). Each range is read by its own
``query_iterator`` on a small thread pool; the rows come back in the order of the ranges.
The bounds are written through :mod:`.expr`. A tenant view's passages are read here too (:func:`read_view`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.graph.ids import id_to_key
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.graph_memory import release_free_memory
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.text.name_map import NameMap

__all__ = ["GraphRows", "key_ranges", "read_graph", "read_graph_rows", "read_view"]

_HEX = "0123456789abcdef"
T = TypeVar("T")


def key_ranges(parts: int) -> list[str | None]:
    """Filters splitting the string key space into ``parts`` ranges on the first hex digit (``None``: all)."""
    parts = max(1, min(int(parts), len(_HEX)))
    if parts == 1:
        return [None]
    bounds = [_HEX[(i * len(_HEX)) // parts] for i in range(1, parts)]
    pk = expr.field_name("pk")
    out: list[str | None] = [f"{pk} < {expr.literal(bounds[0])}"]
    out += [f"{pk} >= {expr.literal(lo)} and {pk} < {expr.literal(hi)}" for lo, hi in zip(bounds, bounds[1:])]
    out.append(f"{pk} >= {expr.literal(bounds[-1])}")
    return out


@dataclass
class GraphRows:
    """The rows a :class:`~langchain_graphrag_milvus.graph.GraphIndex` is built from."""

    relation_keys: list[int] = field(default_factory=list)
    subject_keys: list[int] = field(default_factory=list)
    object_keys: list[int] = field(default_factory=list)
    passage_ids: list[list[str]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    synonyms: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))

    def to_graph(self) -> GraphIndex:
        """The graph index of these rows (the names are not part of it)."""
        return GraphIndex.from_relations(
            relation_keys=np.array(self.relation_keys, np.uint64),
            subject_keys=np.array(self.subject_keys, np.uint64),
            object_keys=np.array(self.object_keys, np.uint64),
            passage_ids=self.passage_ids,
            synonym_pairs=(np.array(self.synonyms[0], np.uint64), np.array(self.synonyms[1], np.uint64)),
        )


def _relations(reads: StoreReads, where: str | None) -> GraphRows:
    out = GraphRows()
    for row in reads.iterate("relations", ("subject_id", "object_id", "passage_ids"), filter_expr=where):
        out.relation_keys.append(id_to_key(row["pk"]))
        out.subject_keys.append(id_to_key(row["subject_id"]))
        out.object_keys.append(id_to_key(row["object_id"]))
        out.passage_ids.append(list(row["passage_ids"]))
    return out


def _entities(reads: StoreReads, where: str | None) -> GraphRows:
    out = GraphRows()
    for row in reads.iterate("entities", ("text", "synonym_ids"), filter_expr=where):
        out.names[str(row["pk"])] = str(row["text"])
        for other in row.get("synonym_ids") or []:
            out.synonyms[0].append(id_to_key(row["pk"]))
            out.synonyms[1].append(id_to_key(other))
    return out


def _run(jobs: Sequence[Callable[[], T]], threads: int) -> list[T]:
    if threads <= 1 or len(jobs) <= 1:
        return [job() for job in jobs]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="graphrag-rebuild") as pool:
        return [f.result() for f in [pool.submit(job) for job in jobs]]


def read_graph_rows(reads: StoreReads, parallel: int = 1) -> GraphRows:
    """All relation and entity rows the graph needs; ``parallel`` ranges per collection, read at once.

    ``parallel=1`` reads each collection with one sequential iterator.
    """
    ranges = key_ranges(parallel)
    kinds: list[Callable[[StoreReads, str | None], GraphRows]] = [_relations, _entities]
    jobs: list[Callable[[], GraphRows]] = [partial(fn, reads, where) for fn in kinds for where in ranges]
    parts = _run(jobs, parallel)
    out = GraphRows()
    for part in parts:
        out.relation_keys += part.relation_keys
        out.subject_keys += part.subject_keys
        out.object_keys += part.object_keys
        out.passage_ids += part.passage_ids
        out.names.update(part.names)
        out.synonyms[0].extend(part.synonyms[0])
        out.synonyms[1].extend(part.synonyms[1])
    return out


def read_graph(reads: StoreReads, parallel: int = 1) -> tuple[GraphIndex, NameMap]:
    """The graph index and the entity names of every row (:func:`read_graph_rows`), built in a compact heap.

    The rows read are several times what the graph keeps: they are dropped and the freed heap
    pages are given back (:func:`.graph_memory.release_free_memory`). What the graph and names
    keep is arrays and blobs (the passage ids too: :class:`~.graph.string_ids.StringIdMap`), no
    small object that would hold a freed row's allocator page resident.
    """
    rows = read_graph_rows(reads, parallel)
    graph = rows.to_graph()
    names = NameMap.from_mapping(rows.names)
    del rows
    release_free_memory()
    return graph, names


def read_view(reads: StoreReads, graph: GraphIndex, filter_expr: str, field: str | None) -> GraphView:
    """The part of ``graph`` whose passages match ``filter_expr`` (their ids read with ``"Strong"`` consistency).

    With ``field`` (the partition key of a store with per-tenant rows), ``view.cache["tenants"]``
    holds the tenants of its passages, sorted: the view's names resolve among their ids.
    """
    matched = reads.matching_passage_values(graph.passages.ids, filter_expr, field)
    found = graph.passages.find([pid for pid, _ in matched])
    view = graph.view(found[found >= 0])
    if field is not None:
        view.cache["tenants"] = tuple(sorted({v for _, v in matched if isinstance(v, str)}))
    return view
