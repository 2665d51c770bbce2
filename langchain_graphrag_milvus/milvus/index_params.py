"""Index parameters by mode, and search parameters by index type (see :mod:`.indexes`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langchain_graphrag_milvus.milvus.schema import DEFAULT_INDEX_PARAMS

__all__ = [
    "IndexMode",
    "INDEX_MODES",
    "HNSW_THRESHOLD",
    "HNSW_PARAMS",
    "EF_SEARCH",
    "creation_index",
    "index_and_search_params",
    "search_params_for",
]

IndexMode = Literal["auto", "flat", "hnsw"]
INDEX_MODES: tuple[str, ...] = ("auto", "flat", "hnsw")
#: Rows past which ``index="auto"`` switches a server collection to HNSW.
HNSW_THRESHOLD = 100_000
#: HNSW build parameters: 16 links per node, a candidate list of 200 while building.
HNSW_PARAMS: dict[str, Any] = {"M": 16, "efConstruction": 200}
#: HNSW search candidate list (raised to the search's limit). Measured (``benchmarks/bench_index.py``, 100k
#: rows, 384-d hash embedding): recall@10 0.55 at 128, 0.65 at 256, same latency (~5x below FLAT).
EF_SEARCH = 256


def creation_index(mode: str, metric: str) -> dict[str, Any]:
    """The index parameters of new collections for an index mode."""
    if mode not in INDEX_MODES:
        raise ValueError(f"index must be one of {', '.join(INDEX_MODES)}, not {mode!r}")
    if mode == "hnsw":
        return {"index_type": "HNSW", "metric_type": metric, "params": dict(HNSW_PARAMS)}
    return {"index_type": "FLAT", "metric_type": metric, "params": {}}


def index_and_search_params(
    index_params: Mapping[str, Any] | None, search_params: Mapping[str, Any] | None, index_mode: str = "flat"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The index parameters of new collections and the search parameters, with one metric.

    Default: exact ``FLAT``/``COSINE`` search; ``index_mode="hnsw"``: HNSW
    (:mod:`.indexes`). Explicit ``index_params`` win over the mode.

    Raises:
        ValueError: The metric is not ``COSINE`` or ``IP`` (scores must be similarities), or
            the index mode is unknown.
    """
    mode_index = creation_index(index_mode, "COSINE")
    index = dict(index_params or (DEFAULT_INDEX_PARAMS if index_mode != "hnsw" else mode_index))
    metric = str(index.get("metric_type", "COSINE")).upper()
    if metric not in ("COSINE", "IP"):
        raise ValueError(f"metric_type must be COSINE or IP (similarities), not {metric!r}")
    index["metric_type"] = metric
    return index, {"metric_type": metric, "params": {}, **dict(search_params or {})}


def search_params_for(base: Mapping[str, Any], index_type: str, limit: int) -> dict[str, Any]:
    """Search parameters for a collection indexed with ``index_type`` (HNSW: ``ef >= limit``)."""
    if index_type != "HNSW":
        return dict(base)
    params = dict(base.get("params") or {})
    params["ef"] = max(int(params.get("ef", EF_SEARCH)), int(limit))
    return {**base, "params": params}
