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
