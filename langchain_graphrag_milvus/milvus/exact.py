"""Exact answers where an approximate index falls short: a filtered search scored in the client.

On an approximate index (HNSW, IVF, ``AUTOINDEX``...), Milvus 2.3 can answer a search
filtered to few rows with fewer hits than the filter matches: on musique100's relations
(28,871 rows, HNSW M=16, ef=256), searches filtered to 50 ids with limit 50 returned 2–9
rows. The graph pipeline filters that way (the relations of the expanded graph, the edges
of a path) and so does a tenant's passage filter, so those answers would silently lose rows.

When a filtered search on such a collection returns fewer hits than its limit for some
query vector, :class:`~langchain_graphrag_milvus.milvus.reads.MilvusReads` reads the rows the
filter matches, with their vectors (at most :data:`EXACT_ROWS` of them, one query), and
:func:`exact_hits` scores them here with the index's metric, as a FLAT index would. A filter
matching more rows than that keeps the index's answer (documented limit: such a filter is not
selective, which is where approximate indexes do return their limit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["EXACT_ROWS", "approximate", "short_queries", "exact_query", "exact_hits"]

#: Most rows a filter may match for its search to be answered exactly in the client.
EXACT_ROWS = 4096
#: Index types whose searches are exhaustive.
_EXACT_INDEXES = frozenset({"FLAT", "BIN_FLAT", ""})


def approximate(index_type: str) -> bool:
    """Whether a search on an index of this type may miss rows (``""``: unknown, taken as exact)."""
    return index_type.upper() not in _EXACT_INDEXES


def short_queries(request: Mapping[str, Any], found: Sequence[int]) -> list[int]:
    """The query vectors of a filtered ``request`` that got fewer hits (``found``) than its limit."""
    if not request.get("filter"):
        return []
    limit = int(request["limit"])
    return [i for i, n in enumerate(found) if n < limit]


def exact_query(request: Mapping[str, Any], key_field: str) -> dict[str, Any]:
    """The query reading what the search's filter matches: its output fields, the key and the vectors."""
    fields = list(dict.fromkeys([key_field, *request["output_fields"], request["anns_field"]]))
    return {
        "collection_name": request["collection_name"],
        "filter": request["filter"],
        "output_fields": fields,
        "limit": EXACT_ROWS + 1,
        "timeout": request.get("timeout"),
        "consistency_level": request.get("consistency_level"),
    }


def _scores(metric: str, queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Milvus' ``distance`` of each vector to each query: similarity (COSINE, IP) or squared L2."""
    if metric == "L2":
        return np.asarray(((queries[:, None, :] - vectors[None, :, :]) ** 2).sum(axis=2))
    if metric == "COSINE":
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-30)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-30)
    return np.asarray(queries @ vectors.T)


def exact_hits(
    request: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], key_field: str
) -> list[list[dict[str, Any]]] | None:
    """Every query vector's top ``limit`` of ``rows``, in Milvus' search result shape.

    ``None`` when the filter matched more than :data:`EXACT_ROWS` rows (keep the index's answer).
    Ties keep the rows' order; the vector field is not returned, as in a search.
    """
    if len(rows) > EXACT_ROWS:
        return None
    queries = np.asarray(request["data"], dtype=np.float64)
    limit = int(request["limit"])
    if not rows:
        return [[] for _ in range(len(queries))]
    vector_field = request["anns_field"]
    metric = str((request.get("search_params") or {}).get("metric_type", "COSINE")).upper()
    vectors = np.asarray([list(r[vector_field]) for r in rows], dtype=np.float64)
    scores = _scores(metric, queries, vectors)
    entities = [{k: v for k, v in r.items() if k != vector_field} for r in rows]
    out = []
    for per_query in scores:
        order = np.argsort(per_query if metric == "L2" else -per_query, kind="stable")[:limit]
        out.append(
            [{"id": entities[j][key_field], "distance": float(per_query[j]), "entity": entities[j]} for j in order]
        )
    return out
