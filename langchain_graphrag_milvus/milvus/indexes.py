"""Vector indexes that fit the size: exact FLAT for small collections, HNSW past a threshold; measured recall.

Modes (the store's ``index=`` option):

* ``"flat"`` (default): exact search everywhere (FLAT), as before.
* ``"hnsw"``: new collections are created with HNSW (``M=16``, ``efConstruction=200``),
  on a server and on Milvus Lite (Lite 3.2 accepts it; measured).
* ``"auto"``: FLAT when created; on a Milvus server (never on Lite, which stays the
  small-data backend), an ingest that leaves a collection with at least
  :data:`.index_params.HNSW_THRESHOLD` rows replaces its FLAT index by HNSW: release, drop the index,
  build HNSW (waiting for it), load. The collection cannot be searched while this runs
  (once, at the load that crosses the threshold); declare ``index="hnsw"`` up front to
  avoid that pause.

Searches on an HNSW collection pass ``ef = max(ef, limit)`` (default ef :data:`.index_params.EF_SEARCH`,
or the store's ``search_params["params"]["ef"]``): Milvus requires ``ef >= limit``.
:func:`index_recall` measures recall@k of the collections' indexes against exact search
(a brute-force scan of the stored vectors), so a quality number can say what it was
measured with. Measured at 100k rows (``benchmarks/bench_index.py``, the scale benchmark's
384-d hash embedding, whose bag-of-words vectors are a hard case for HNSW): recall@10 0.55
(relations) / 0.53 (passages) at ``ef=128``, 0.65 / 0.61 at ``ef=256``, searches ~5x faster
than FLAT (10-13 ms vs 54-60 ms). Real sentence embeddings usually fare better; measure yours.

Why ``"flat"`` stays the default: at 50k passages (450k relations) the switch made the load's
``create_index`` take 11 of its 17 minutes, the collection could not be searched meanwhile,
and R@5 of the scale benchmark fell from 39.9 to 38.6 (``benchmarks/bench_scale.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_graphrag_milvus.milvus import index_params
from langchain_graphrag_milvus.milvus.index_params import EF_SEARCH, creation_index, search_params_for
from langchain_graphrag_milvus.milvus.lite import is_lite
from langchain_graphrag_milvus.milvus.schema import KINDS, Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.connection import MilvusConnection
    from langchain_graphrag_milvus.milvus.read_seam import StoreReads
    from langchain_graphrag_milvus.milvus.reads import MilvusReads

__all__ = ["EF_SEARCH", "creation_index", "search_params_for", "fit_indexes", "switch_index", "index_recall"]

_SCAN_PAGE = 2048


def fit_indexes(connection: MilvusConnection, reads: StoreReads, threshold: int | None = None) -> list[Kind]:
    """With ``index="auto"`` on a server: switch collections of ``threshold`` rows or more from FLAT to HNSW.

    ``threshold``: default :data:`.index_params.HNSW_THRESHOLD`. Rows are counted exactly
    (``count(*)``, the server's collection statistics lag behind recent inserts), and only
    while some collection is still FLAT.

    Returns:
        The kinds switched.
    """
    if connection.index_mode != "auto" or is_lite(connection.uri):
        return []
    threshold = index_params.HNSW_THRESHOLD if threshold is None else threshold
    flat = [kind for kind in KINDS if connection.index_type(kind) == "FLAT"]
    counts = reads.counts() if flat else {}
    switched: list[Kind] = []
    for kind in flat:
        if counts[kind] >= threshold:
            switch_index(connection, kind, creation_index("hnsw", connection.metric))
            switched.append(kind)
    return switched


def switch_index(connection: MilvusConnection, kind: Kind, index: Mapping[str, Any]) -> None:
    """Replace the vector index of one collection: release, drop the index, build the new one, load.

    Re-runnable: the connection forgets that its collections are open first, so the next use
    after a failure at any step checks them again, gives a collection left without an index
    its creation index and loads it (``MilvusConnection.check_open``); the next ingest then
    switches it again.
    """
    client, name, timeout = connection.client, connection.collection_name(kind), connection.timeout
    with connection.lock:
        connection.dim = None
        client.release_collection(name, timeout=timeout)
        client.drop_index(name, "vector", timeout=timeout)
        params = client.prepare_index_params()
        params.add_index(field_name="vector", **index)
        client.create_index(collection_name=name, index_params=params, timeout=None, sync=True)
        client.load_collection(name, timeout=None)
        connection.forget_index_types()


def _scan_vectors(reads: MilvusReads, kind: Kind) -> Iterator[tuple[list[str], np.ndarray[Any, Any]]]:
    """Every stored vector, in pages of (ids, vectors) (pymilvus' ``query_iterator``: :meth:`MilvusReads.iterate`)."""
    ids: list[str] = []
    vectors: list[list[float]] = []
    for row in reads.iterate(kind, ("vector",), _SCAN_PAGE):
        ids.append(str(row["pk"]))
        vectors.append(row["vector"])
        if len(ids) >= _SCAN_PAGE:
            yield ids, np.asarray(vectors, np.float32)
            ids, vectors = [], []
    if ids:
        yield ids, np.asarray(vectors, np.float32)


def _unit(m: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    out: np.ndarray[Any, Any] = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return out


def exact_top_k(reads: MilvusReads, kind: Kind, vectors: Sequence[Sequence[float]], k: int) -> list[list[str]]:
    """The exact top-``k`` ids of each query by the store's metric (a scan of every stored vector)."""
    cosine = reads.connection.metric == "COSINE"
    queries = np.asarray(vectors, np.float32)
    queries = _unit(queries) if cosine else queries
    best_ids: list[list[str]] = [[] for _ in range(len(queries))]
    best_scores = np.full((len(queries), 0), -np.inf, np.float32)
    for ids, page in _scan_vectors(reads, kind):
        scores = queries @ (_unit(page) if cosine else page).T
        merged = np.concatenate([best_scores, scores], axis=1)
        order = np.argsort(-merged, axis=1, kind="stable")[:, :k]
        pool = [b + ids for b in best_ids]
        best_ids = [[pool[q][j] for j in order[q].tolist()] for q in range(len(queries))]
        best_scores = np.take_along_axis(merged, order, axis=1)
    return best_ids


def index_recall(
    reads: MilvusReads,
    vectors: Sequence[Sequence[float]],
    k: int = 10,
    kinds: Sequence[Kind] = ("relations", "passages"),
) -> dict[str, dict[str, Any]]:
    """Recall@k of each collection's index against exact search, for these query vectors.

    Exact search is a brute-force scan of the stored vectors (pymilvus' ``query_iterator``:
    passage ids holding a double quote break its paging, see :meth:`MilvusReads.iterate`).

    Returns:
        For each kind: ``{"index": index type, "recall": mean recall@k, "k": k, "queries": n}``.
    """
    out: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        approx = reads.search(kind, vectors, k)
        exact = exact_top_k(reads, kind, vectors, k)
        shares = [len({h.id for h in a} & set(e)) / len(e) for a, e in zip(approx, exact) if e]
        out[kind] = {
            "index": reads.connection.index_type(kind),
            "recall": float(np.mean(shares)) if shares else 1.0,
            "k": k,
            "queries": len(vectors),
        }
    return out
