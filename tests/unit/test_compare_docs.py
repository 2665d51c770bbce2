"""``benchmarks/compare_docs.py`` (two dumps' Documents, question by question) and the worker's RSS reading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from compare_docs import compare, main  # noqa: E402
from scale_worker import rss_kib  # noqa: E402


def _dump(*questions):
    return [
        [q, [[pid, f"text {pid}", {"_passage_id": pid, "score": score}] for pid, score in docs]]
        for q, docs in questions
    ]


def test_same_documents_report_the_float_difference():
    a = _dump(("q1", [("p1", 0.5), ("p2", 0.25)]), ("q2", [("p3", 0.125)]))
    b = _dump(("q1", [("p1", 0.5 + 1e-7), ("p2", 0.25)]), ("q2", [("p3", 0.125)]))
    out = compare(a, b)
    assert (out["questions"], out["other_ids"], out["other_fields"]) == (2, 0, 0)
    assert out["max_float_diff"] == pytest.approx(1e-7)


def test_other_order_and_other_text_are_counted():
    a = _dump(("q1", [("p1", 0.5), ("p2", 0.25)]), ("q2", [("p3", 0.125)]))
    b = _dump(("q1", [("p2", 0.25), ("p1", 0.5)]), ("q2", [("p3", 0.125)]))
    b[1][1][0][1] = "other text"
    out = compare(a, b)
    assert (out["other_ids"], out["other_fields"]) == (1, 1)


def test_other_questions_are_refused():
    with pytest.raises(ValueError):
        compare(_dump(("q1", [])), _dump(("q2", [])))


def test_main_exit_status(tmp_path, capsys):
    same, other = tmp_path / "a.json", tmp_path / "b.json"
    same.write_text(json.dumps({"docs": _dump(("q", [("p1", 1.0)]))}))
    other.write_text(json.dumps({"docs": _dump(("q", [("p2", 1.0)]))}))
    assert main([str(same), str(same)]) == 0
    assert main([str(same), str(other)]) == 1
    assert '"other_ids": 1' in capsys.readouterr().out


def test_rss_is_read_from_proc():
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc")
    rss = rss_kib()
    assert rss["rss"] > 1000 and rss["anon"] > 0 and "file" in rss
