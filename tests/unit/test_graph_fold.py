"""Gathered folds of a first load equal folding chunk by chunk; rebuild key ranges partition the key space."""

from __future__ import annotations

import random

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.milvus.graph_fold import GraphDelta, PendingFold
from langchain_graphrag_milvus.milvus.graph_read import key_ranges

from ..graph_checks import graph_signature


def synonym_pairs(graph: GraphIndex) -> set[tuple[int, int]]:
    keys = graph.entities.keys
    return {(int(keys[i]), int(keys[j])) for i in range(len(keys)) for j in graph.synonyms.row(i).tolist()}


def deltas(seed: int, chunks: int = 30) -> list[GraphDelta]:
    """Chunks of relation rows over few entities: relations repeat across chunks with other passages."""
    rng = random.Random(seed)
    out = []
    for c in range(chunks):
        rows: dict[int, tuple[int, int, list[str]]] = {}
        for _ in range(rng.randint(0, 12)):
            s, o = rng.randint(1, 15), rng.randint(1, 15)
            r = s * 100 + o
            rows.setdefault(r, (s, o, []))[2].extend(rng.sample([f"p{c}-{i}" for i in range(4)], rng.randint(1, 2)))
        ents = sorted({k for v in rows.values() for k in v[:2]})
        pairs = [(a, b) for a in ents for b in ents if a < b and rng.random() < 0.1]
        out.append(
            GraphDelta(
                relation_keys=list(rows),
                subject_keys=[v[0] for v in rows.values()],
                object_keys=[v[1] for v in rows.values()],
                passage_ids=[v[2] for v in rows.values()],
                synonym_pairs=([a for a, _ in pairs], [b for _, b in pairs]),
                new_entities={f"{e:016x}": f"name {e}" for e in ents},
            )
        )
    return out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("every", [1, 4, 1000])
def test_gathered_folds_equal_chunk_by_chunk(seed: int, every: int) -> None:
    one_by_one = GraphIndex.empty()
    gathered, pending, names = GraphIndex.empty(), PendingFold(), {}
    for i, d in enumerate(deltas(seed)):
        one_by_one = one_by_one.add_relations(
            relation_keys=np.array(d.relation_keys, np.uint64),
            subject_keys=np.array(d.subject_keys, np.uint64),
            object_keys=np.array(d.object_keys, np.uint64),
            passage_ids=d.passage_ids,
            synonym_pairs=d.synonym_pairs,
        )
        assert pending.accepts(d)
        pending.add(d)
        if (i + 1) % every == 0:
            gathered, learnt = pending.fold_into(gathered)
            names.update(learnt)
            pending = PendingFold()
    gathered, learnt = pending.fold_into(gathered)
    names.update(learnt)
    assert graph_signature(gathered) == graph_signature(one_by_one)
    assert synonym_pairs(gathered) == synonym_pairs(one_by_one)
    assert names == {k: v for d in deltas(seed) for k, v in d.new_entities.items()}


def test_removals_are_not_gathered() -> None:
    assert not PendingFold.accepts(GraphDelta(unlinked_relation_keys=[1], unlinked_passage_ids=["p"]))
    assert not PendingFold.accepts(GraphDelta(removed_entities=["00000000000000aa"]))


@pytest.mark.parametrize("parts", [1, 2, 3, 4, 7, 16, 40])
def test_key_ranges_partition_every_string(parts: int) -> None:
    ranges = key_ranges(parts)
    assert len(ranges) == min(parts, 16)
    rng = random.Random(parts)
    keys = [format(rng.getrandbits(64), "016x") for _ in range(300)]
    keys += ["", "0", "3ffffffffffffff", "4", "f", "ffffffffffffffff", "g", "A", "~", "é", '"', "\\"]
    for key in keys:
        # our own generated expressions, evaluated with Python's string order (Milvus compares UTF-8 bytes)
        matched = [w for w in ranges if w is None or eval(w.replace("pk", "key"), {"key": key})]  # noqa: S307
        assert len(matched) == 1, (key, matched)
