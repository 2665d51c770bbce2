"""Order the top of the walk's list as a pair: the two first passages are chosen together.

A multi-hop question needs two passages: one naming the question's entity and the bridge
(an entity the question never mentions), and one about the bridge. The chained walk
(:mod:`.walk_ranking`) picks the best passage and then the best continuation of it; when the
first pick is off, its continuation is too. :func:`pair_order` looks at the first ``window``
passages of the walk's order and moves to the top the pair ``(a, b)`` that maximises

    bridge · [a and b share an entity the query does not name, a main entity of one of them]
    + shared_bridge · [a and b share an entity the query does not name]
    + cover · (share of the query's entities that a or b mentions)
    + about · (number, or share, of the query's entities that a or b is about; ``"each"``: a's plus b's)
    + dense · (a's and b's similarity to the query above the dense top ``dense_depth``'s last)
    − (rank of a + rank of b)                       (ranks 0-based in the walk's order)

so the weights are in units of rank positions: a pair further down replaces the walk's first
two only when its evidence outweighs how much further down it is. A tie keeps the walk's pair
(the earliest). The pair keeps its relative order; every other passage keeps its place in the
walk's order behind it. Nothing outside the first ``window`` passages moves, so for
``window <= k`` the top ``k`` holds the same passages (Recall@k for k >= window is unchanged);
the dense top hits' guarantee (:mod:`.keep_dense`) is applied afterwards, as before.

The retriever's weights (:data:`DEFAULT_PAIR`) are a conditional logit's, fitted on the three
evaluation graphs pooled and chosen by cross-validation (``benchmarks/cv_pair_learned.py``);
:class:`PairParams`' own defaults are the earlier hand-searched grid's (``benchmarks/cv_pair.py``).

A query with no entity seed has no coverage to measure and its bridges are every shared
entity; its order is left as the walk gave it.

Pure: the graph enters only through ``entities_of`` (a passage's entity indices and how many of
its relations each is in; :func:`graph_pair_order` reads them from the graph) and ``dense_of``
(a passage's similarity above the dense floor: :func:`dense_bonus`). The retriever applies it
to the chained walk's order (``ranking="ppr"``, ``ppr_pair_step=True`` by default), before the
merge with the dense order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex

__all__ = ["DEFAULT_PAIR", "PairParams", "dense_bonus", "graph_pair_order", "main_entities", "pair_order", "pair_score"]

T = TypeVar("T")


@dataclass(frozen=True)
class PairParams:
    """The pair step's constants: their one home (the retriever's are :data:`DEFAULT_PAIR`).

    The defaults are the hand-searched grid's choice, the retriever's until the learned weights:
    what 3 of the 5 folds chose (``benchmarks/cv_pair.py --keep-first-only``, 5-fold
    cross-validation pooled over musique100 given and offline and hotpotqa100 offline; the others
    chose ``window=5, bridge=4, cover=4`` and ``window=3, bridge=3, cover=3``); on all questions
    ``window`` 4 or 5, ``bridge`` 2.5–3 and ``cover`` 3–4 give the same results
    (``benchmarks/README.md``, issue 26).

    Attributes:
        window: How many of the walk's first passages the pair is chosen from (2 or less: off).
        bridge: Rank positions a shared non-query entity is worth.
        cover: Rank positions a full cover of the query's entities is worth (pro rata).
        bridge_mode: ``"shared"``: any shared entity the query does not name is a bridge;
            ``"main"``: only one that is a main entity of one of the two passages
            (:func:`main_entities`: the passage is about it).
        keep_first: The walk's first passage stays first; only the second place is chosen.
        about: Rank positions each query entity that one of the two passages is about
            (:func:`main_entities`) is worth (0: the term is off).
        about_mode: ``"count"``: ``about`` per such entity; ``"share"``: ``about`` times their
            share of the query's entities; ``"each"``: ``about`` per query entity a is about plus
            per query entity b is about (one entity both are about counts twice).
        shared_bridge: Rank positions any shared entity the query does not name is worth (whatever
            ``bridge_mode``; 0: off).
        dense: Rank positions per unit of a passage's similarity to the query above the last of the
            dense top ``dense_depth`` (each of the two; a passage outside that top: 0).
        dense_depth: How deep the dense (passage-similarity) order is read for ``dense``.
    """

    window: int = 4
    bridge: float = 2.5
    cover: float = 3.0
    bridge_mode: str = "main"
    keep_first: bool = True
    about: float = 0.0
    about_mode: str = "count"
    shared_bridge: float = 0.0
    dense: float = 0.0
    dense_depth: int = 5

    def __post_init__(self) -> None:
        if self.about_mode not in ("count", "share", "each"):
            raise ValueError(f"about_mode must be 'count', 'share' or 'each', got {self.about_mode!r}")
        if isinstance(self.dense_depth, bool) or not isinstance(self.dense_depth, int) or self.dense_depth < 1:
            raise ValueError(f"dense_depth must be a positive int, got {self.dense_depth!r}")


#: The retriever's pair step: the weights of a conditional logit over the terms above, in rank positions,
#: fitted on musique100 (given and offline graphs) and hotpotqa100 (offline) pooled, its window and L2 weight
#: chosen by cross-validation (``benchmarks/cv_pair_learned.py``; README, issue 26). With the first passage
#: kept, ``cover`` here is the fitted cover plus the fitted "cover the second adds" (the same ordering), and
#: ``about_mode="each"`` is the fitted "query entities the second is about" plus a per-question constant.
DEFAULT_PAIR = PairParams(
    window=5, bridge=4.56, cover=6.47, about=4.65, about_mode="each", shared_bridge=2.43, dense=16.66
)


def main_entities(counts: Mapping[int, int]) -> set[int]:
    """A passage's main entities: those in the most of its relations (what the passage is about)."""
    if not counts:
        return set()
    top = max(counts.values())
    return {e for e, c in counts.items() if c == top}


def pair_score(
    ranks: tuple[int, int],
    entities: tuple[Mapping[int, int], Mapping[int, int]],
    query: set[int],
    params: PairParams,
    dense: tuple[float, float] = (0.0, 0.0),
) -> float:
    """The score of a pair at 0-based ``ranks`` with these ``entities``, for the query's entity set ``query``.

    ``entities``: each passage's entities → how many of its relations each one is in. ``dense``: each
    passage's similarity above the dense floor (:func:`dense_bonus`; read only when ``params.dense``).
    """
    ca, cb = entities
    ea, eb = set(ca), set(cb)
    shared = (ea & eb) - query
    any_shared = bool(shared)
    ma, mb = (main_entities(ca), main_entities(cb)) if params.bridge_mode == "main" or params.about else (set(), set())
    mains = ma | mb
    if params.bridge_mode == "main":
        shared &= mains
    bridged = bool(shared)
    covered = len(query & (ea | eb)) / len(query) if query else 0.0
    score = params.bridge * bridged + params.cover * covered - (ranks[0] + ranks[1])
    if params.shared_bridge:  # 0: the term is off (the score is exactly the one without it)
        score += params.shared_bridge * any_shared
    if params.about and query:
        if params.about_mode == "each":
            score += params.about * (len(query & ma) + len(query & mb))
        else:
            about = len(query & mains)
            score += params.about * (about / len(query) if params.about_mode == "share" else about)
    if params.dense:
        score += params.dense * (dense[0] + dense[1])
    return score


def pair_order(
    order: Sequence[T],
    entities_of: Callable[[T], Mapping[int, int]],
    query_entities: Iterable[int],
    params: PairParams,
    dense_of: Callable[[T], float] | None = None,
) -> list[T]:
    """``order`` with its best pair among the first ``params.window`` moved to the top (see the module).

    Args:
        order: The walk's order, best first (distinct items).
        entities_of: A passage's entities (graph indices) → how many of its relations each is in.
        query_entities: The query's entity seeds (empty: ``order`` unchanged).
        params: The window and the weights.
        dense_of: A passage's similarity to the query above the dense floor (:func:`dense_bonus`);
            None: 0 for every passage (the ``dense`` term is off).

    Returns:
        A permutation of ``order`` that differs at most in its first ``params.window`` places.
    """
    query = set(int(e) for e in query_entities)
    top = list(order[: params.window])
    if not query or len(top) < 3:
        return list(order)
    ents = [entities_of(p) for p in top]
    bonus = [dense_of(p) if dense_of is not None and params.dense else 0.0 for p in top]
    best, pick = None, (0, 1)
    for i in range(1 if params.keep_first else len(top)):
        for j in range(i + 1, len(top)):
            s = pair_score((i, j), (ents[i], ents[j]), query, params, (bonus[i], bonus[j]))
            if best is None or s > best + 1e-9:
                best, pick = s, (i, j)
    first = [top[pick[0]], top[pick[1]]]
    return first + [p for p in order if p not in (first[0], first[1])]


def dense_bonus(ranked: Sequence[tuple[T, float]], depth: int) -> dict[T, float]:
    """Each of the dense top ``depth``'s similarity above the lowest of them (the last, best first), at most 1.

    ``ranked``: (item, similarity) pairs, best first. An item outside the top is not in the result (0).
    A repeated item counts at its first (best) place; a pair whose similarity is not a finite number is
    skipped. The cap keeps the term in its fitted range: the weights were fitted on cosine similarities
    (MiniLM), whose top-5 spread is far below 1; an inner-product store over vectors that are not
    normalised can have larger gaps, and each then counts as 1 (``dense`` rank positions at most).
    """
    top: dict[T, float] = {}
    for item, score in ranked:
        if len(top) >= depth:
            break
        if item not in top and math.isfinite(score):
            top[item] = float(score)
    if not top:
        return {}
    floor = min(top.values())
    return {item: min(score - floor, 1.0) for item, score in top.items()}


def graph_pair_order(
    graph: GraphIndex,
    order: Sequence[int],
    query_entities: Iterable[int],
    params: PairParams,
    dense: Mapping[int, float] | None = None,
) -> list[int]:
    """:func:`pair_order` of graph passage indices, a passage's entities read from ``graph``.

    ``dense``: graph passage index → similarity above the dense floor (:func:`dense_bonus`; absent: 0).
    """

    def entities_of(p: int) -> dict[int, int]:
        ents, counts = graph.passage_entities(int(p))
        return dict(zip(ents.tolist(), counts.tolist()))

    bonus = dict(dense or {})
    return pair_order([int(p) for p in order], entities_of, query_entities, params, lambda p: bonus.get(p, 0.0))
