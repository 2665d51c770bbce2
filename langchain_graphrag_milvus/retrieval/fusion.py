"""Fuse the graph's order with the dense order: weighted reciprocal-rank fusion.

The walk ranking reaches passages the query's wording does not, but it can push a passage
that plain vector search ranked near the top down to 6th–20th place (issue 26). Instead of
protecting fixed dense positions (:mod:`.keep_dense`), :func:`fuse_orders` scores every
passage of the two lists' top ``depth`` by

    ``(1 - weight) / (c + rank_graph) + weight / (c + rank_dense)``

(ranks from 1; a passage missing from one list's top ``depth`` gets nothing from it) and
orders them by that score, ties going to the better graph rank, then the better dense
rank. ``weight`` is the dense order's share (0: the graph's order unchanged); a small
``c`` lets the top of each list dominate, a large one approaches a weighted mean of the
ranks. The graph's passages past its top ``depth`` follow in the graph's order.

Both lists are cut at ``depth`` before fusing, whatever ``k`` is, so the result is the same
prefix for every ``k``: the top 2 of a top-5 list are the top-2 list. The pipeline asks
Milvus for at least ``depth`` dense hits when the fusion is on.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

__all__ = ["FUSION_DEPTH", "fuse_orders"]

T = TypeVar("T", bound=Hashable)

#: How deep each list is read. In every loss against naive search the gold passage the walk
#: dropped was in dense search's top 5 and ranked 6th–20th by the walk (issue 26).
FUSION_DEPTH = 20


def fuse_orders(
    graph: Sequence[T], dense: Sequence[T], *, weight: float, c: float, depth: int = FUSION_DEPTH
) -> list[T]:
    """The graph and dense orders fused by weighted reciprocal rank.

    Args:
        graph: The graph's order, best first (duplicates: the first one counts).
        dense: The passage-similarity order, best first (duplicates: the first one counts).
        weight: The dense order's share, in [0, 1] (0: ``graph`` deduplicated, unchanged).
        c: Rank offset (>= 0): larger evens out the ranks' contributions.
        depth: Items of each list fused (the rest of ``graph`` follows in its order).

    Returns:
        The distinct items of ``graph`` and of ``dense[:depth]``, best first.

    Raises:
        ValueError: ``weight`` outside [0, 1], a negative ``c`` or a ``depth`` below 1.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight!r}")
    if not c >= 0.0:
        raise ValueError(f"c must be >= 0, got {c!r}")
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    order = list(dict.fromkeys(graph))
    if weight == 0.0:
        return order
    top_g = order[:depth]
    top_d = list(dict.fromkeys(dense))[:depth]
    g_rank = {x: r for r, x in enumerate(top_g, 1)}
    d_rank = {x: r for r, x in enumerate(top_d, 1)}
    missing = depth + len(top_g) + len(top_d) + 1  # a tie-break rank after every listed one

    def key(x: T) -> tuple[float, int, int]:
        gr, dr = g_rank.get(x), d_rank.get(x)
        score = (1.0 - weight) / (c + gr) if gr is not None else 0.0
        score += weight / (c + dr) if dr is not None else 0.0
        return -score, gr or missing, dr or missing

    fused = sorted(dict.fromkeys(top_g + top_d), key=key)
    seen = set(fused)
    return fused + [x for x in order[depth:] if x not in seen]
