"""GraphIndex: expansion equals the seed's matrix products with caps off; caps; persistence."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_graphrag_milvus import GraphIndex, UnknownIdError
from langchain_graphrag_milvus.graph.reference import SeedMatrices

from ..graph_checks import graph_signature


def random_graph(seed: int, n_entities: int = 40, n_relations: int = 120, n_passages: int = 30) -> GraphIndex:
    rng = np.random.default_rng(seed)
    subj = rng.integers(0, n_entities, n_relations)
    obj = rng.integers(0, n_entities, n_relations)
    obj[:3] = subj[:3]  # a few self-loops
    pids = [[f"p{int(x)}" for x in rng.integers(0, n_passages, rng.integers(1, 3))] for _ in range(n_relations)]
    return GraphIndex.from_relations(
        relation_keys=np.arange(1000, 1000 + n_relations),
        subject_keys=subj + 1,
        object_keys=obj + 1,
        passage_ids=pids,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("hops", [1, 2, 3])
def test_expansion_equals_seed_matrix_products_with_caps_off(seed: int, hops: int) -> None:
    g = random_graph(seed)
    ref = SeedMatrices.build(g, hops)
    rng = np.random.default_rng(seed + 10)
    for _ in range(10):
        ents = rng.choice(g.n_entities, size=rng.integers(0, 4), replace=False)
        rels = rng.choice(g.n_relations, size=rng.integers(0, 4), replace=False)
        got = g.expand(
            entity_seeds=ents, relation_seeds=rels, hops=hops, max_neighbors=None, max_frontier=None, max_relations=None
        )
        assert set(got.relations.tolist()) == ref.expand(ents, rels)
        assert not got.truncated


def test_hops_scores_and_order() -> None:
    # chain a -r1- b -r2- c -r3- d -r4- e
    g = GraphIndex.from_relations(
        relation_keys=[1, 2, 3, 4],
        subject_keys=[10, 20, 30, 40],
        object_keys=[20, 30, 40, 50],
        passage_ids=[["p1"], ["p2"], ["p3"], ["p4"]],
    )
    a = g.entities.lookup([10])
    for hops, expected in ((0, [1]), (1, [1, 2]), (2, [1, 2, 3]), (3, [1, 2, 3, 4])):
        e = g.expand(entity_seeds=a, entity_scores=[0.9], hops=hops, decay=0.5)
        assert g.relations.keys[e.relations].tolist() == expected
        assert e.hops.tolist() == list(range(hops + 1))
        assert np.allclose(e.scores, [0.9 * 0.5**h for h in range(hops + 1)])
    r = g.expand(relation_seeds=g.relations.lookup([2]), relation_scores=[0.7], hops=1)
    assert dict(zip(g.relations.keys[r.relations].tolist(), r.hops.tolist())) == {1: 1, 2: 0, 3: 1}
    both = g.expand(
        entity_seeds=a, entity_scores=[0.2], relation_seeds=g.relations.lookup([2]), relation_scores=[0.9], hops=0
    )
    assert g.relations.keys[both.relations].tolist() == [2, 1]  # best score first


def test_no_seeds_gives_empty_result() -> None:
    g = random_graph(0)
    e = g.expand(entity_seeds=[], relation_seeds=None, hops=2)
    assert e.relations.size == 0 and e.entities.size == 0


def test_unknown_ids_raise_a_clear_error() -> None:
    g = random_graph(0)
    with pytest.raises(UnknownIdError, match="not in the graph index"):
        g.entities.lookup([123456789])
    with pytest.raises(UnknownIdError, match="passage"):
        g.passages.lookup(["no-such-passage"])
    with pytest.raises(IndexError):
        g.expand(entity_seeds=[g.n_entities + 5])
    assert g.entities.find([123456789]).tolist() == [-1]


def hub_graph(n_leaves: int = 500) -> GraphIndex:
    # entity 1 is a hub connected to n leaves; leaf i also links to its own tail entity
    subj = [1] * n_leaves + list(range(100, 100 + n_leaves))
    obj = list(range(100, 100 + n_leaves)) + list(range(10_000, 10_000 + n_leaves))
    # leaves 100..109 get extra relations (higher degree), so the cap should prefer others
    for i in range(10):
        subj += [100 + i] * 3
        obj += [20_000 + 3 * i + j for j in range(3)]
    keys = list(range(1, len(subj) + 1))
    return GraphIndex.from_relations(
        relation_keys=keys, subject_keys=subj, object_keys=obj, passage_ids=[[f"p{k}"] for k in keys]
    )


def test_neighbour_cap_per_node_and_rule() -> None:
    g = hub_graph()
    hub = g.entities.lookup([1])
    e = g.expand(entity_seeds=hub, hops=0, max_neighbors=100)
    assert e.relations.size == 100 and e.truncated
    # rule: relations to the least-connected neighbours first -> none of the 10 busier leaves
    other = g.rel_object[e.relations]
    busy = set(g.entities.lookup(list(range(100, 110))).tolist())
    assert not busy & set(other.tolist())
    # per hop: at hop 2 every frontier entity contributes at most max_neighbors relations
    e2 = g.expand(entity_seeds=hub, hops=1, max_neighbors=2)
    assert (e2.hops == 0).sum() == 2
    assert (e2.hops == 1).sum() <= 2 * 2  # two leaves (and the hub again), each ≤ 2 relations
    uncapped = g.expand(entity_seeds=hub, hops=0, max_neighbors=None)
    assert uncapped.relations.size == 500 and not uncapped.truncated


def test_frontier_and_pool_caps() -> None:
    g = hub_graph()
    hub = g.entities.lookup([1])
    e = g.expand(entity_seeds=hub, hops=1, max_neighbors=None, max_frontier=5)
    assert e.truncated
    assert (e.hops == 1).sum() <= 5 * 4
    p = g.expand(entity_seeds=hub, hops=1, max_neighbors=None, max_relations=42)
    assert p.relations.size == 42 and p.truncated


def test_relation_mask_blocks_traversal() -> None:
    g = GraphIndex.from_relations(
        relation_keys=[1, 2, 3], subject_keys=[10, 20, 30], object_keys=[20, 30, 40], passage_ids=[["a"], ["b"], ["a"]]
    )
    mask = g.relation_mask_for_passages(g.passages.lookup(["a"]))
    assert mask.tolist() == [True, False, True]
    e = g.expand(entity_seeds=g.entities.lookup([10]), hops=3, relation_mask=mask)
    assert g.relations.keys[e.relations].tolist() == [1]  # r3 is allowed but only reachable through r2
    assert g.expand(relation_seeds=g.relations.lookup([2]), relation_mask=mask).relations.size == 0


def test_add_relations_is_incremental_and_idempotent() -> None:
    full = random_graph(3)
    keys = full.relations.keys
    subj = full.entities.keys[full.rel_subject]
    obj = full.entities.keys[full.rel_object]
    pids = [[full.passages.ids[p] for p in full.rel_pas.row(r)] for r in range(full.n_relations)]
    half = GraphIndex.from_relations(
        relation_keys=keys[:60], subject_keys=subj[:60], object_keys=obj[:60], passage_ids=pids[:60]
    )
    grown = half.add_relations(
        relation_keys=keys[60:], subject_keys=subj[60:], object_keys=obj[60:], passage_ids=pids[60:]
    )
    again = grown.add_relations(relation_keys=keys, subject_keys=subj, object_keys=obj, passage_ids=pids)
    for g in (grown, again):
        assert (g.n_entities, g.n_relations, g.n_passages) == (full.n_entities, full.n_relations, full.n_passages)
        assert g.rel_pas.indices.size == full.rel_pas.indices.size
        for hops in (1, 2):
            ref = SeedMatrices.build(g, hops)
            got = g.expand(entity_seeds=[0, 5], relation_seeds=[7], hops=hops, max_neighbors=None, max_frontier=None)
            assert set(got.relations.tolist()) == ref.expand([0, 5], [7])
    # half is unchanged (immutability)
    assert half.n_relations == 60
    # a new passage link on an existing relation
    linked = grown.add_relations(
        relation_keys=keys[:1], subject_keys=subj[:1], object_keys=obj[:1], passage_ids=[["brand-new"]]
    )
    assert "brand-new" in linked.passages
    assert linked.passages.lookup(["brand-new"])[0] in linked.rel_pas.row(0).tolist()


def test_save_and_load_round_trip(tmp_path) -> None:
    g = random_graph(4)
    g.save(tmp_path / "idx", fingerprint={"relations": g.n_relations})
    g.save(tmp_path / "idx")  # overwrite in place
    for mmap in (True, False):
        h = GraphIndex.load(tmp_path / "idx", mmap=mmap)
        assert h.passages.ids == g.passages.ids
        assert type(h.rel_subject) is np.ndarray and type(h.ent_rel.indices) is np.ndarray  # no np.memmap overhead
        assert mmap == isinstance(h.ent_rel.indices.base, np.memmap)  # the same pages when memory-mapped
        for name in ("rel_subject", "rel_object"):
            assert np.array_equal(getattr(h, name), getattr(g, name))
        a = g.expand(entity_seeds=[1, 2], hops=2)
        b = h.expand(entity_seeds=[1, 2], hops=2)
        assert np.array_equal(a.relations, b.relations) and np.allclose(a.scores, b.scores)
        assert h.entities.lookup(g.entities.keys[:5]).tolist() == [0, 1, 2, 3, 4]
    assert GraphIndex.read_manifest(tmp_path / "idx")["relations"] == g.n_relations
    assert not (tmp_path / "idx.tmp").exists()


def test_compact_dtypes() -> None:
    g = random_graph(5)
    assert g.ent_rel.indices.dtype == np.int32
    assert g.rel_subject.dtype == np.int32
    assert g.entities.keys.dtype == np.uint64


def test_remove_passages_and_links_equal_a_rebuild_without_them() -> None:
    full = random_graph(6)
    keys = full.relations.keys
    subj = full.entities.keys[full.rel_subject]
    obj = full.entities.keys[full.rel_object]
    pids = [[full.passages.ids[p] for p in full.rel_pas.row(r)] for r in range(full.n_relations)]
    gone = set(full.passages.ids[:7])
    expected = GraphIndex.from_relations(
        relation_keys=[k for k, p in zip(keys, pids) if set(p) - gone],
        subject_keys=[s for s, p in zip(subj, pids) if set(p) - gone],
        object_keys=[o for o, p in zip(obj, pids) if set(p) - gone],
        passage_ids=[[x for x in p if x not in gone] for p in pids if set(p) - gone],
    )
    smaller, removed = full.remove_passages(sorted(gone))
    assert graph_signature(smaller) == graph_signature(expected)
    assert (smaller.n_entities, smaller.n_relations, smaller.n_passages) == (
        expected.n_entities,
        expected.n_relations,
        expected.n_passages,
    )
    assert set(removed.passage_ids) == gone
    assert len(removed.relation_keys) == full.n_relations - smaller.n_relations
    assert len(removed.entity_keys) == full.n_entities - smaller.n_entities
    # expansion on the smaller graph equals the seed's on it
    for hops in (1, 2):
        ref = SeedMatrices.build(smaller, hops)
        got = smaller.expand(entity_seeds=[0, 3], relation_seeds=[2], hops=hops, max_neighbors=None, max_frontier=None)
        assert set(got.relations.tolist()) == ref.expand([0, 3], [2])
    # unlinking single pairs; unknown pairs are ignored
    r0 = int(keys[0])
    unlinked, removed = full.remove_links(relation_keys=[r0] * len(pids[0]) + [12345], passage_ids=pids[0] + ["zz"])
    assert r0 not in set(unlinked.relations.keys.tolist()) and int(removed.relation_keys[0]) == r0
    same, nothing = full.remove_links(relation_keys=[], passage_ids=[])
    assert graph_signature(same) == graph_signature(full) and nothing.passage_ids == []


def _resave(path, name: str, value: np.ndarray) -> None:
    """Replace one array of a saved index and its manifest entry (a consistent but wrong index)."""
    import json

    from langchain_graphrag_milvus.graph import persist

    np.save(path / f"{name}.npy", value)
    manifest = persist.read_manifest(path)
    file = path / f"{name}.npy"
    manifest["files"][file.name] = {"bytes": file.stat().st_size, "crc32": persist.file_checksum(file)}
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("seed", [0, 7])
def test_the_push_walk_lists_are_saved_and_loaded_with_the_index(tmp_path, seed: int) -> None:
    from langchain_graphrag_milvus.graph import persist, push_walk
    from langchain_graphrag_milvus.graph.local_ppr import local_pagerank
    from langchain_graphrag_milvus.graph.push_walk import push_neighbours

    g = random_graph(seed)
    path = g.save(tmp_path / "idx")
    assert {"walk_rel_nbr_indptr.npy", "walk_rel_nbr_indices.npy"} <= set(persist.read_manifest(path)["files"])
    h = GraphIndex.load(path)
    assert "push_neighbours" in h._cache  # taken from the files, not computed
    calls = []
    real = push_walk.csr_transpose
    try:
        push_walk.csr_transpose = lambda *a: calls.append(a) or real(*a)  # type: ignore[assignment]
        loaded = push_neighbours(h)
        assert calls == []
        push_neighbours(random_graph(seed + 1))
        assert len(calls) == 1  # (the spy sees the transpose of a graph that was not loaded)
    finally:
        push_walk.csr_transpose = real  # type: ignore[assignment]
    fresh = push_neighbours(random_graph(seed))
    for a, b in zip(loaded[:2], fresh[:2]):
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    for a, b in zip(loaded[2:], fresh[2:]):
        assert np.array_equal(a, b)
    seeds = np.zeros(g.n_entities)
    seeds[[1, 2]] = 1.0
    got, want = local_pagerank(h, entity_weights=seeds), local_pagerank(random_graph(seed), entity_weights=seeds)
    for field in ("entity_idx", "entity", "relation_idx", "relation", "passage_idx", "passage"):
        assert np.array_equal(getattr(got, field), getattr(want, field))
    assert got.relation_idx.size > 0


def test_saved_walk_lists_that_do_not_fit_are_a_damaged_index_and_old_indexes_still_load(tmp_path) -> None:
    from langchain_graphrag_milvus.graph import persist
    from langchain_graphrag_milvus.graph.push_walk import push_neighbours

    g = random_graph(3)
    path = g.save(tmp_path / "idx")
    good = np.load(path / "walk_rel_nbr_indices.npy")
    for bad in (good[:-1], np.where(np.arange(good.size) == 0, g.n_entities + g.n_passages, good), -good - 1):
        _resave(path, "walk_rel_nbr_indices", bad.astype(good.dtype))
        with pytest.raises(persist.IndexFileError, match="relation lists"):
            GraphIndex.load(path)
    _resave(path, "walk_rel_nbr_indices", good)
    assert GraphIndex.load(path).n_relations == g.n_relations
    # an index saved before the walk lists were: loads, and builds them on first use
    manifest = persist.read_manifest(path)
    for name in ("walk_rel_nbr_indptr.npy", "walk_rel_nbr_indices.npy"):
        del manifest["files"][name]
        (path / name).unlink()
    (path / "manifest.json").write_text(__import__("json").dumps(manifest), encoding="utf-8")
    old = GraphIndex.load(path)
    assert "push_neighbours" not in old._cache
    assert np.array_equal(push_neighbours(old)[0].indices, push_neighbours(g)[0].indices)
