"""Paths between query entities: bidirectional search, shortest paths, diversity pruning.

The method of Elastic's "Navigating graphs for RAG" (the second seed), on the GraphIndex:

1. **Direct relation first.** If the two entities share a relation, that is the answer
   (looked up in the source's full neighbour row, so no cap can hide it).
2. **Bidirectional search.** Otherwise expand one side at a time, at most ``max_hops``
   per side and ``max_neighbors`` neighbours per node, until the frontiers meet (a node
   beyond the cap that the other side has already reached still counts: the cap limits
   fan-out, it does not hide a meeting). The side
   expanded next is the one whose frontier has fewer neighbour entries to read (the
   article alternates; this visits fewer nodes and finds the same shortest paths).
   Neighbours come from the *aggregated relation index* (:func:`aggregated_index`: one
   entry per connected entity pair with its relation count, so a hub's row lists
   distinct neighbours instead of every relation). A capped node keeps the neighbours it
   shares the most relations with, then the ones with fewer neighbours of their own
   (specific before hub-to-hub). At most ``max_frontier`` new nodes join per step (the
   article's 10,000 results per query).
3. **Shortest paths only.** The search stops at the first level where the frontiers
   meet; every shortest path through the meeting nodes is kept (listing at most
   ``max_enumerated``).
4. **Diversity pruning** (:func:`prune_paths`). If more than ``limit`` paths remain they
   are picked greedily: each pick is the path adding the most entities not yet covered;
   ties go to the higher ``path_score`` (the retriever: similarity to the query), then
   to the earlier path. The article reduces 18 paths to 5 this way.

Everything here is numpy and integer indices; relation texts, similarity scores and
passages are added by :class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever`.

Example:
    >>> from langchain_graphrag_milvus.graph import GraphIndex
    >>> g = GraphIndex.from_relations(relation_keys=[1, 2, 3], subject_keys=[10, 20, 30],
    ...     object_keys=[20, 30, 40], passage_ids=[["p1"], ["p2"], ["p3"]])
    >>> a, d = g.entities.lookup([10, 40]).tolist()
    >>> result = find_paths(g, a, d)
    >>> [g.entities.keys[p].tolist() for p in result.paths], result.length
    ([[10, 20, 30, 40]], 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.aggregated import AggregatedIndex, aggregated_index
from langchain_graphrag_milvus.graph.csr import gather_rows

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph.index import GraphIndex

__all__ = ["AggregatedIndex", "PathResult", "aggregated_index", "find_paths", "edge_relations", "prune_paths"]

I32 = npt.NDArray[np.int32]
_UNSEEN = np.int16(-1)


@dataclass
class PathResult:
    """Shortest paths between two entities, or why there are none.

    Attributes:
        source: Entity index the paths start from.
        target: Entity index they end at.
        paths: Entity index lists from ``source`` to ``target``, all of ``length`` relations.
        length: Relations on each path (``None``: no path).
        visited: Entities reached by the search (both sides, including the two ends).
        truncated: A cap was hit (``max_neighbors``, ``max_frontier`` or ``max_enumerated``):
            with larger caps there may be more, or shorter, paths.
        reason: Why there is no path (``None`` when there is one).
    """

    source: int
    target: int
    paths: list[list[int]] = field(default_factory=list)
    length: int | None = None
    visited: int = 0
    truncated: bool = False
    reason: str | None = None


class _Side:
    """One side of the bidirectional search: distances, frontier and the edges of each level."""

    def __init__(self, n: int, root: int) -> None:
        self.dist = np.full(n, _UNSEEN, np.int16)
        self.dist[root] = 0
        self.frontier: I32 = np.array([root], np.int32)
        self.level = 0
        self.edges: list[tuple[I32, I32]] = []  # level l: edges (node at l, node at l + 1)

    def cost(self, agg: AggregatedIndex, max_neighbors: int | None) -> int:
        deg = agg.degree[self.frontier]
        return int(np.minimum(deg, max_neighbors).sum() if max_neighbors is not None else deg.sum())

    def expand(
        self, agg: AggregatedIndex, max_neighbors: int | None, max_frontier: int | None, other: npt.NDArray[np.int16]
    ) -> tuple[I32, bool]:
        """One BFS level; returns the new frontier and whether a cap cut something.

        The caps limit fan-out, not sight: beyond a capped row's first ``max_neighbors``
        entries, the nodes the other side has reached (``other``) are still taken, and
        meeting nodes go first in the new frontier, so neither cap hides a meeting at
        this level. (Reading the rest of a capped row for meetings is a vector lookup per
        entry; only the nodes taken grow the search.)
        """
        owner, nbr = gather_rows(agg.neighbors, self.frontier, max_neighbors)
        truncated = False
        if max_neighbors is not None:
            big = np.flatnonzero(agg.degree[self.frontier] > max_neighbors).astype(np.int32)
            if big.size:
                truncated = True
                starts = agg.neighbors.indptr[self.frontier[big].astype(np.int64)] + max_neighbors
                lens = agg.degree[self.frontier[big]] - max_neighbors
                pos = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens - starts, lens)
                rest = agg.neighbors.indices[pos]
                seen = other[rest] != _UNSEEN
                owner = np.concatenate([np.repeat(big, lens)[seen], owner])
                nbr = np.concatenate([rest[seen], nbr])
        unseen = nbr[self.dist[nbr] == _UNSEEN]
        _, first = np.unique(unseen, return_index=True)
        fresh = unseen[np.sort(first)]  # first-seen order: the best-ranked neighbours first
        meets = other[fresh] != _UNSEEN
        fresh = np.concatenate([fresh[meets], fresh[~meets]])  # meetings first: no cap drops them
        if max_frontier is not None and fresh.size > max_frontier:
            fresh, truncated = fresh[:max_frontier], True
        nxt = np.int16(self.level + 1)
        self.dist[fresh] = nxt
        into = self.dist[nbr] == nxt  # every parent of a new node: all shortest paths survive
        self.edges.append((self.frontier[owner[into]], nbr[into]))
        self.frontier = fresh.astype(np.int32)
        self.level += 1
        return self.frontier, truncated

    def parents_towards(self, meet: I32) -> dict[int, list[int]]:
        """Parent lists of the nodes on shortest paths from the root to the ``meet`` nodes."""
        parents: dict[int, list[int]] = {}
        levels = self.dist[meet]
        wanted: I32 = np.empty(0, np.int32)
        for level in range(int(levels.max()) - 1, -1, -1):
            src, dst = self.edges[level]
            wanted = np.union1d(wanted, meet[levels == level + 1])
            on = np.isin(dst, wanted)
            for s, d in zip(src[on].tolist(), dst[on].tolist()):
                parents.setdefault(d, []).append(s)
            wanted = np.unique(src[on])
        return parents


def _chains(node: int, parents: dict[int, list[int]], limit: int) -> tuple[list[list[int]], bool]:
    """Parent chains from ``node`` back to the root, depth first (at most ``limit``).

    Returns the chains and whether some were left out.
    """
    chains: list[list[int]] = []
    stack: list[list[int]] = [[node]]
    while stack:
        chain = stack.pop()
        ups = parents.get(chain[-1])
        if ups:
            stack.extend([*chain, up] for up in reversed(ups))
        elif len(chains) == limit:
            return chains, True
        else:
            chains.append(chain)
    return chains, False


def find_paths(
    graph: GraphIndex,
    source: int,
    target: int,
    *,
    max_hops: int = 3,
    max_neighbors: int | None = 100,
    max_frontier: int | None = 10_000,
    max_enumerated: int = 1000,
    aggregated: AggregatedIndex | None = None,
) -> PathResult:
    """All shortest paths from ``source`` to ``target`` (entity indices) within the caps.

    Args:
        graph: The graph.
        source: Entity index.
        target: Entity index.
        max_hops: Most hops explored from *each* side, so paths have at most
            ``2 * max_hops`` relations.
        max_neighbors: Neighbours taken per node per level (``None``: all); the rest of
            a capped row is only checked for nodes the other side has reached.
        max_frontier: New nodes per level and side (``None``: all); meeting nodes first.
        max_enumerated: Most shortest paths listed.
        aggregated: The neighbour index to search (default: :func:`aggregated_index` of
            the whole graph; pass a masked one to search part of the graph).

    Returns:
        The paths, or none and a ``reason``.

    Raises:
        IndexError: An entity index is out of range.
        ValueError: A cap is not positive.
    """
    _check_path_args(graph.n_entities, source, target, max_hops, max_neighbors, max_frontier, max_enumerated)
    agg = aggregated if aggregated is not None else aggregated_index(graph)
    result = PathResult(source, target, visited=1 if source == target else 2)
    if _settled_without_search(graph, agg, result):
        return result
    sides = (_Side(graph.n_entities, source), _Side(graph.n_entities, target))
    meet = _search(sides, agg, max_hops, max_neighbors, max_frontier, result)
    if meet.size == 0:
        result.reason = f"no path within {max_hops} hop{'s' if max_hops > 1 else ''} per side" + (
            " (a cap was reached: larger max_neighbors or max_frontier might find one)" if result.truncated else ""
        )
        return result
    _enumerate_paths(sides, meet, max_enumerated, result)
    return result


def _check_path_args(
    n: int,
    source: int,
    target: int,
    max_hops: int,
    max_neighbors: int | None,
    max_frontier: int | None,
    max_enumerated: int,
) -> None:
    """Raise :class:`IndexError` for an entity out of range, :class:`ValueError` for a bad cap."""
    for node in (source, target):
        if not 0 <= node < n:
            raise IndexError(f"entity index {node} out of range 0..{n - 1}")
    for name, value in (
        ("max_hops", max_hops),
        ("max_neighbors", max_neighbors),
        ("max_frontier", max_frontier),
        ("max_enumerated", max_enumerated),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if max_hops > 1000:
        raise ValueError(f"max_hops must be at most 1000, got {max_hops}")


def _settled_without_search(graph: GraphIndex, agg: AggregatedIndex, result: PathResult) -> bool:
    """Fill ``result`` and return True when no search is needed.

    That is: the two ends are the same, one end has no neighbours, or a relation links
    them directly (looked up in the full row, so no cap can hide it).
    """
    source, target = result.source, result.target
    if source == target:
        result.reason = "the two entities are the same"
        return True
    for node in (source, target):
        if agg.degree[node] == 0:
            result.reason = f"entity {node} has no relations to other entities" + (
                " in the searched part of the graph" if agg.n_relations < graph.n_relations else ""
            )
            return True
    if np.any(agg.neighbors.row(source) == target):  # direct relation: no cap can hide it
        result.paths, result.length = [[source, target]], 1
        return True
    return False


def _search(
    sides: tuple[_Side, _Side],
    agg: AggregatedIndex,
    max_hops: int,
    max_neighbors: int | None,
    max_frontier: int | None,
    result: PathResult,
) -> I32:
    """Expand the cheaper open side one level at a time until the frontiers meet.

    Returns the meeting nodes (empty: no meeting within ``max_hops`` per side); updates
    ``result.truncated`` and ``result.visited``.
    """
    meet: I32 = np.empty(0, np.int32)
    while True:
        open_sides = [s for s in (0, 1) if sides[s].level < max_hops and sides[s].frontier.size]
        if not open_sides:
            break
        i = min(open_sides, key=lambda s: (sides[s].cost(agg, max_neighbors), s))
        fresh, cut = sides[i].expand(agg, max_neighbors, max_frontier, sides[1 - i].dist)
        result.truncated |= cut
        result.visited += int(fresh.size)
        other = sides[1 - i].dist
        meet = fresh[other[fresh] != _UNSEEN]
        if meet.size:
            break
    return meet


def _enumerate_paths(sides: tuple[_Side, _Side], meet: I32, max_enumerated: int, result: PathResult) -> None:
    """Set ``result.length`` and list the shortest paths through ``meet`` (at most ``max_enumerated``)."""
    # without caps every meeting node lies on a shortest path (both sides were complete to
    # their levels when they met); with caps, keep the meetings of least total length
    total = sides[0].dist[meet].astype(np.int64) + sides[1].dist[meet]
    meet = meet[total == total.min()]
    result.length = int(total.min())
    up = [sides[s].parents_towards(meet) for s in (0, 1)]
    for m in meet.tolist():
        lefts, cut_left = _chains(m, up[0], max_enumerated)
        rights, cut_right = _chains(m, up[1], max_enumerated)
        result.truncated |= cut_left or cut_right
        for left in lefts:
            for right in rights:
                if len(result.paths) >= max_enumerated:
                    result.truncated = True
                    return
                result.paths.append(left[::-1] + right[1:])


def edge_relations(graph: GraphIndex, a: int, b: int, relation_mask: npt.NDArray[np.bool_] | None = None) -> list[int]:
    """Relation indices linking entities ``a`` and ``b`` in either direction.

    Example:
        >>> from langchain_graphrag_milvus.graph import GraphIndex
        >>> g = GraphIndex.from_relations(relation_keys=[1, 2, 3], subject_keys=[10, 20, 10],
        ...     object_keys=[20, 10, 30], passage_ids=[["p"], ["p"], ["p"]])
        >>> edge_relations(g, *g.entities.lookup([10, 20]).tolist())
        [0, 1]
    """
    rows = graph.ent_rel.row(a)
    other = np.where(graph.rel_subject[rows] == a, graph.rel_object[rows], graph.rel_subject[rows])
    found = rows[other == b]
    if relation_mask is not None:
        found = found[relation_mask[found]]
    return sorted(int(r) for r in found.tolist())


def prune_paths(
    paths: Sequence[Sequence[int]], limit: int, path_score: Callable[[Sequence[int]], float] | None = None
) -> list[list[int]]:
    """At most ``limit`` paths covering as many distinct entities as possible.

    Greedy: each pick adds the most entities not yet covered; ties go to the higher
    ``path_score``, then to the earlier path. Picks are returned in the order picked;
    every path is kept if there are at most ``limit``.

    Example:
        >>> prune_paths([[0, 1, 9], [0, 2, 9], [0, 1, 9], [0, 3, 9]], 2)
        [[0, 1, 9], [0, 2, 9]]
    """
    if limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    if len(paths) <= limit:
        return [list(p) for p in paths]
    scores = [path_score(p) if path_score else 0.0 for p in paths]
    covered: set[int] = set()
    chosen: list[int] = []
    remaining = list(range(len(paths)))
    while remaining and len(chosen) < limit:
        best = max(remaining, key=lambda i: (len(set(paths[i]) - covered), scores[i], -i))
        chosen.append(best)
        covered |= set(paths[best])
        remaining.remove(best)
    return [list(paths[i]) for i in chosen]
