"""The evaluation harness and its CLI, on small data with fake embeddings (fast)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from langchain_graphrag_milvus.cli.evaluation import recall_at
from langchain_graphrag_milvus.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_recall_at() -> None:
    assert recall_at(["a", "b", "c"], ["b", "x"], 2) == 0.5
    assert recall_at(["a", "b"], ["a", "b"], 5) == 1.0
    assert recall_at(["a"], [], 2) == 0.0


def test_cli_module_entry_point_and_usage_errors() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "langchain_graphrag_milvus", "eval", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0 and "--questions" in result.stdout
    with pytest.raises(SystemExit):
        main(["eval", "--passages", "x.jsonl"])  # --questions missing


def test_losses_against_each_baseline() -> None:
    from langchain_graphrag_milvus.cli.evaluation import EvalReport, losses

    per_question = {
        "naive": {"q1": [0.5, 1.0], "q2": [0.0, 0.5], "q3": [1.0, 1.0]},
        "hybrid": {"q1": [1.0, 1.0], "q2": [0.0, 0.0], "q3": [0.5, 1.0]},
        "graph": {"q1": [0.5, 0.5], "q2": [0.5, 0.5], "q3": [0.5, 1.0]},
    }
    lost = losses(per_question)
    assert set(lost) == {"graph"}  # baselines are not compared with each other
    assert lost["graph"]["naive"]["recall@2"] == {"count": 1, "questions": ["q3"]}
    assert lost["graph"]["naive"]["recall@5"] == {"count": 1, "questions": ["q1"]}
    assert lost["graph"]["hybrid"]["recall@2"] == {"count": 1, "questions": ["q1"]}
    assert lost["graph"]["hybrid"]["recall@5"] == {"count": 1, "questions": ["q1"]}
    assert set(losses({k: v for k, v in per_question.items() if k != "hybrid"})["graph"]) == {"naive"}
    assert losses({"graph": per_question["graph"]}) == {"graph": {}}  # no baseline: nothing lost
    report = EvalReport(per_question=per_question)
    assert report.to_dict()["losses"] == lost
    lines = report.losses_table()
    assert lines[1] == "| losses vs naive / vs hybrid | R@2 vs naive | R@5 vs naive | R@2 vs hybrid | R@5 vs hybrid |"
    assert "| graph | 1 | 1 | 1 | 1 |" in lines
    assert any("graph lost at R@5 vs naive: q1" in line for line in lines)
    assert EvalReport(per_question={"graph": per_question["graph"]}).losses_table() == []


def test_rrf_fuses_ranks() -> None:
    from langchain_graphrag_milvus.cli.hybrid import rrf

    assert rrf([["a", "b", "c"], ["c", "b", "d"]]) == ["c", "b", "a", "d"]  # c: 1/63 + 1/61 > b: 2/62
    assert rrf([["a", "b"], ["b", "a"]]) == ["a", "b"]  # a tie: first seen first
    assert rrf([["a", "b"], []]) == ["a", "b"]
    assert rrf([["a", "a", "b"]]) == ["a", "b"]
