"""Order the top of the walk's list as a pair: the two first passages are chosen together.

A multi-hop question needs two passages: one naming the question's entity and the bridge
(an entity the question never mentions), and one about the bridge. The chained walk
(:mod:`.walk_ranking`) picks the best passage and then the best continuation of it; when the
first pick is off, its continuation is too. :func:`pair_order` looks at the first ``window``
passages of the walk's order and moves to the top the pair ``(a, b)`` that maximises

    bridge · [a and b share an entity the query does not name]
    + cover · (share of the query's entities that a or b mentions)
    + about · (number, or share, of the query's entities that a or b is about)
    − (rank of a + rank of b)                       (ranks 0-based in the walk's order)

so ``bridge`` and ``cover`` are in units of rank positions: a pair further down replaces the
walk's first two only when its evidence outweighs how much further down it is. A tie keeps
the walk's pair (the earliest). The pair keeps its relative order; every other passage keeps
its place in the walk's order behind it. Nothing outside the first ``window`` passages moves,
so for ``window <= k`` the top ``k`` holds the same passages (Recall@k for k >= window is
unchanged); the dense top hits' guarantee (:mod:`.keep_dense`) is applied afterwards, as before.

A query with no entity seed has no coverage to measure and its bridges are every shared
entity; its order is left as the walk gave it.

Pure: the graph enters only through ``entities_of`` (a passage's entity indices and how many of
its relations each is in; :func:`graph_pair_order` reads them from the graph). The retriever
applies it to the chained walk's order (``ranking="ppr"``, ``ppr_pair_step=True`` by default),
before the merge with the dense order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex

__all__ = ["PairParams", "graph_pair_order", "main_entities", "pair_order", "pair_score"]

T = TypeVar("T")


@dataclass(frozen=True)
class PairParams:
    """The pair step's constants: their one home (the defaults: the retriever's, chosen by cross-validation).

    The defaults are what 3 of the 5 folds chose (``benchmarks/cv_pair.py --keep-first-only``, 5-fold
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
            share of the query's entities.
    """

    window: int = 4
    bridge: float = 2.5
    cover: float = 3.0
    bridge_mode: str = "main"
    keep_first: bool = True
    about: float = 0.0
    about_mode: str = "count"


def main_entities(counts: Mapping[int, int]) -> set[int]:
    """A passage's main entities: those in the most of its relations (what the passage is about)."""
    if not counts:
        return set()
    top = max(counts.values())
    return {e for e, c in counts.items() if c == top}


def pair_score(
    ranks: tuple[int, int], entities: tuple[Mapping[int, int], Mapping[int, int]], query: set[int], params: PairParams
) -> float:
    """The score of a pair at 0-based ``ranks`` with these ``entities``, for the query's entity set ``query``.

    ``entities``: each passage's entities → how many of its relations each one is in.
    """
    ca, cb = entities
    ea, eb = set(ca), set(cb)
    shared = (ea & eb) - query
    mains = main_entities(ca) | main_entities(cb) if params.bridge_mode == "main" or params.about else set()
    if params.bridge_mode == "main":
        shared &= mains
    bridged = bool(shared)
    covered = len(query & (ea | eb)) / len(query) if query else 0.0
    score = params.bridge * bridged + params.cover * covered - (ranks[0] + ranks[1])
    if params.about and query:  # 0: the term is off (the score is exactly the one without it)
        about = len(query & mains)
        score += params.about * (about / len(query) if params.about_mode == "share" else about)
    return score


def pair_order(
    order: Sequence[T], entities_of: Callable[[T], Mapping[int, int]], query_entities: Iterable[int], params: PairParams
) -> list[T]:
    """``order`` with its best pair among the first ``params.window`` moved to the top (see the module).

    Args:
        order: The walk's order, best first (distinct items).
        entities_of: A passage's entities (graph indices) → how many of its relations each is in.
        query_entities: The query's entity seeds (empty: ``order`` unchanged).
        params: The window and the weights.

    Returns:
        A permutation of ``order`` that differs at most in its first ``params.window`` places.
    """
    query = set(int(e) for e in query_entities)
    top = list(order[: params.window])
    if not query or len(top) < 3:
        return list(order)
    ents = [entities_of(p) for p in top]
    best, pick = None, (0, 1)
    for i in range(1 if params.keep_first else len(top)):
        for j in range(i + 1, len(top)):
            s = pair_score((i, j), (ents[i], ents[j]), query, params)
            if best is None or s > best + 1e-9:
                best, pick = s, (i, j)
    first = [top[pick[0]], top[pick[1]]]
    return first + [p for p in order if p not in (first[0], first[1])]


def graph_pair_order(
    graph: GraphIndex, order: Sequence[int], query_entities: Iterable[int], params: PairParams
) -> list[int]:
    """:func:`pair_order` of graph passage indices, a passage's entities read from ``graph``."""

    def entities_of(p: int) -> dict[int, int]:
        ents, counts = graph.passage_entities(int(p))
        return dict(zip(ents.tolist(), counts.tolist()))

    return pair_order([int(p) for p in order], entities_of, query_entities, params)
