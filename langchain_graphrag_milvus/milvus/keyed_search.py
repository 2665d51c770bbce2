"""A passage search restricted to a few keys, answered by reading those rows and scoring them here.

After its walk, a graph query reads the passages it ranks that the dense search did not return,
with their similarity to the query: a search restricted to them (``pk in [...]``, the
:class:`~langchain_graphrag_milvus.retrieval.effects.Search`'s ``within``). On a server that
scored search of ≈ 2 rows and the read of the same rows by key with their vectors cost about the
same at p50 (≈ 3 ms), but the search's tail is longer (p90 14–22 ms against ≈ 7 under load:
``benchmarks/README.md``, "The second wave read by key"). :func:`keyed_search`
answers such a search so: one read by key (the row's fields and its vector), scored with the
client's one passage scoring (:class:`~.local_passages.PassageTable`, the one the held passage
search of Milvus Lite uses), with the index's own metric: ``COSINE`` (both sides at unit length)
or ``IP``. Only where that is the score Milvus gives: an index that scores the stored vectors
themselves (:data:`EXACT_SCORES`, not a quantized one), this package's row layout, and a limit
that keeps every row (no cut whose ties Milvus would break its own way). Anything else (more
than :data:`KEYED_MAX` keys, a row read without its vector, another dimension) returns None:
Milvus searches, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_graphrag_milvus.milvus.local_passages import PassageTable
from langchain_graphrag_milvus.milvus.read_seam import Hit, StoreReads
from langchain_graphrag_milvus.milvus.row_layout import RowLayout
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.milvus.state_seam import StoreState

__all__ = ["KEYED_MAX", "EXACT_SCORES", "keyed_search"]

#: Most keys a restricted passage search reads by key (a graph query's second wave: ≈ 2 p50, 4 max at 20k).
KEYED_MAX = 64
#: Index types whose search scores the stored vectors as they are (a quantized index scores an approximation).
EXACT_SCORES = frozenset({"FLAT", "IVF_FLAT", "HNSW"})


def keyed_search(
    reads: StoreReads,
    state: StoreState,
    kind: Kind,
    vectors: Sequence[Sequence[float]],
    limit: int,
    within: Sequence[str] | None,
    output_fields: Sequence[str],
) -> list[list[Hit]] | None:
    """Per vector, the rows of ``within`` (the keys the search's filter selects) most similar first; None: search.

    The hits carry the fields the search would return (the row read by key, without its
    vector and key); a key without a row is no hit, as in the search.
    """
    if kind != "passages" or within is None or not vectors:
        return None
    ids = list(dict.fromkeys(within))
    layout = getattr(reads, "layout", None)
    if not ids or len(ids) > KEYED_MAX or limit < len(ids) or type(layout) is not RowLayout:
        return None
    metric = state.index_metric(kind)
    if metric not in ("COSINE", "IP") or state.index_type(kind) not in EXACT_SCORES:
        return None
    if state.dim is not None and state.dim != len(vectors[0]):
        return None  # Milvus' search raises its typed error (checked before any read)
    fields = layout.search_fields(kind, output_fields)
    rows = reads.fetch(kind, ids, [*fields, "vector"])
    if not rows:
        return [[] for _ in vectors]
    found = list(rows)
    matrix = [rows[i].get("vector") for i in found]
    if any(v is None or len(v) != len(vectors[0]) for v in matrix):
        return None
    cosine = metric == "COSINE"
    scored = PassageTable.of(found, matrix, cosine).hits(vectors, len(found), cosine)
    drop = {"vector"} if "pk" in fields else {"vector", "pk"}
    shown = {i: {f: v for f, v in row.items() if f not in drop} for i, row in rows.items()}
    return layout.hits(kind, [[Hit(i, score, shown[i]) for i, score in per_query] for per_query in scored])
