"""Passages as the Documents a retriever returns: provenance metadata, scores in order, an optional cut-off.

Every graph and naive retrieval ends here. The metadata keys (see the retrievers' docstrings):

* ``_score`` — decreases down the list. Graph retriever: the reciprocal rank ``1 / rank``
  (1.0, 0.5, 0.333...), since its ranking mixes scales that cannot be compared (PageRank
  mass, relation similarity, passage similarity); naive retriever: the passage's similarity.
* ``_raw_score`` — the graph ranker's own value behind the rank: PageRank mass
  (``_ranked_by="graph"`` under ``ranking="ppr"``), the relation's similarity (``"llm"``,
  ``"graph"`` under ``ranking="similarity"``) or the passage's similarity (the fill).
* ``_similarity`` — the passage's similarity to the query (the passage search's score,
  cosine by default): the one value comparable across passages, modes and queries, and
  what ``min_score`` cuts on. Absent only when Milvus did not score a passage it returned.
* ``_ranked_by`` — ``"llm"``, ``"graph"``, ``"passage_similarity"``, or
  :data:`NO_GRAPH_RANKED_BY` (:data:`NO_GRAPH_IN_FILTER_RANKED_BY`) when the store (the
  filter's part of it) has no relation.

:func:`source_label` is how the command line, the agent tool and the subgraph page name
a passage's origin (file, and page counted from 1).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document

from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.retrieval.effects import Fetch, Search, Steps, ask
from langchain_graphrag_milvus.retrieval.stages import Ranked

__all__ = [
    "PASSAGE_FIELDS",
    "NO_GRAPH_RANKED_BY",
    "NO_GRAPH_IN_FILTER_RANKED_BY",
    "no_graph",
    "NO_GRAPH_EVENT",
    "passage_document",
    "passage_rows",
    "row_metadata",
    "ranked_documents",
    "rank_score",
    "source_label",
    "SOURCE_KEYS",
]

PASSAGE_FIELDS = ("text", "$meta")
logger = logging.getLogger("langchain_graphrag_milvus")

#: ``_ranked_by`` of passages a graph retriever ranked by similarity because there is no graph to walk.
NO_GRAPH_RANKED_BY = "passage_similarity (no graph: the store has no relations)"
#: The same, under a filter whose part of the store has no relation (e.g. a tenant without a graph).
NO_GRAPH_IN_FILTER_RANKED_BY = "passage_similarity (no graph: no relations in the filter's part of the store)"


def no_graph(ranked_by: object) -> bool:
    """Whether a ``_ranked_by`` value says there was no graph to rank with."""
    return ranked_by in (NO_GRAPH_RANKED_BY, NO_GRAPH_IN_FILTER_RANKED_BY)


#: Name of the custom callback event (and INFO log) of a graph retrieval that found no relation at all.
NO_GRAPH_EVENT = "graphrag_no_graph"

#: Metadata keys naming where a passage comes from, in order of preference.
SOURCE_KEYS = ("source", "source_id", "file_path", "url", "title")

_ROW_KEYS = ("pk", "text", "vector", "doc_hash", "$meta")


def rank_score(rank: int) -> float:
    """The graph retriever's ``_score`` of the passage at ``rank`` (1-based): ``1 / rank``."""
    return 1.0 / rank


def source_label(meta: Mapping[str, Any]) -> str:
    """Where a passage comes from: its source (file, url...) and page, e.g. ``"guide.pdf, page 3"``.

    The page is the loader's ``page`` (PDF pages counted from 0, as ``PyPDFLoader`` does)
    shown counted from 1; without a source, the passage id.
    """
    source = next((str(meta[k]) for k in SOURCE_KEYS if meta.get(k) not in (None, "")), None)
    source = source or str(meta.get("_passage_id", "?"))
    page = meta.get("page")
    if isinstance(page, int) and not isinstance(page, bool):
        return f"{source}, page {page + 1}"
    return f"{source}, page {page}" if page not in (None, "") else source


def row_metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    """The user's metadata of a passage row (its fields and dynamic fields, not text, vector or hashes)."""
    meta = {k: v for k, v in row.items() if k not in _ROW_KEYS}
    meta.update(row.get("$meta") or {})
    meta.pop("doc_hash", None)
    return meta


def passage_document(
    pid: str,
    row: dict[str, Any],
    ranked: Ranked | None = None,
    score: float | None = None,
    *,
    similarity: float | None = None,
) -> Document:
    """A passage row as a Document with the user's metadata and provenance keys.

    With ``ranked`` (graph retriever), ``_score`` is set by :func:`ranked_documents`
    (the rank); ``_raw_score`` is the ranker's value. With ``score`` alone (naive
    retriever), ``_score`` and ``_similarity`` are the passage's similarity.
    """
    meta = row_metadata(row)
    meta["_passage_id"] = pid
    if ranked is not None:
        meta["_score"] = float(ranked.score)
        meta["_raw_score"] = float(ranked.score)
        meta["_ranked_by"] = ranked.ranked_by
        meta["_relations"] = [c.text for c in ranked.relations]
        meta["_relation_ids"] = [c.id for c in ranked.relations]
        meta["_hops"] = ranked.hops
    elif score is not None:
        meta["_score"] = float(score)
        meta["_ranked_by"] = "passage_similarity"
        similarity = score if similarity is None else similarity
    if similarity is not None:
        meta["_similarity"] = float(similarity)
    return Document(id=pid, page_content=str(row.get("text", "")), metadata=meta)


def passage_rows(
    ids: list[str], in_hand: Sequence[Hit], filter_expr: str | None, qvec: tuple[float, ...] | None = None
) -> Steps[dict[str, tuple[dict[str, Any], float | None]]]:
    """The passage rows of ``ids`` with their similarity to the query: those in hand, then the rest.

    The passage search (``in_hand``) asked for the same fields (:data:`PASSAGE_FIELDS`)
    under the same filter, so a hit is the row a fetch would return, with its score. The
    other ids are read by one search restricted to them (``pk in [...]``, under the filter)
    scored against ``qvec`` (without a filter, a store may answer it by reading those rows by
    key and scoring them itself: :mod:`~langchain_graphrag_milvus.milvus.keyed_search`); an id
    that search does not return is fetched, unscored. Without ``qvec``, they are fetched. Ids
    the filter excludes are absent from the answer.
    """
    have = {h.id: (dict(h.fields), float(h.score)) for h in in_hand}
    rows: dict[str, tuple[dict[str, Any], float | None]] = {i: have[i] for i in ids if i in have}
    missing = tuple(i for i in dict.fromkeys(ids) if i not in have)
    if missing and qvec is not None:
        restricted = expr.and_all(filter_expr, expr.in_list("pk", list(missing)))
        within = missing if filter_expr is None else None  # the keys it selects: a store may read them by key
        try:
            (hits,) = yield from ask(Search("passages", (qvec,), len(missing), restricted, PASSAGE_FIELDS, within))
        except Exception as exc:  # e.g. a team's own collection whose key is not ``pk``: fetched, unscored
            logger.debug("passage similarity search failed (%s); fetching the rows", exc)
            hits = []
        rows.update((h.id, (dict(h.fields), float(h.score))) for h in hits if h.id in missing)
        missing = tuple(i for i in missing if i not in rows)
    if missing:
        fetched = yield from ask(Fetch("passages", missing, PASSAGE_FIELDS, filter_expr))
        rows.update((i, (row, None)) for i, row in fetched.items())
    return rows


def ranked_documents(
    final: Sequence[Ranked],
    rows: Mapping[str, tuple[dict[str, Any], float | None]],
    fill: Sequence[Hit],
    k: int,
    *,
    min_score: float | None = None,
    fill_ranked_by: str = "passage_similarity",
) -> list[Document]:
    """The graph retriever's Documents: ``final`` in order, then ``fill`` up to ``k``; ranks as scores.

    A passage whose similarity is below ``min_score`` is left out, whatever ranked it (an
    unscored one is kept); without ``min_score``, passages a filter removed are replaced
    from ``fill`` (the passage search's hits, most similar first), so ``k`` come back when
    the store has them. With it, fewer may: the list is never padded with passages below it.
    """

    def passes(similarity: float | None) -> bool:
        return min_score is None or similarity is None or similarity >= min_score

    docs: list[Document] = []
    for r in final:
        if r.id in rows and passes(rows[r.id][1]):
            row, similarity = rows[r.id]
            docs.append(passage_document(r.id, row, r, similarity=similarity))
    have = {d.id for d in docs}
    for h in fill:
        if len(docs) >= k:
            break
        if h.id not in have and passes(h.score):
            ranked = Ranked(h.id, h.score, fill_ranked_by)
            docs.append(passage_document(h.id, dict(h.fields), ranked, similarity=h.score))
            have.add(h.id)
    for rank, doc in enumerate(docs, start=1):
        doc.metadata["_score"] = rank_score(rank)
    return docs[:k]
