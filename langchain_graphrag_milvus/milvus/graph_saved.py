"""The graph index saved under ``graph_path``: loaded when its fingerprint matches Milvus, saved after a change.

The saved index holds the graph's arrays (:mod:`~langchain_graphrag_milvus.graph.persist`), a
fingerprint of the data it was built from (store id, generation counter, row counts:
:meth:`.graph_cache.GraphCache.fingerprint`) and the entity names with the linker's keys
(:class:`~langchain_graphrag_milvus.text.name_table.NameTable`), so a process opening it reads
nothing from Milvus but the fingerprint. One that does not match is stale (or another store's),
one that cannot be read is damaged: either is rebuilt from Milvus, or raises with ``on_stale="error"``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from langchain_graphrag_milvus.errors import CorruptIndexError, GraphPathError, StaleIndexError
from langchain_graphrag_milvus.graph import GraphIndex, persist
from langchain_graphrag_milvus.milvus.local_vectors import LOCAL_KINDS, VectorTable
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.text.name_map import NameMap
from langchain_graphrag_milvus.text.name_table import NameTable
from langchain_graphrag_milvus.text.strings import StringArray

__all__ = ["SavedIndex", "load_saved", "save_index", "saved_names", "saved_vectors"]

logger = logging.getLogger("langchain_graphrag_milvus")

_NAMES = "names_"  # the saved index's extra arrays that hold the entity names (:class:`NameTable`)
_VECTORS = "vectors_"  # ... and the entity and relation vectors held in the client (:mod:`.local_vectors`)


class SavedIndex(NamedTuple):
    """A saved index matching Milvus: graph, name table and names (None if saved without them), fingerprint, vectors."""

    graph: GraphIndex
    table: NameTable | None
    names: NameMap | None
    fingerprint: dict[str, Any]
    vectors: dict[Kind, VectorTable] = {}


def load_saved(path: Path, fingerprint: Callable[[], dict[str, Any]], on_stale: str) -> SavedIndex | None:
    """The index saved in ``path`` if it matches ``fingerprint()``; None (logged) if it must be rebuilt.

    The fingerprint's Milvus round trips (≈0.2 s) run on a thread while the files are read
    (≈0.4 s at 1.8M relations).

    Raises:
        StaleIndexError: With ``on_stale="error"``: it was built from other data, or by another store.
        CorruptIndexError: With ``on_stale="error"``: it cannot be read.
    """
    damage: persist.IndexFileError | None = None
    graph: GraphIndex | None = None
    table: NameTable | None = None
    names: NameMap | None = None
    vectors: dict[Kind, VectorTable] = {}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphrag-fingerprint") as pool:
        asked = pool.submit(fingerprint)
        try:
            saved = persist.read_manifest(path).get("fingerprint")
        except persist.IndexFileError as exc:
            saved, damage = None, exc
        else:
            try:
                graph, table = GraphIndex.load(path), saved_names(path)
                names = table.names() if table is not None else None
                vectors = saved_vectors(path)
            except persist.IndexFileError as exc:
                damage = exc
        current = asked.result()
    if graph is not None and damage is None and saved == current:
        return SavedIndex(graph, table, names, current, vectors)
    # another store's index (same prefix elsewhere, or copied with valid checksums); indexes saved before
    # store ids existed have none: they differ from the current fingerprint and are rebuilt once as stale
    if isinstance(saved, dict) and saved.get("store_id", current["store_id"]) != current["store_id"]:
        problem = f"was saved by another store (id {saved.get('store_id')!r}; this one is {current['store_id']!r})"
        error: type[StaleIndexError] = StaleIndexError
    elif damage is None or (saved is not None and saved != current):  # stale first, as without the overlap
        problem, error = f"was built from {saved} but Milvus now holds {current}", StaleIndexError
    else:
        problem, error = f"is damaged ({damage})", CorruptIndexError
    if on_stale == "error":
        raise error(
            f"the graph index saved in graph_path={str(path)!r} {problem}; delete it or open the store "
            "with on_stale='rebuild'"
        )
    logger.warning("the graph index saved in graph_path=%r %s; rebuilding it from Milvus", str(path), problem)
    return None


def saved_names(path: Path) -> NameTable | None:
    """The entity names and linker keys saved with the index (damaged: ``IndexFileError``).

    None for an index saved before names were: they are read from Milvus when needed.
    """
    saved = {k[len(_NAMES) :]: v for k, v in persist.load_extra(path, check=False).items() if k.startswith(_NAMES)}
    if not saved:
        return None
    try:
        table = NameTable.from_arrays(saved)
    except ValueError as exc:
        raise persist.IndexFileError(f"the entity names saved in {path} are damaged: {exc}") from None
    persist.release_pages(saved.values())  # the checks read the arrays through; a query maps back what it reads
    return table


def saved_vectors(path: Path) -> dict[Kind, VectorTable]:
    """The vector tables saved with the index, memory-mapped (none saved: ``{}``; damaged: ``IndexFileError``)."""
    saved = {k[len(_VECTORS) :]: v for k, v in persist.load_extra(path, check=False).items() if k.startswith(_VECTORS)}
    out: dict[Kind, VectorTable] = {}
    for kind in LOCAL_KINDS:
        keys, matrix = saved.get(f"{kind}_keys"), saved.get(kind)
        if keys is None or matrix is None:
            continue
        if keys.dtype != np.uint64 or keys.ndim != 1 or matrix.dtype != np.float32 or matrix.ndim != 2:
            raise persist.IndexFileError(f"the {kind} vectors saved in {path} are damaged")
        if len(keys) != len(matrix) or (len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1]))):
            raise persist.IndexFileError(f"the {kind} vectors saved in {path} are damaged")
        fields, links = None, saved.get(f"{kind}_links")
        if f"{kind}_fields_blob" in saved:
            try:
                fields = StringArray.from_arrays(saved, f"{kind}_fields_")
            except ValueError:
                raise persist.IndexFileError(f"the {kind} fields saved in {path} are damaged") from None
            bad_links = links is not None and (links.dtype != np.uint64 or len(links) != len(keys))
            if len(fields) != len(keys) or bad_links:
                raise persist.IndexFileError(f"the {kind} fields saved in {path} are damaged")
        out[kind] = VectorTable(keys, matrix, fields, links if fields is not None else None)
    persist.release_pages(saved.values())  # the key checks read them through
    return out


def save_index(
    graph: GraphIndex,
    path: Path,
    fingerprint: dict[str, Any],
    table: NameTable | None,
    vectors: Mapping[Kind, VectorTable] | None = None,
) -> None:
    """Save the index (with the name table and its fuzzy index, and the vector tables) in ``path``; a failure warns.

    The index is derived data. So is a path that stopped being ours after the store opened
    (someone put files in it): ``persist.save`` refuses it before writing anything
    (:class:`GraphPathError`), the files stay, and the store keeps working without a saved index.
    """
    extra = None
    if table is not None:  # saved with the index: a process opening it reads no name from Milvus
        table.linker_names().index()  # the fuzzy index too: an opened index does not build it on a query
        extra = {_NAMES + k: v for k, v in table.arrays().items()}
    for kind, vt in (vectors or {}).items():  # saved with the index: a process opening it reads no vector
        extra = {**(extra or {}), f"{_VECTORS}{kind}_keys": vt.keys, f"{_VECTORS}{kind}": vt.matrix}
        if vt.fields is not None:  # the hits' fields, so a local search reads nothing back
            extra.update(vt.fields.arrays(f"{_VECTORS}{kind}_fields_"))
            if vt.links is not None:
                extra[f"{_VECTORS}{kind}_links"] = vt.links
    try:
        persist.save(graph, path, fingerprint=fingerprint, extra=extra)
    except (OSError, GraphPathError) as exc:
        logger.warning("cannot save the graph index to graph_path=%r (%s)", str(path), exc)
