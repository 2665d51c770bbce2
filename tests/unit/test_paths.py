"""Path search on hand-built graphs: hop limits, shortest paths only, pruning, caps, reasons."""

from __future__ import annotations

import itertools
from collections import deque

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex, aggregated_index, edge_relations, find_paths, prune_paths


def build(edges: list[tuple[str, str]]) -> tuple[GraphIndex, dict[str, int]]:
    """A graph with one relation per edge; entity keys are the names' positions."""
    names: dict[str, int] = {}
    for a, b in edges:
        names.setdefault(a, len(names) + 1)
        names.setdefault(b, len(names) + 1)
    g = GraphIndex.from_relations(
        relation_keys=np.arange(1, len(edges) + 1),
        subject_keys=[names[a] for a, _ in edges],
        object_keys=[names[b] for _, b in edges],
        passage_ids=[[f"p{i}"] for i in range(len(edges))],
    )
    index = {name: int(g.entities.lookup([key])[0]) for name, key in names.items()}
    return g, index


def named(g: GraphIndex, index: dict[str, int], paths: list[list[int]]) -> list[list[str]]:
    back = {v: k for k, v in index.items()}
    return [[back[i] for i in p] for p in paths]


def chain(length: int) -> list[tuple[str, str]]:
    return [(f"n{i}", f"n{i + 1}") for i in range(length)]


def brute_force_shortest(
    n: int, edges: list[tuple[int, int]], s: int, t: int
) -> tuple[int | None, set[tuple[int, ...]]]:
    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in edges:
        if a != b:
            adj[a].add(b)
            adj[b].add(a)
    dist = {s: 0}
    queue = deque([s])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    if t not in dist:
        return None, set()
    paths: set[tuple[int, ...]] = set()

    def back(node: int, suffix: tuple[int, ...]) -> None:
        if node == s:
            paths.add((s, *suffix))
            return
        for u in adj[node]:
            if dist.get(u) == dist[node] - 1:
                back(u, (node, *suffix))

    back(t, ())
    return dist[t], paths


# ------------------------------------------------------------------ hop limits
@pytest.mark.parametrize("max_hops", [1, 2, 3])
def test_path_found_at_exactly_the_hop_limit(max_hops: int) -> None:
    g, ix = build(chain(2 * max_hops))
    result = find_paths(g, ix["n0"], ix[f"n{2 * max_hops}"], max_hops=max_hops)
    assert result.reason is None
    assert result.length == 2 * max_hops
    assert named(g, ix, result.paths) == [[f"n{i}" for i in range(2 * max_hops + 1)]]


@pytest.mark.parametrize("max_hops", [1, 2, 3])
def test_no_path_one_hop_beyond_the_limit(max_hops: int) -> None:
    g, ix = build(chain(2 * max_hops + 1))
    result = find_paths(g, ix["n0"], ix[f"n{2 * max_hops + 1}"], max_hops=max_hops)
    assert result.paths == [] and result.length is None
    assert result.reason == f"no path within {max_hops} hop{'s' if max_hops > 1 else ''} per side"
    assert not result.truncated
    # and with one more hop allowed it is there
    assert find_paths(g, ix["n0"], ix[f"n{2 * max_hops + 1}"], max_hops=max_hops + 1).length == 2 * max_hops + 1


def test_odd_length_path_within_the_limit() -> None:
    g, ix = build(chain(5))
    result = find_paths(g, ix["n0"], ix["n5"], max_hops=3)
    assert result.length == 5 and len(result.paths) == 1


# ------------------------------------------------------------------ shortest paths only
def test_only_shortest_paths_are_kept() -> None:
    edges = [
        ("A", "X"),
        ("X", "B"),  # length 2
        ("A", "W"),
        ("B", "W"),  # length 2 (relation direction does not matter)
        ("A", "Y"),
        ("Y", "Z"),
        ("Z", "B"),  # length 3: dropped
        ("X", "Q"),  # a dead end
    ]
    g, ix = build(edges)
    result = find_paths(g, ix["A"], ix["B"])
    assert result.length == 2
    assert sorted(named(g, ix, result.paths)) == [["A", "W", "B"], ["A", "X", "B"]]


def test_direct_relation_first_even_when_a_cap_would_hide_it() -> None:
    # A has 300 neighbours; B is the least-ranked one, behind the 100-neighbour cap
    edges = [("A", f"h{i}") for i in range(299)]
    edges += [(f"h{i}", "hub") for i in range(299)]  # make the others look better-connected
    edges += [("A", "B"), ("B", "h0")]
    g, ix = build(edges)
    result = find_paths(g, ix["A"], ix["B"], max_neighbors=5)
    assert result.length == 1
    assert named(g, ix, result.paths) == [["A", "B"]]


@pytest.mark.parametrize("seed", range(25))
def test_equals_brute_force_all_shortest_paths_without_caps(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 40))
    m = int(rng.integers(n // 2, 2 * n))
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, n, (m, 2))]
    edges = [(f"e{a}", f"e{b}") for a, b in pairs]
    g, ix = build(edges)
    present = sorted({int(x[1:]) for e in edges for x in e})
    s, t = (int(x) for x in rng.choice(present, 2, replace=False))
    length, expected = brute_force_shortest(n, pairs, s, t)
    result = find_paths(g, ix[f"e{s}"], ix[f"e{t}"], max_hops=3, max_neighbors=None, max_frontier=None)
    got = {tuple(int(p[1:]) for p in path) for path in named(g, ix, result.paths)}
    if length is None or length > 6 or length == 0:
        assert got == set() and result.reason
    else:
        assert result.length == length
        assert got == expected
        assert len(result.paths) == len(got)  # no duplicates
        assert not result.truncated


# ------------------------------------------------------------------ caps
def test_neighbour_cap_is_respected_and_reported() -> None:
    # the only route from A to B leaves A through h299, the last of A's 300 neighbours
    edges = [("A", f"h{i}") for i in range(300)] + [("h299", "m"), ("m", "k"), ("k", "B")]
    g, ix = build(edges)
    full = find_paths(g, ix["A"], ix["B"], max_hops=2, max_neighbors=None)
    assert named(g, ix, full.paths) == [["A", "h299", "m", "k", "B"]] and not full.truncated
    cut = find_paths(g, ix["A"], ix["B"], max_hops=2, max_neighbors=100)
    assert cut.paths == [] and cut.truncated
    assert cut.reason == (
        "no path within 2 hops per side (a cap was reached: larger max_neighbors or max_frontier might find one)"
    )
    # A's side read 100 of its neighbours (h0..h99, each with no further neighbour); B's side k, m
    assert cut.visited == 2 + 100 + 2
    # the cap limits fan-out, not sight: once B's side has reached h299 (3 hops), A's
    # capped row still meets it
    met = find_paths(g, ix["A"], ix["B"], max_hops=3, max_neighbors=100)
    assert named(g, ix, met.paths) == [["A", "h299", "m", "k", "B"]] and met.truncated
    assert met.visited == 2 + 3 + 100 + 1  # B's side: k, m, h299; A's side: 100 capped + h299


def test_frontier_cap_bounds_the_nodes_visited() -> None:
    edges = [("A", f"h{i}") for i in range(500)] + [(f"h{i}", f"g{i}") for i in range(500)]
    edges += [("B", "z1"), ("z1", "z2")]
    g, ix = build(edges)
    result = find_paths(g, ix["A"], ix["B"], max_hops=3, max_neighbors=None, max_frontier=50)
    assert result.paths == [] and result.truncated
    assert result.visited <= 2 + 3 * 50 + 2  # A's side: 50 per level; B's side: z1, z2
    full = find_paths(g, ix["A"], ix["B"], max_hops=3, max_neighbors=None, max_frontier=None)
    assert full.visited == 2 + 1000 + 2 and not full.truncated


def test_frontier_cap_keeps_meeting_nodes_first() -> None:
    # S's neighbours rank A, B before C (more specific), but only C meets T's side
    g, ix = build([("S", "A"), ("S", "B"), ("S", "C"), ("T", "C"), ("C", "x"), ("C", "y")])
    result = find_paths(g, ix["S"], ix["T"], max_hops=1, max_neighbors=None, max_frontier=1)
    assert named(g, ix, result.paths) == [["S", "C", "T"]]


def test_enumeration_cap_inside_one_side_is_reported() -> None:
    edges = [("S", "a"), ("S", "b"), ("a", "M"), ("b", "M"), ("M", "T")] + [("T", f"t{i}") for i in range(5)]
    g, ix = build(edges)
    full = find_paths(g, ix["S"], ix["T"])
    assert len(full.paths) == 2 and not full.truncated
    capped = find_paths(g, ix["S"], ix["T"], max_enumerated=1)
    assert len(capped.paths) == 1 and capped.truncated


def test_enumeration_cap() -> None:
    edges = [("A", f"m{i}") for i in range(30)] + [(f"m{i}", "B") for i in range(30)]
    g, ix = build(edges)
    assert len(find_paths(g, ix["A"], ix["B"]).paths) == 30
    capped = find_paths(g, ix["A"], ix["B"], max_enumerated=7)
    assert len(capped.paths) == 7 and capped.truncated


def test_invalid_arguments() -> None:
    g, ix = build(chain(2))
    with pytest.raises(IndexError):
        find_paths(g, 0, 99)
    with pytest.raises(ValueError, match="max_hops"):
        find_paths(g, 0, 1, max_hops=0)
    with pytest.raises(ValueError, match="max_neighbors"):
        find_paths(g, 0, 1, max_neighbors=-1)
    with pytest.raises(ValueError, match="limit"):
        prune_paths([[0, 1]], 0)


# ------------------------------------------------------------------ no path: reasons
def test_no_path_reasons() -> None:
    g, ix = build([("A", "B"), ("C", "D")])
    disconnected = find_paths(g, ix["A"], ix["C"])
    assert disconnected.paths == [] and disconnected.reason == "no path within 3 hops per side"
    same = find_paths(g, ix["A"], ix["A"])
    assert same.paths == [] and same.reason == "the two entities are the same"
    # only a self-relation: the entity connects nothing
    g2, ix2 = build([("A", "A"), ("B", "C")])
    assert find_paths(g2, ix2["A"], ix2["B"]).reason == f"entity {ix2['A']} has no relations to other entities"


def test_masked_search_ignores_relations_outside_the_mask() -> None:
    g, ix = build([("A", "X"), ("X", "B"), ("A", "Y"), ("Y", "Z"), ("Z", "B")])
    mask = np.ones(g.n_relations, bool)
    mask[edge_relations(g, ix["X"], ix["B"])] = False  # the short route is another tenant's
    agg = aggregated_index(g, mask)
    result = find_paths(g, ix["A"], ix["B"], aggregated=agg)
    assert named(g, ix, result.paths) == [["A", "Y", "Z", "B"]]
    mask[:] = False
    mask[edge_relations(g, ix["A"], ix["X"])] = True
    none = find_paths(g, ix["A"], ix["B"], aggregated=aggregated_index(g, mask))
    assert none.reason == f"entity {ix['B']} has no relations to other entities in the searched part of the graph"


# ------------------------------------------------------------------ aggregated index
def test_aggregated_index_counts_pairs_and_orders_rows() -> None:
    edges = [("A", "B"), ("B", "A"), ("A", "B"), ("A", "C"), ("C", "D"), ("C", "E"), ("A", "F"), ("A", "A")]
    g, ix = build(edges)
    agg = aggregated_index(g)
    assert agg.n_pairs == 5  # AB, AC, CD, CE, AF (the self-relation connects nothing)
    assert agg.n_relations == g.n_relations
    row = agg.neighbors.row(ix["A"]).tolist()
    counts = agg.counts[agg.neighbors.indptr[ix["A"]] : agg.neighbors.indptr[ix["A"] + 1]].tolist()
    # B shares 3 relations with A; F (1 neighbour) is more specific than C (3 neighbours)
    assert row == [ix["B"], ix["F"], ix["C"]]
    assert counts == [3, 1, 1]
    assert aggregated_index(g) is agg  # cached on the immutable graph


def test_aggregated_index_is_smaller_when_pairs_repeat() -> None:
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, 50, (2000, 2))
    g, _ = build([(f"e{a}", f"e{b}") for a, b in pairs])
    agg = aggregated_index(g)
    assert agg.n_pairs < g.n_relations / 1.5
    assert int(agg.counts.sum()) == 2 * int(np.count_nonzero(pairs[:, 0] != pairs[:, 1]))


def test_edge_relations_both_directions_and_mask() -> None:
    g, ix = build([("A", "B"), ("B", "A"), ("A", "C")])
    assert edge_relations(g, ix["A"], ix["B"]) == [0, 1]
    assert edge_relations(g, ix["B"], ix["A"]) == [0, 1]
    mask = np.array([False, True, True])
    assert edge_relations(g, ix["A"], ix["B"], mask) == [1]
    assert edge_relations(g, ix["B"], ix["C"]) == []


# ------------------------------------------------------------------ pruning
def diamond() -> tuple[GraphIndex, dict[str, int]]:
    """A – m0..m5 – n0..n2 – B, fully connected between layers: 18 shortest paths (the article's count)."""
    edges = [("A", f"m{i}") for i in range(6)]
    edges += [(f"m{i}", f"n{j}") for i in range(6) for j in range(3)]
    edges += [(f"n{j}", "B") for j in range(3)]
    return build(edges)


def test_pruning_keeps_entity_diversity() -> None:
    g, ix = diamond()
    result = find_paths(g, ix["A"], ix["B"])
    assert len(result.paths) == 18 and result.length == 3
    kept = prune_paths(result.paths, 5)
    assert len(kept) == 5 and len({tuple(p) for p in kept}) == 5
    covered = {e for p in kept for e in p}
    best = max(len({e for p in combo for e in p}) for combo in itertools.combinations(result.paths, 5))
    assert len(covered) == best == 10  # A, B, 5 of the m's and all 3 n's
    first_five = {e for p in result.paths[:5] for e in p}
    assert len(first_five) < len(covered)  # truncating instead of pruning loses entities


def test_pruning_breaks_ties_by_score_then_order() -> None:
    paths = [[0, 1, 9], [0, 2, 9], [0, 3, 9]]
    assert prune_paths(paths, 2) == [[0, 1, 9], [0, 2, 9]]
    score = {1: 0.1, 2: 0.5, 3: 0.9}
    assert prune_paths(paths, 2, lambda p: score[p[1]]) == [[0, 3, 9], [0, 2, 9]]
    # coverage beats score: a path with two new entities wins over a high-scoring repeat
    paths = [[0, 1, 2, 9], [0, 1, 3, 9], [0, 4, 5, 9]]
    assert prune_paths(paths, 2, lambda p: 1.0 if p[2] == 3 else 0.0) == [[0, 1, 3, 9], [0, 4, 5, 9]]
    assert prune_paths(paths, 5) == paths
