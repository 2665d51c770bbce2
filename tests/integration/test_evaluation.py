"""The evaluation harness and its CLI, on small data with fake embeddings (fast)."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_graphrag_milvus.cli.evaluation import Question, evaluate, load_questions
from langchain_graphrag_milvus.cli.main import main
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset

from ..fakes import LexicalEmbeddings


def nano_files(tmp_path: Path) -> tuple[Path, Path]:
    passages = tmp_path / "passages.jsonl"
    with passages.open("w") as f:
        for i, rec in enumerate(nano_dataset()):
            f.write(
                json.dumps(
                    {
                        "id": f"nano-{i}",
                        "title": rec["passage"].split(" (")[0],
                        "text": rec["passage"],
                        "triplets": rec["triplets"] + [["broken", "triplet"]],
                    }
                )
                + "\n"
            )
    questions = tmp_path / "questions.jsonl"
    with questions.open("w") as f:
        f.write(
            json.dumps(
                {
                    "id": "q1",
                    "question": NANO_QUESTION,
                    "hops": 2,
                    "gold_passage_ids": ["nano-3", "nano-2"],
                    "answer": "fluid dynamics",
                }
            )
            + "\n"
        )
        f.write(
            json.dumps(
                {
                    "id": "q2",
                    "question": "Who was Jakob Bernoulli's younger brother?",
                    "hops": 1,
                    "gold_passage_ids": ["nano-0"],
                }
            )
            + "\n"
        )
    return passages, questions


def test_evaluate_reports_methods_hops_and_pools(make_store, tmp_path) -> None:
    passages, questions = nano_files(tmp_path)
    store = make_store(LexicalEmbeddings())
    report = store.add_jsonl(passages)
    assert report.triplets_skipped == 4
    qs = load_questions(questions)
    assert qs[0] == Question("q1", NANO_QUESTION, ("nano-3", "nano-2"), 2, "fluid dynamics")
    assert len(load_questions(questions, limit=1)) == 1
    result = evaluate(store, qs)
    data = result.to_dict()
    assert set(data["methods"]) == {"naive", "graph", "graph_similarity"}
    for m in data["methods"].values():
        assert 0.0 <= m["recall@2"] <= m["recall@5"] <= 1.0
        assert set(m["by_hops"]) == {"1", "2"}
    pool = data["pool"]
    assert 0 < pool["median_size"] <= 50 and 0.0 <= pool["gold_coverage"] <= 1.0
    assert pool["median_prompt_chars"] > 500  # the one-shot example alone is ~1,000 characters
    table = result.table()
    assert "| graph |" in table and "gold coverage" in table


def test_cli_eval_writes_json(tmp_path, capsys) -> None:
    passages, questions = nano_files(tmp_path)
    out = tmp_path / "out.json"
    args = ["eval", "--passages", str(passages), "--questions", str(questions), "--embeddings", "fake"]
    args += ["--cache-dir", str(tmp_path / "cache"), "--limit", "1", "--no-progress"]
    code = main([*args, "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["methods"]["naive"]["questions"] == 1 and "gold_coverage" in data["pool"]
    assert "| naive |" in capsys.readouterr().out
    # a second run reuses the cached embeddings and the ingested collections
    assert main(args) == 0
    assert "0 texts embedded" in capsys.readouterr().err


def test_cli_eval_with_an_approximate_index_reports_its_recall(tmp_path, capsys) -> None:
    passages, questions = nano_files(tmp_path)
    out = tmp_path / "out.json"
    args = ["eval", "--passages", str(passages), "--questions", str(questions), "--embeddings", "fake"]
    args += ["--cache-dir", str(tmp_path / "cache"), "--limit", "1", "--no-progress", "--index", "hnsw"]
    assert main([*args, "--json", str(out)]) == 0
    measured = json.loads(out.read_text())["config"]["index"]["vector_index"]
    assert set(measured) == {"relations", "passages"}
    for kind in measured.values():  # a handful of rows: HNSW finds every exact neighbour
        assert kind["index"] == "HNSW" and kind["k"] == 10 and kind["queries"] == 1 and kind["recall"] == 1.0
    assert "relations index HNSW: recall@10 1.000 vs exact" in capsys.readouterr().out
    flat = tmp_path / "flat.json"
    assert main([*args[:-2], "--json", str(flat)]) == 0  # the default, exact: nothing to report
    assert "vector_index" not in json.loads(flat.read_text())["config"]["index"]


def test_cli_eval_passage_limit_keeps_the_gold_passages(tmp_path, capsys) -> None:
    """``--passage-limit 1`` (smoke runs): the first passage and q1's two gold passages, nothing else."""
    passages, questions = nano_files(tmp_path)
    out = tmp_path / "out.json"
    args = ["eval", "--passages", str(passages), "--questions", str(questions), "--embeddings", "fake"]
    args += ["--cache-dir", str(tmp_path / "cache"), "--limit", "1", "--no-progress", "--passage-limit", "1"]
    assert main([*args, "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["config"]["index"]["passages_added"] == 3  # nano-0, and the gold nano-2, nano-3
    assert data["methods"]["naive"]["questions"] == 1
    full = tmp_path / "full.json"
    assert main([*args[:-2], "--json", str(full)]) == 0  # its own prefix: the whole file is a new store
    assert json.loads(full.read_text())["config"]["index"]["passages_added"] == 4
    assert data["config"]["prefix"] != json.loads(full.read_text())["config"]["prefix"]
    assert main([*args[:-1], "-1"]) == 2
    assert "--passage-limit must be 0 or more" in capsys.readouterr().err


def test_hybrid_baseline_and_losses(make_store, tmp_path) -> None:
    from langchain_graphrag_milvus.cli.evaluation import default_methods
    from langchain_graphrag_milvus.cli.hybrid import hybrid_retriever

    passages, questions = nano_files(tmp_path)
    store = make_store(LexicalEmbeddings())
    store.add_jsonl(passages)
    ids = [f"nano-{i}" for i in range(4)]
    hybrid = hybrid_retriever(store, [*ids, "not-a-passage"], k=5)
    assert hybrid is not None and hybrid.ids == ids  # ids the store does not hold are skipped
    docs = hybrid.invoke("Who was Jakob Bernoulli's younger brother?")
    assert {d.id for d in docs} == set(ids) and len(docs) == 4  # every passage, each once
    assert docs[0].id == "nano-0"  # BM25 and dense both put Jakob's passage first
    assert docs[0].page_content.startswith("Jakob Bernoulli")
    assert [d.id for d in hybrid.invoke("the of and")][:1]  # stopwords only: the dense list alone
    methods = {"naive": default_methods(store)["naive"], "hybrid": hybrid, "graph": default_methods(store)["graph"]}
    report = evaluate(store, load_questions(questions), methods=methods)
    data = report.to_dict()
    assert set(data["methods"]) == {"naive", "hybrid", "graph"}
    assert set(data["losses"]) == {"graph"} and set(data["losses"]["graph"]) == {"naive", "hybrid"}
    for base in ("naive", "hybrid"):
        for k in (2, 5):
            lost = data["losses"]["graph"][base][f"recall@{k}"]
            expected = [
                q for q, r in data["per_question"][base].items() if data["per_question"]["graph"][q][k == 5] < r[k == 5]
            ]
            assert lost == {"count": len(expected), "questions": expected}
    assert set(data["per_question"]["graph"]) == {"q1", "q2"}
    assert "| losses vs naive / vs hybrid |" in report.table()


def test_cli_eval_prints_losses_and_skips_hybrid_without_bm25s(tmp_path, capsys, monkeypatch) -> None:
    passages, questions = nano_files(tmp_path)
    out = tmp_path / "out.json"
    args = ["eval", "--passages", str(passages), "--questions", str(questions), "--embeddings", "fake"]
    args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", "--json", str(out)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "| hybrid |" in captured.out and "| losses vs naive / vs hybrid |" in captured.out
    data = json.loads(out.read_text())
    assert set(data["losses"]["graph"]) == {"naive", "hybrid"}
    monkeypatch.setitem(__import__("sys").modules, "bm25s", None)  # as if not installed
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "hybrid (BM25 + dense) skipped: bm25s is not installed" in captured.err
    assert "| hybrid |" not in captured.out and "| losses vs naive |" in captured.out
    assert set(json.loads(out.read_text())["losses"]["graph"]) == {"naive"}
