"""Keep what dense search already found: a protected share of the passage-similarity top hits.

The graph's ranking reaches passages the query's wording does not, but it can push out a
passage that plain vector search ranked near the top: in every held-out loss against naive
search (issue 26) the gold passage the graph dropped was in dense search's own top 5, ranked
6th–20th by the walk. :func:`keep_dense` merges the two orders so that this cannot happen to
the dense top ``keep`` passages, and changes nothing else:

* the dense passage of rank ``r`` (1-based, ``r <= keep``) is placed at position
  ``r + slack`` at the latest (earlier if the graph ranks it higher: then it stays where the
  graph put it);
* every other position holds the graph's next passage, in the graph's order.

So the graph keeps its first ``slack`` positions whatever dense search says, and the result
is the same prefix for every ``k >= keep + slack`` (Recall@2 of a top-5 list is Recall@2 of a
top-2 list). For a smaller ``k`` the deadlines are pulled in just enough for all the protected
passages to fit (``min(r + slack, k - (keep - r))``), so the top ``k`` always holds the dense
top ``min(keep, k)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

__all__ = ["keep_dense"]

T = TypeVar("T", bound=Hashable)


def keep_dense(graph: Sequence[T], dense: Sequence[T], *, k: int, keep: int, slack: int) -> list[T]:
    """The graph order with the dense top ``keep`` guaranteed a place in the top ``k``.

    Args:
        graph: The graph's order, best first (duplicates: the first one counts).
        dense: The passage-similarity order, best first.
        k: Positions filled.
        keep: Dense top hits protected (0: the graph order, cut at ``k``).
        slack: Positions the graph may put ahead of each protected passage's dense rank.

    Returns:
        At most ``k`` distinct items: ``k`` when ``graph`` and the protected ones hold that
        many. The protected ones all appear; the others keep the graph's order. Fewer than
        ``k`` when both run out (the caller fills from dense search as before).
    """
    if k <= 0:
        return []
    protected = list(dict.fromkeys(dense))[: max(0, min(keep, k))]
    m = len(protected)
    deadline = [min(r + slack, k - (m - r)) for r in range(1, m + 1)]
    order = list(dict.fromkeys(graph))
    out: list[T] = []
    placed: set[T] = set()
    gi = pi = 0
    while len(out) < k:
        while pi < m and protected[pi] in placed:
            pi += 1
        while gi < len(order) and order[gi] in placed:
            gi += 1
        if pi < m and (deadline[pi] <= len(out) + 1 or gi >= len(order)):
            item = protected[pi]
        elif gi < len(order):
            item = order[gi]
        else:
            break
        out.append(item)
        placed.add(item)
    return out
