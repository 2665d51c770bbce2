"""Index parameters by mode, and search parameters by index type (see :mod:`.indexes`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = [
    "IndexMode",
    "INDEX_MODES",
    "HNSW_THRESHOLD",
    "HNSW_PARAMS",
    "EF_SEARCH",
    "creation_index",
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


def search_params_for(base: Mapping[str, Any], index_type: str, limit: int) -> dict[str, Any]:
    """Search parameters for a collection indexed with ``index_type`` (HNSW: ``ef >= limit``)."""
    if index_type != "HNSW":
        return dict(base)
    params = dict(base.get("params") or {})
    params["ef"] = max(int(params.get("ef", EF_SEARCH)), int(limit))
    return {**base, "params": params}
