"""Integrity of reads (issue 12, part B) without Milvus: index files checked against their manifest,
capped rerank parsing, and tenant views in the graph core. The store-backed half is in
``tests/integration/test_integrity_reads.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import persist
from langchain_graphrag_milvus.retrieval.graph_pipeline import first_unique_names
from langchain_graphrag_milvus.retrieval.rerank import parse_rerank_answer
from langchain_graphrag_milvus.retrieval.stages import Candidate, order_from_positions

# ------------------------------------------------------------------ 4. a saved index that heals


def test_persist_refuses_inconsistent_files(tmp_path) -> None:
    from langchain_graphrag_milvus.graph import GraphIndex

    graph = GraphIndex.from_relations(
        relation_keys=[1, 2], subject_keys=[10, 20], object_keys=[20, 30], passage_ids=[["p1"], ["p2", "p1"]]
    )
    path = graph.save(tmp_path / "g", fingerprint={"generation": 1})
    assert persist.load(path).n_relations == 2
    manifest = persist.read_manifest(path)
    assert set(manifest["files"]) == {f.name for f in path.glob("*.npy")}
    # a consistent but wrong manifest (counts edited, checksums recomputed) is still refused
    manifest["relations"] = 3
    (path / "manifest.json").write_text(__import__("json").dumps(manifest), encoding="utf-8")
    with pytest.raises(persist.IndexFileError, match="does not match its manifest"):
        persist.load(path)
    np.save(path / "rel_subject.npy", np.zeros(5, np.int32))  # arrays that disagree with each other
    manifest["relations"] = 2
    manifest["files"]["rel_subject.npy"] = {
        "bytes": (path / "rel_subject.npy").stat().st_size,
        "crc32": persist.file_checksum(path / "rel_subject.npy"),
    }
    (path / "manifest.json").write_text(__import__("json").dumps(manifest), encoding="utf-8")
    with pytest.raises(persist.IndexFileError, match="disagree"):
        persist.load(path)
    manifest["files"]["../escape.npy"] = {"bytes": 1, "crc32": 0}
    with pytest.raises(persist.IndexFileError, match="invalid file entry"):
        persist.verify(path, manifest)


# ------------------------------------------------------------------ 7. bounded work
def test_rerank_parsing_is_capped_and_keeps_the_first_valid_unique_ids() -> None:
    answer = {"useful_relationships": ["[3] c", "[3] c again", "[99] invented", "x", True, 2, "[1] a"] * 40_000}
    assert len(answer["useful_relationships"]) == 280_000
    assert parse_rerank_answer(answer, 5) == [2, 1, 0]  # one pass: 3 valid unique positions
    assert parse_rerank_answer(answer, 5, limit=2) == [2, 1]
    huge = {"useful_relationships": [f"[{i}] r" for i in range(1, 200_001)]}
    assert parse_rerank_answer(huge, 50) == list(range(50))  # stops at the pool size
    assert parse_rerank_answer({"useful_relationships": ["[" + "9" * 5000 + "]", "9" * 30, "[2]"]}, 3) == [1]
    pool = [Candidate(str(i), f"r{i}", [f"p{i}"], 0.5) for i in range(3)]
    assert [c.id for c in order_from_positions(pool, [5, 2, 2, -1, 0, *range(200_000)])] == ["2", "0", "1"]
    with pytest.raises(TypeError, match="not a list"):
        order_from_positions(pool, "012")  # type: ignore[arg-type]
    assert first_unique_names(iter(["a", " a ", "", 3, "b", *map(str, range(10**6))]), 4) == ["a", "b", "0", "1"]


# ------------------------------------------------------------------ 6. tenant views hide everything outside them


def test_pagerank_on_a_view_equals_pagerank_on_a_graph_without_the_rest() -> None:
    from langchain_graphrag_milvus.graph import GraphIndex
    from langchain_graphrag_milvus.graph.ppr import personalized_pagerank

    rng = np.random.default_rng(3)
    subj, obj = rng.integers(0, 30, 120), rng.integers(30, 60, 120)
    pids = [[f"p{rng.integers(0, 25)}", f"p{rng.integers(0, 25)}"] for _ in range(120)]
    full = GraphIndex.from_relations(
        relation_keys=np.arange(1, 121), subject_keys=subj, object_keys=obj, passage_ids=pids
    )
    view = full.view(full.passages.find([f"p{i}" for i in range(0, 25, 2)]))  # the even passages
    keep = np.flatnonzero(view.relations)
    part = GraphIndex.from_relations(
        relation_keys=full.relations.keys[keep],
        subject_keys=subj[keep],
        object_keys=obj[keep],
        passage_ids=[[p for p in pids[r] if p in view.passage_ids] for r in keep.tolist()],
    )
    seed_full = int(full.entities.find(np.array([int(subj[keep[0]])], np.uint64))[0])
    seed_part = int(part.entities.find(np.array([int(subj[keep[0]])], np.uint64))[0])
    a = personalized_pagerank(
        full, entity_weights={seed_full: 1.0}, relation_mask=view.relations, passage_mask=view.passages, tol=1e-9
    )
    b = personalized_pagerank(part, entity_weights={seed_part: 1.0}, tol=1e-9)
    by_id_a = {full.passages.ids[i]: float(v) for i, v in enumerate(a.passage) if view.passages[i]}
    by_id_b = {part.passages.ids[i]: float(v) for i, v in enumerate(b.passage)}
    assert by_id_a.keys() == by_id_b.keys()
    assert all(abs(by_id_a[k] - by_id_b[k]) < 1e-6 for k in by_id_a)
    assert float(a.passage[~view.passages].sum()) == 0.0
