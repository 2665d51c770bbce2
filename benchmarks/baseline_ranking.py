"""The previous no-LLM ranking, kept as a baseline outside the package (moved from
``langchain_graphrag_milvus.retrieval.ranking``; no retriever uses it).

The retriever's default is :mod:`~langchain_graphrag_milvus.retrieval.walk_ranking` (chained
PageRank walks, constants chosen by cross-validation, behind the ``PageRankWalk`` ranking value).
What follows is the ranking it replaced; ``cv_ranking.py`` runs it as the "old default" baseline. Its bridge
constants were fitted to the 51 musique100 dev questions, and most of its Recall@2 gain
did not carry over to held-out questions:

1. **Seeds.** The relations most similar to the query (a sharp softmax over their
   similarities, plus a small bonus when the query uses the words of their predicate,
   mixed with a broader softmax), the passages most similar to it (sharp softmax) and
   the entities the query names (weighted by specificity, 1 / number of passages that
   mention them). Each group gets a third of the restart mass.
2. **Personalised PageRank** over the entity–relation–passage graph (damping 0.7).
   Passages are ranked by their PageRank mass: a passage gains from being similar to the
   query *and* from being connected to what is.
3. **Bridge.** The second slot goes to the passage that continues the top passage's
   most query-relevant fact: entities of the top passage's relations (not named in the
   query, weighted by the relation's similarity and by specificity) are followed to the
   other top candidates, preferring passages that are *about* that entity, whose facts
   about it match the query, and whose predicates use the words of the question that
   the top passage leaves unanswered. This is the second hop of a two-hop question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank
from langchain_graphrag_milvus.retrieval.ranking import entity_passage_counts
from langchain_graphrag_milvus.text.tokens import QUESTION_STOPWORDS, terms

__all__ = [
    "PPRRankingParams",
    "ppr_passage_scores",
    "order_passages",
    "bridge_choice",
    "softmax_weights",
    "predicate_overlap",
    "content_words",
]

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]


@dataclass(frozen=True, kw_only=True)
class PPRRankingParams:
    """Settings of the no-LLM ranking (defaults: the best measured on musique100 dev)."""

    relation_seeds: int = 50
    passage_seeds: int = 3
    sharp_temperature: float = 0.02
    broad_temperature: float = 0.05
    broad_share: float = 0.3
    damping: float = 0.7
    bridge_candidates: int = 10
    bridge_specificity: float = 0.5
    bridge_about_weight: float = 0.3
    bridge_coverage_weight: float = 0.5
    lexical_weight: float = 0.1


def softmax_weights(scores: npt.ArrayLike, temperature: float) -> F32:
    """Softmax of ``scores / temperature`` (sums to 1; empty in, empty out)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return np.empty(0, np.float32)
    z = np.exp((s - s.max()) / temperature)
    out: F32 = (z / z.sum()).astype(np.float32)
    return out


def ppr_passage_scores(
    graph: GraphIndex,
    *,
    relation_idx: I32,
    relation_scores: F32,
    passage_idx: I32,
    passage_scores: F32,
    entity_idx: I32,
    params: PPRRankingParams,
    relation_mask: npt.NDArray[np.bool_] | None = None,
    passage_mask: npt.NDArray[np.bool_] | None = None,
) -> F32:
    """PageRank mass of every graph passage for the given seeds (zeros if there are none).

    With masks (a tenant view) the walk and the entity specificities see only the
    allowed relations and passages: nothing outside the view changes the scores.
    """
    relation_w = entity_w = passage_w = None
    if relation_idx.size:
        w = (1 - params.broad_share) * softmax_weights(relation_scores, params.sharp_temperature)
        w += params.broad_share * softmax_weights(relation_scores, params.broad_temperature)
        relation_w = (relation_idx, w)
    if passage_idx.size:
        passage_w = (passage_idx, softmax_weights(passage_scores, params.sharp_temperature))
    if entity_idx.size:
        spec = 1.0 / np.maximum(entity_passage_counts(graph, entity_idx, relation_mask, passage_mask), 1)
        entity_w = (entity_idx, (spec / spec.sum()).astype(np.float32))
    if relation_w is None and passage_w is None and entity_w is None:
        return np.zeros(graph.n_passages, np.float32)
    result = personalized_pagerank(
        graph,
        entity_weights=entity_w,
        relation_weights=relation_w,
        passage_weights=passage_w,
        damping=params.damping,
        relation_mask=relation_mask,
        passage_mask=passage_mask,
    )
    return result.passage


def order_passages(scores: F32, limit: int) -> I32:
    """Graph passages with positive score, best first (ties by index), at most ``limit``."""
    positive = np.flatnonzero(scores > 0)
    order = positive[np.lexsort((positive, -scores[positive]))]
    return order[:limit].astype(np.int32)


def _tokens(text: str) -> set[str]:
    return terms(text)


def content_words(text: str) -> set[str]:
    """Lower-cased, crudely stemmed words of ``text`` without stopwords (see :mod:`.text.tokens`)."""
    return terms(text, stopwords=QUESTION_STOPWORDS, stem=True)


def predicate_overlap(query: str, predicates: Sequence[str]) -> F32:
    """For each predicate, the share of its content words that the query uses.

    "was the son of" → {"son"}: 1.0 for "What did the son of Euler's teacher do?". The
    question's relational words often appear literally in the predicate it needs, which
    an embedding of the whole triplet blurs (a lexical signal next to the dense one).
    """
    words = content_words(query)
    out = np.zeros(len(predicates), np.float32)
    for i, predicate in enumerate(predicates):
        pw = content_words(predicate)
        if pw:
            out[i] = len(pw & words) / len(pw)
    return out


def bridge_choice(
    graph: GraphIndex,
    candidates: Sequence[int],
    relation_score: Mapping[int, float],
    relation_predicate: Mapping[int, str],
    entity_names: Mapping[int, str],
    query: str,
    params: PPRRankingParams,
    relation_mask: npt.NDArray[np.bool_] | None = None,
    passage_mask: npt.NDArray[np.bool_] | None = None,
) -> int | None:
    """The candidate that continues the top passage's most query-relevant fact, if any.

    A bridge is an entity of the top passage's relations that the query does not name,
    weighted by that relation's score and by specificity (1 / passages ** s). A candidate
    passage scores ``weight · (a · about + (1 - a) · fit) + c · coverage``: how much it is
    about the bridge, how well its facts about the bridge match the query, and how many of
    the query's words its predicates use that the top passage's do not (the part of the
    question still to answer).

    Args:
        graph: The graph.
        candidates: Graph passage indices, best first; ``candidates[0]`` is the top passage.
        relation_score: Query score of the candidates' relations (by relation index).
        relation_predicate: Predicates of the candidates' relations (by relation index).
        entity_names: Display names of the top passage's entities (by index).
        query: The query.
        params: ``bridge_specificity``, ``bridge_about_weight``, ``bridge_coverage_weight``.
        relation_mask: Optional tenant view: only these relations...
        passage_mask: ...and these passages count in the bridge entities' specificity.

    Returns:
        A graph passage index from ``candidates[1:]``, or None when none is bridged.
    """
    if len(candidates) < 2:
        return None
    top = int(candidates[0])
    query_tokens = _tokens(query)
    query_words = content_words(query)
    weight: dict[int, float] = {}
    top_words: set[str] = set()
    for rel in graph.pas_rel.row(top).tolist():
        top_words |= content_words(relation_predicate.get(rel, ""))
        score = relation_score.get(rel)
        if score is None:
            continue
        for ent in (int(graph.rel_subject[rel]), int(graph.rel_object[rel])):
            name_tokens = _tokens(entity_names.get(ent, ""))
            if not name_tokens or name_tokens <= query_tokens:
                continue  # the query names it already: not a bridge to something new
            weight[ent] = max(weight.get(ent, -np.inf), score)
    if not weight:
        return None
    ents = np.fromiter(weight, dtype=np.int64)
    counts = entity_passage_counts(graph, ents, relation_mask, passage_mask)
    spec = np.maximum(counts, 1).astype(np.float64) ** params.bridge_specificity
    weight = {int(e): weight[int(e)] / s for e, s in zip(ents, spec)}
    remaining = query_words - top_words
    a = params.bridge_about_weight
    best: tuple[float, int] | None = None
    for rank, cand in enumerate(candidates[1:], start=1):
        rels = graph.pas_rel.row(int(cand))
        words = set().union(*(content_words(relation_predicate.get(int(r), "")) for r in rels.tolist()))
        coverage = len(words & remaining) / max(len(query_words), 1)
        for ent, w in weight.items():
            with_ent = rels[(graph.rel_subject[rels] == ent) | (graph.rel_object[rels] == ent)]
            if with_ent.size == 0:
                continue
            about = with_ent.size / max(rels.size, 1)
            fit = max(relation_score.get(int(r), 0.0) for r in with_ent.tolist())
            value = w * (a * about + (1 - a) * fit) + params.bridge_coverage_weight * coverage
            if best is None or value > best[0]:
                best = (value, rank)
    return None if best is None else int(candidates[best[1]])


