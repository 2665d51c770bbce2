"""scripts/check_import_cycles.py (run by `make lint`): finds every cycle, and only cycles."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_import_cycles", ROOT / "scripts" / "check_import_cycles.py")
assert _spec is not None and _spec.loader is not None
cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cycles)


def test_strongly_connected_components() -> None:
    dag = {"a": {"b", "c"}, "b": {"c"}, "c": set()}
    assert cycles.strongly_connected(dag) == []
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"f"}, "g": {"a"}}
    assert cycles.strongly_connected(graph) == [["a", "b", "c"], ["d", "e"], ["f"]]


def test_a_long_chain_needs_no_recursion() -> None:
    n = 5000
    chain = {str(i): {str(i + 1)} for i in range(n)} | {str(n): {"0"}}
    assert [len(c) for c in cycles.strongly_connected(chain)] == [n + 1]


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_main_reports_type_checking_and_lazy_cycles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _package(
        tmp_path,
        {
            "cyc_pkg/__init__.py": "",
            "cyc_pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc_pkg.high import X\n",
            "cyc_pkg/high.py": "from cyc_pkg import low\nX = 1\n",
            "cyc_pkg/lazy.py": "def f():\n    from cyc_pkg import other\n",
            "cyc_pkg/other.py": "import cyc_pkg.lazy\n",
            "acyclic_pkg/__init__.py": "",
            "acyclic_pkg/a.py": "from acyclic_pkg import b\n",
            "acyclic_pkg/b.py": "",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cycles.main(["cyc_pkg"]) == 1
    out = capsys.readouterr().out
    assert "cyc_pkg.low -> cyc_pkg.high (l.3)" in out and "cyc_pkg.high -> cyc_pkg.low (l.1)" in out
    assert "cyc_pkg.lazy -> cyc_pkg.other (l.2)" in out
    assert "2 import cycle(s) in cyc_pkg" in out
    assert cycles.main(["acyclic_pkg"]) == 0
    assert "no import cycle in acyclic_pkg (3 modules)" in capsys.readouterr().out
    for name in [m for m in sys.modules if m.startswith(("cyc_pkg", "acyclic_pkg"))]:
        monkeypatch.delitem(sys.modules, name)
