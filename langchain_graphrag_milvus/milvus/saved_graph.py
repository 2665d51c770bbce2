"""Where a store saves its graph index by default: beside its Milvus Lite database.

A new process that opens a Lite store used to rebuild the graph from every relation in
Milvus before its first answer: 13.6 s on musique100's 28,871 relations here, against 1.8 s
when it loads a saved index (``benchmarks/bench_cold_start.py``). With ``graph_path="auto"`` (the default)
a Lite store ``x.db`` saves its index in ``x.db.graphs/<collection_prefix>/`` after every
change and loads it on open; the index records a fingerprint of the data and the store's
id, so a stale or foreign one is rebuilt (:mod:`~langchain_graphrag_milvus.graph.persist`).

The folder is the package's only if it is missing, empty or holds an index saved here
(:func:`~langchain_graphrag_milvus.graph.owned_dir.check_graph_path`). If something else is
there, ``"auto"`` saves nothing and logs why (an explicit ``graph_path`` raises instead).
A server store (``http://...``) saves nothing by default: many machines may read it, and
``graph_path`` names a folder of this machine. ``drop()`` removes the saved index with the
collections (the files it wrote, then the folders if empty).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from langchain_graphrag_milvus.errors import GraphPathError
from langchain_graphrag_milvus.graph.owned_dir import check_graph_path, remove_owned, siblings
from langchain_graphrag_milvus.milvus.lite import check_lite_parent, is_lite

__all__ = ["AUTO", "GRAPHS_SUFFIX", "drop_saved_graph", "lite_graphs_dir", "resolve_graph_path"]

logger = logging.getLogger(__name__)

#: The ``graph_path`` value meaning "beside the Lite database, else not saved".
AUTO = "auto"
#: ``x.db`` keeps its saved graph indexes in ``x.db`` + this suffix, one folder per collection prefix.
GRAPHS_SUFFIX = ".graphs"


def lite_graphs_dir(uri: str) -> Path | None:
    """The folder of the saved indexes of a Lite database (``x.db.graphs``); None for a server URI."""
    if not is_lite(uri):
        return None
    path = Path(os.path.abspath(Path(uri).expanduser()))
    return path.with_name(path.name + GRAPHS_SUFFIX)


def resolve_graph_path(
    graph_path: str | os.PathLike[str] | None, uri: str, collection_prefix: str
) -> str | os.PathLike[str] | None:
    """``graph_path`` with ``"auto"`` resolved for a store at ``uri`` (None: the index is not saved).

    Raises:
        LitePathError: A Lite ``uri`` whose parent folder does not exist.
    """
    if not (isinstance(graph_path, str) and graph_path == AUTO):
        return graph_path
    folder = lite_graphs_dir(uri)
    if folder is None:
        return None
    target = folder / collection_prefix
    try:
        check_graph_path(target, forbidden=[check_lite_parent(uri)])
    except GraphPathError as exc:
        logger.warning("%s; graph_path='auto' saves no graph index for this store (each new process rebuilds it)", exc)
        return None
    return target


def drop_saved_graph(graph_path: Path | None) -> None:
    """Remove a saved index (only the files this package wrote) and its ``.tmp``/``.old`` siblings.

    The ``x.db.graphs`` folder of ``"auto"`` is removed too once empty. What is not ours is
    kept, with a logged warning.
    """
    if graph_path is None:
        return
    for path in (graph_path, *siblings(graph_path)):
        try:
            remove_owned(path)
        except (GraphPathError, OSError) as exc:
            logger.warning("the saved graph index %r was not removed: %s", str(path), exc)
    parent = graph_path.parent
    if parent.name.endswith(GRAPHS_SUFFIX):
        try:
            parent.rmdir()  # only if empty
        except OSError:
            pass
