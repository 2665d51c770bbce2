"""The retrieval pipeline, written once for sync and async ("sans-IO").

:func:`graph_pipeline` is a generator: it does the pure work itself (ranking, pool,
documents) and *yields* an effect object whenever it needs I/O — a runnable call, an
embedding call, Milvus searches. The retriever's sync executor answers each effect with
blocking calls, its async executor with ``await``. Both run this same code, so the two
paths cannot drift apart; failures of an effect are thrown back into the generator,
which decides where to fall back (reranker, entity extractor) and where to fail (Milvus).

The ranking is a value (:mod:`~langchain_graphrag_milvus.retrieval.rankings`): the pipeline
asks it what to search and lets it rank, and never tests which ranking it holds.

* :class:`~.rankings.PageRankWalk` (``"ppr"``, default): chained PageRank walks; with a
  reranker, its pool is one relation per passage of the graph ∪ vector ranking.
* :class:`~.rankings.SimilarityExpansion` (``"similarity"``): the seed notebook's method —
  entity top-k and relation top-k, ``hops`` of expansion, candidates ordered by their
  similarity to the query.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.csr import gather_rows
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import MAX_TOP_K, Hit
from langchain_graphrag_milvus.milvus.vectors import check_query_vectors
from langchain_graphrag_milvus.retrieval.documents import (
    NO_GRAPH_EVENT,
    NO_GRAPH_IN_FILTER_RANKED_BY,
    NO_GRAPH_RANKED_BY,
    PASSAGE_FIELDS,
    passage_document,
    passage_rows,
    ranked_documents,
)
from langchain_graphrag_milvus.retrieval.effects import (
    CheckGraph,
    Embed,
    Gather,
    GetGraph,
    Invoke,
    LinkEntities,
    Notify,
    Search,
    SearchHeld,
    Steps,
    ViewOf,
    ask,
    search_all,
)
from langchain_graphrag_milvus.retrieval.held import held_documents
from langchain_graphrag_milvus.retrieval.params import RetrievalParams
from langchain_graphrag_milvus.retrieval.query_entities import MAX_QUERY_ENTITIES
from langchain_graphrag_milvus.retrieval.rankings import relation_scope
from langchain_graphrag_milvus.retrieval.stages import (
    RELATION_FIELDS,
    Candidate,
    QueryHits,
    Ranked,
    entity_seeds,
    exact_entities,
    from_relations,
    merge,
    order_from_positions,
    query_texts,
    search_in_view,
)

logger = logging.getLogger("langchain_graphrag_milvus")

__all__ = [
    "RetrievalParams",
    "Candidate",
    "graph_pipeline",
    "naive_pipeline",
    "first_searches",
    "names_and_query_vector",
    "relation_scope",
    "rerank",
    "query_entities",
    "first_unique_names",
    "passage_document",
    "passage_rows",
    "MAX_QUERY_ENTITIES",
]


# ---------------------------------------------------------------------- stages
def query_entities(
    query: str,
    given: tuple[str, ...] | None,
    extractor: Runnable[str, list[str]] | None,
    *,
    timeout: float | None = None,
    filter_expr: str | None = None,
    limit: int = MAX_QUERY_ENTITIES,
) -> Steps[list[str]]:
    """The query's entity names: ``given``, else the extractor's, else the offline linker's.

    At most ``limit`` distinct non-blank names are kept (the first ones; the scan stops
    there, so an answer listing millions of names costs no more than ``limit`` of them).
    An extractor that fails, answers something that is not a list, or takes longer than
    ``timeout`` seconds is replaced by the offline linker with a logged warning. With
    ``filter_expr``, the linker knows only the names inside that filter's view.
    """
    if given is not None:
        return first_unique_names(given, limit)
    if extractor is not None:
        try:
            answer = yield from ask(Invoke(extractor, query, timeout))
            if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple)):
                raise TypeError(f"the extractor answered {type(answer).__name__}, not a list of names")
            return first_unique_names(answer, limit)
        except Exception as exc:  # a failing LLM must not fail retrieval
            logger.warning("entity extraction failed (%s); using the offline linker", exc or type(exc).__name__)
    return first_unique_names((yield from ask(LinkEntities(query, filter_expr))) or [], limit)


def first_unique_names(names: Any, limit: int) -> list[str]:
    """The first ``limit`` distinct non-blank names (strings only), in order; linear, stops early."""
    out: dict[str, None] = {}
    for name in names:
        if len(out) >= limit:
            break
        if isinstance(name, str) and (clean := name.strip()):
            out.setdefault(clean, None)
    return list(out)


# ---------------------------------------------------------------------- pipelines
def graph_pipeline(
    query: str,
    p: RetrievalParams,
    *,
    entity_extractor: Runnable[str, list[str]] | None,
    reranker: Runnable[dict[str, Any], list[int]] | None,
    trace: dict[str, Any] | None = None,
) -> Steps[list[Document]]:
    """The whole retrieval; yields effects, returns the Documents.

    ``trace``, if given, is filled with the intermediate state (query entities, hits,
    graph, expansion, scores, pool, reranker choice) for :mod:`~langchain_graphrag_milvus.subgraph`.
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    names, early = yield from names_and_query_vector(query, p, entity_extractor, overlap=trace is None)
    held = reranker is None and not p.filter
    docs = yield from _documents(query, names, early, p, reranker, trace, held=held)
    if docs is None:  # the store changed while the held answer was read: searched again the usual way
        docs = yield from _documents(query, names, early, p, reranker, trace, held=False)
    assert docs is not None  # (only a held answer is dropped)
    return docs


def _documents(
    query: str,
    names: list[str],
    early: list[list[float]] | None,
    p: RetrievalParams,
    reranker: Runnable[dict[str, Any], list[int]] | None,
    trace: dict[str, Any] | None,
    *,
    held: bool,
) -> Steps[list[Document] | None]:
    """The searches, the ranking and the rows returned; None if a held answer (``held``) no longer holds."""
    q = yield from first_searches(
        query, names, p, with_reranker=reranker is not None, all_entities=trace is not None, query_vectors=early,
        held=held,
    )  # fmt: skip
    if trace is not None:
        trace.update(params=p, entities=names, graph=q.graph, view=q.view, query_vector=q.qvec)
        trace.update(entity_hits=q.entity_hits, relation_hits=q.relation_hits, passage_hits=q.passage_hits)

    ranked, pool = yield from p.ranking.rank(q, p, reranker is not None, trace)
    chosen = (yield from rerank(query, pool, p, reranker)) if reranker is not None and pool else []
    if trace is not None:
        trace.update(pool=pool, chosen=chosen)
    fill_by, why = _no_graph(q)
    if why:
        yield from ask(Notify(NO_GRAPH_EVENT, {"reason": why, "filter": p.filter}))
    dense = [Ranked(h.id, h.score, fill_by) for h in q.passage_hits]
    ranked = p.ranking.merge_dense(ranked, dense, p.k, linked=bool(entity_seeds(q)))
    final = merge(p.k, from_relations(chosen, "llm"), ranked, dense)
    if q.held is not None:  # every search answered in the client: the rows in one read, with the stamp's check
        return (yield from held_documents(final, q, p.k, p.min_score, fill_by))
    rows = yield from passage_rows([r.id for r in final], q.passage_hits, p.filter, q.qvec)
    return ranked_documents(final, rows, q.passage_hits, p.k, min_score=p.min_score, fill_ranked_by=fill_by)


def names_and_query_vector(
    query: str, p: RetrievalParams, extractor: Runnable[str, list[str]] | None, *, overlap: bool = True
) -> Steps[tuple[list[str], list[list[float]] | None]]:
    """The query's entity names and, when the offline linker finds them, the query's embedding made meanwhile.

    The linker needs no vector and the query's embedding needs no name, so under a ranking that
    does not embed exactly linked names (``ranking="ppr"``; the linker's names are the graph's own)
    the two go out in one :class:`Gather`: the embedding no longer waits for the linker.
    :func:`first_searches` uses that vector when only the query is to be embedded, the same
    ``Embed((query,))`` it would make; else it embeds the query with the names, as before (given
    names, an extractor, or ``overlap=False``: the names first, no vector here).
    """
    if p.entities is not None or extractor is not None or not overlap or not p.ranking.links_exact_entities:
        names = yield from query_entities(
            query, p.entities, extractor, timeout=p.extractor_timeout, filter_expr=p.filter
        )
        return names, None
    head = query_texts(query, p.ranking)  # the query's parts (if any) embedded beside it, not after it
    embeds = (Embed(head[:1]), *((Embed(head[1:]),) if len(head) > 1 else ()))
    found, *vectors = yield from ask(Gather((LinkEntities(query, p.filter), *embeds)))
    return first_unique_names(found or [], MAX_QUERY_ENTITIES), [v for answer in vectors for v in answer]


def _no_graph(q: QueryHits) -> tuple[str, str | None]:
    """The ``_ranked_by`` of the similarity fill, and why there is no graph to rank with (None: there is one)."""
    if q.graph.n_relations == 0:
        return NO_GRAPH_RANKED_BY, "the store has no relations: passages are ranked by similarity only"
    if q.view is not None and not bool(q.view.relations.any()):
        why = "the filter's part of the store has no relations: passages are ranked by similarity only"
        return NO_GRAPH_IN_FILTER_RANKED_BY, why
    return "passage_similarity", None


def first_searches(
    query: str,
    names: list[str],
    p: RetrievalParams,
    *,
    with_reranker: bool,
    all_entities: bool = False,
    check_with_searches: bool = True,
    query_vectors: list[list[float]] | None = None,
    held: bool = False,
) -> Steps[QueryHits]:
    """The graph, one embedding call for the query and its entities, and the batched searches.

    What to search comes from the ranking value (``p.ranking``). Under ``ranking="ppr"``
    (:attr:`~.rankings.Ranking.links_exact_entities`) a name that is exactly a graph entity
    (inside the filter's view) is neither embedded nor searched: the ranking seeds that entity
    and never reads the name's vector hits, so its ``entity_hits`` are ``[]``. ``all_entities``
    (a trace, which shows every name's hits) searches them all, as ``ranking="similarity"`` always does.
    Under a filter, the graph is restricted to the filter's view and the entity and
    relation hits are the top ones *inside* it (searching deeper when others' hits crowd
    them out). Under ``ranking="ppr"``, ``ppr_relation_seeds=0`` skips the relation search and
    ``relation_scope="entities"`` (and ``"auto"`` on graphs of 30,000 relations and more)
    restricts it to the relations of the exactly linked names (without a filter; all relations
    when no name is linked).

    The store's freshness check goes out with the searches (:class:`CheckGraph`), not before
    them: if it finds that another writer changed the data, the graph is reloaded and the
    searches are made again on it, without a second check (``check_with_searches=False``).

    ``query_vectors``: the answer to ``Embed((query,))`` made already (:func:`names_and_query_vector`),
    used when no name is to be embedded.
    """
    graph = yield from ask(GetGraph(defer_check=True))
    view = (yield from ask(ViewOf(p.filter, graph))) if p.filter else None
    searched = list(range(len(names)))
    ranking = p.ranking
    exact = exact_entities(graph, names, view).tolist() if ranking.links_exact_entities else []
    if ranking.links_exact_entities and not all_entities:  # exact names need no vector
        searched = [i for i, e in enumerate(exact) if e < 0]
    head = query_texts(query, p.ranking)
    texts = (*head, *(names[i] for i in searched))
    early = query_vectors if query_vectors is not None and len(texts) == len(head) == len(query_vectors) else None
    answer = early if early is not None else (yield from ask(Embed(texts)))
    vectors = check_query_vectors(texts, answer)  # NaN/inf/ragged: typed error, no search
    qvec = tuple(map(float, vectors[0]))
    cvecs = tuple(tuple(map(float, v)) for v in vectors[1 : len(head)])
    evecs = tuple(tuple(map(float, v)) for v in vectors[len(head) :])
    relation_k = relation_limit = ranking.relation_hits(p.relation_top_k)
    # a walk without relation seeds reads no relation hit: not searched (``ppr_relation_seeds=0``; the
    # reranker's pool scores its passages' relations with a search restricted to them)
    search_relations = relation_k > 0
    relation_filter, relation_ids = None, None
    if ranking.search_scope(graph.n_relations) == "entities" and view is None:
        relation_filter = linked_relations_filter(graph, exact)
        relation_ids = linked_relation_ids(graph, exact) if relation_filter else None
    entity_limit = p.entity_top_k
    if p.filter:  # hits of other tenants are dropped below: ask for more
        relation_limit = min(4 * relation_limit, MAX_TOP_K)
        entity_limit = min(4 * entity_limit, MAX_TOP_K)
    passage_limit = max(p.k, ranking.passage_hits(), p.max_candidates if with_reranker else 0)
    searches = [Search("passages", (qvec, *cvecs), passage_limit, p.filter, PASSAGE_FIELDS)]
    if search_relations:
        relation_search = Search("relations", (qvec,), relation_limit, relation_filter, RELATION_FIELDS, relation_ids)
        searches.insert(0, relation_search)
    if evecs:
        searches.insert(0, Search("entities", evecs, entity_limit))
    in_client = (yield from ask(SearchHeld(tuple(searches)))) if held and view is None else None
    stamp: Any = None
    if in_client is not None:  # no Milvus call: the stamp is checked with the read of the rows returned
        answers, stamp = in_client
    elif not check_with_searches:
        answers = yield from search_all(searches)
    else:
        *answers, moved_on = yield from ask(Gather((*searches, CheckGraph(graph))))
        if moved_on:  # another writer changed the data: the graph was reloaded, search it again
            again = first_searches(query, names, p, with_reranker=with_reranker, all_entities=all_entities,
                                   check_with_searches=False)  # fmt: skip
            return (yield from again)
    found: list[list[Hit]] = answers.pop(0) if evecs else []
    relation_answer = answers.pop(0) if search_relations else []
    relation_hits = relation_answer[0] if relation_answer else []
    passage_hits = answers[0][0] if answers[0] else []
    clause_hits = tuple(answers[0][1:])
    if view is not None and search_relations:
        # the top hits *inside* the view, as if nothing else existed (searching further if needed)
        (relation_hits,) = yield from search_in_view(
            "relations", (qvec,), relation_k, graph.relations, view.relations, RELATION_FIELDS,
            first=(relation_limit, [relation_hits]),
        )  # fmt: skip
    if view is not None and evecs:
        found = yield from search_in_view(
            "entities", evecs, p.entity_top_k, graph.entities, view.entities, first=(entity_limit, found)
        )
    entity_hits: list[list[Hit]] = [[] for _ in names]  # aligned with the names: [] for those not searched
    for i, hits in zip(searched, found):
        entity_hits[i] = list(hits)
    return QueryHits(graph, view, query, qvec, names, entity_hits, relation_hits, passage_hits, stamp, clause_hits)


#: Up to this many relations of the linked entities, ``relation_scope="entities"`` names them by
#: primary key. Measured at 1.8M relations (FLAT, 60 questions; relations of the linked entities →
#: p50 ms of ``pk in`` / of ``subject_id in … or object_id in …``): under 100: 8 / 35; 100–500: 15 / 36;
#: 500–2,000: 36 / 49; 2,000–5,000: 73 / 79; 8,742: 106 / 30.
PK_SCOPE_MAX = 2_000


def linked_relation_ids(graph: GraphIndex, exact: Sequence[int]) -> tuple[str, ...]:
    """The ids of the relations :func:`linked_relations_filter` selects (the search's ``within``)."""
    linked = np.unique(np.asarray([int(e) for e in exact if e >= 0], np.int64))
    _, relations = gather_rows(graph.ent_rel, linked.astype(np.int32))
    return tuple(graph.relations.ids_at(np.unique(relations)))


def linked_relations_filter(graph: GraphIndex, exact: Sequence[int]) -> str | None:
    """The filter of the linked entities' (``exact`` ≥ 0) relations; None if no entity is linked.

    ``pk in [...]`` naming the relations the graph holds for them, when they are at most
    :data:`PK_SCOPE_MAX` (Milvus looks primary keys up instead of testing every row); else
    ``subject_id in [...] or object_id in [...]`` over the entities' ids. Both through
    :mod:`~langchain_graphrag_milvus.milvus.expr`, the one escaping path.
    """
    linked = np.unique(np.asarray([int(e) for e in exact if e >= 0], np.int64))
    if not linked.size:
        return None
    indptr = graph.ent_rel.indptr
    if int((indptr[linked + 1] - indptr[linked]).sum()) <= PK_SCOPE_MAX:
        _, relations = gather_rows(graph.ent_rel, linked.astype(np.int32))
        relation_ids = graph.relations.ids_at(np.unique(relations))
        if relation_ids:
            return expr.in_list("pk", relation_ids)
    ids = graph.entities.ids_at(linked)
    return expr.any_of(expr.in_list("subject_id", ids), expr.in_list("object_id", ids))


def rerank(
    query: str, pool: list[Candidate], p: RetrievalParams, reranker: Runnable[dict[str, Any], list[int]]
) -> Steps[list[Candidate]]:
    """The pool's relations the reranker chose, in its order; ``[]`` (warning logged) if it fails."""
    try:
        positions = yield from ask(
            Invoke(
                reranker,
                {
                    "question": query,
                    "relations": [c.text for c in pool],
                    "select": p.rerank_select,
                    "candidates": [{"id": c.id, "text": c.text, "passage_ids": list(c.passage_ids)} for c in pool],
                },
                p.rerank_timeout,
            )
        )
        chosen = order_from_positions(pool, positions)
        if not chosen:
            logger.warning("reranker chose no valid relation; using the retriever's own order (%s)", p.ranking.name)
        return chosen
    except Exception as exc:
        logger.warning(
            "reranker failed (%s); using the retriever's own order (%s)", exc or type(exc).__name__, p.ranking.name
        )
        return []


def naive_pipeline(
    query: str, k: int, filter_expr: str | None, min_score: float | None = None
) -> Steps[list[Document]]:
    """Plain top-k passage search, returning the same Document format (``min_score``: drop those below)."""
    (vector,) = check_query_vectors((query,), (yield from ask(Embed((query,)))))
    hits = yield from ask(Search("passages", (tuple(map(float, vector)),), k, filter_expr, PASSAGE_FIELDS))
    kept = [h for h in hits[0] if min_score is None or h.score >= min_score]
    return [passage_document(h.id, dict(h.fields), score=h.score) for h in kept]
