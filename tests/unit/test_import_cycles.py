"""scripts/check_import_cycles.py (run by `make lint`): finds every cycle, and only cycles.

Cycles through modules loaded by name (import_module, __import__, a lazy-export table, CLI handler
strings) count, and every handler string must name a callable.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import grimp
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


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[dict[str, str]], Path]]:
    """Writes packages under tmp_path, importable; forgets them (sys.modules) afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names: set[str] = set()

    def write(files: dict[str, str]) -> Path:
        _package(tmp_path, files)
        names.update(name.split("/")[0] for name in files)
        return tmp_path

    yield write
    for name in [m for m in sys.modules if m.split(".")[0] in names]:
        del sys.modules[name]


def test_a_cycle_through_an_import_by_name_fails(
    planted: Callable[[dict[str, str]], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    planted(
        {
            "strcyc/__init__.py": "",
            "strcyc/low.py": 'import importlib\n\n\ndef load():\n    return importlib.import_module("strcyc.high")\n',
            "strcyc/high.py": "from strcyc import low\n",
            "strcyc/rel.py": "from importlib import import_module\nimport_module('.back', __package__)\n",
            "strcyc/back.py": "import strcyc.rel\n",
            "strcyc/fstr.py": 'def f():\n    return __import__(f"{__package__}." + "other")\n',
            "strcyc/other.py": "from strcyc.fstr import f\n",
            "strok/__init__.py": "",
            "strok/low.py": 'import importlib\n\n\ndef load():\n    return importlib.import_module("json")\n',
            "strok/high.py": "from strok import low\n",
        }
    )
    static = grimp.build_graph("strcyc", cache_dir=None)
    assert cycles.strongly_connected({m: static.find_modules_directly_imported_by(m) for m in static.modules}) == []
    assert cycles.main(["strcyc"]) == 1
    out = capsys.readouterr().out
    assert "strcyc.low -> strcyc.high (l.5 by name: import_module 'strcyc.high')" in out
    assert "strcyc.high -> strcyc.low (l.1)" in out
    assert "strcyc.rel -> strcyc.back (l.2 by name: import_module 'strcyc.back')" in out
    assert "strcyc.fstr -> strcyc.other (l.2 by name: __import__ 'strcyc.other')" in out
    assert "3 import cycle(s) in strcyc" in out
    assert cycles.main(["strok"]) == 0
    assert "no import cycle in strok (3 modules)" in capsys.readouterr().out


def test_a_lazy_export_table_is_read_and_a_computed_name_must_say_where_its_targets_are(
    planted: Callable[[dict[str, str]], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    getattr_ = "def __getattr__(name):\n    return getattr(importlib.import_module(f'{__name__}.{_LAZY[name]}'), name)"
    root = planted(
        {
            "lazycyc/__init__.py": f"import importlib\n_LAZY = {{'Thing': 'things'}}\n{getattr_} # import-check: _LAZY",
            "lazycyc/things.py": "import lazycyc\nThing = 1\n",
            "lazyhidden/__init__.py": f"import importlib\n\n\n{getattr_}\n",
            "lazyhidden/things.py": "Thing = 1\n",
            "lazybad/__init__.py": "_LAZY: dict[str, str] = {'Thing': 'gone'}\n",
        }
    )
    assert cycles.main(["lazycyc"]) == 1
    out = capsys.readouterr().out
    assert "lazycyc -> lazycyc.things (l.2 by name: _LAZY table 'things')" in out
    assert "lazycyc.things -> lazycyc (l.1)" in out
    assert cycles.main(["lazyhidden"]) == 1
    out = capsys.readouterr().out
    assert f"{root / 'lazyhidden' / '__init__.py'}:5: importlib.import_module() with a computed name" in out
    assert "1 unresolved name(s) in lazyhidden" in out
    assert cycles.main(["lazybad"]) == 1
    out = capsys.readouterr().out
    assert f"{root / 'lazybad' / '__init__.py'}:1: _LAZY table 'gone' names no module of lazybad" in out


HANDLERS = """\
def add_parsers(sub):
    sub.add_parser("a").set_defaults(handler="hpkg.cmds:run")
    sub.add_parser("b").set_defaults(handler="hpkg.cmds:missing")
    sub.add_parser("c").set_defaults(handler="hpkg.nowhere:run")
    sub.add_parser("d").set_defaults(handler="hpkg.cmds.run")
    sub.add_parser("e").set_defaults(handler="hpkg.cmds:VALUE")
    sub.add_parser("f").set_defaults(handler=NAME)


TABLE = {"g": "hpkg.cmds:gone", "h": "hpkg.cmds:run"}
VALUE = 3
NAME = "hpkg.cmds:run"


def run(args):
    return 0
"""


def test_every_handler_string_must_resolve(
    planted: Callable[[dict[str, str]], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = planted({"hpkg/__init__.py": "", "hpkg/cmds.py": HANDLERS})
    assert cycles.main(["hpkg"]) == 1
    out = capsys.readouterr().out
    where = root / "hpkg" / "cmds.py"
    expected = [
        f"{where}:3: handler 'hpkg.cmds:missing' does not resolve: module 'hpkg.cmds' has no attribute 'missing'",
        f"{where}:4: handler 'hpkg.nowhere:run' does not resolve: module 'hpkg.nowhere' does not import "
        "(ModuleNotFoundError: No module named 'hpkg.nowhere')",
        f"{where}:5: handler string 'hpkg.cmds.run' is not 'module:function'",
        f"{where}:6: handler 'hpkg.cmds:VALUE' does not resolve: hpkg.cmds.VALUE is not callable",
        f"{where}:7: a handler that is not a string constant: the check cannot resolve it",
        f"{where}:10: module:attr string 'hpkg.cmds:gone' does not resolve: module 'hpkg.cmds' has no attribute 'gone'",
    ]
    for line in expected:
        assert line in out
    assert f"{where}:2:" not in out and "'hpkg.cmds:run'" not in out
    assert f"{len(expected)} unresolved name(s) in hpkg" in out


def test_a_cycle_through_a_handler_string_fails(
    planted: Callable[[dict[str, str]], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    planted(
        {
            "hcyc/__init__.py": "",
            "hcyc/cli.py": 'def add(sub):\n    sub.add_parser("x").set_defaults(handler="hcyc.cmd:run")\n',
            "hcyc/cmd.py": "from hcyc import cli\n\n\ndef run(args):\n    return 0\n",
        }
    )
    assert cycles.main(["hcyc"]) == 1
    out = capsys.readouterr().out
    assert "hcyc.cli -> hcyc.cmd (l.2 by name: handler 'hcyc.cmd:run')" in out
    assert "unresolved" not in out


def _registered_handlers(parser: argparse.ArgumentParser) -> set[str]:
    found = {str(parser.get_default("handler"))} - {"None"}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _registered_handlers(sub)
    return found


def test_the_package_passes_and_every_cli_handler_is_seen(capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_graphrag_milvus.cli.main import build_parser

    scan = cycles.string_refs("langchain_graphrag_milvus")
    assert scan.problems == []
    handlers = {r.text for r in scan.refs if r.form == "handler"}
    registered = _registered_handlers(build_parser())
    assert len(registered) >= 6 and handlers == registered
    # the root's lazy exports are its TYPE_CHECKING imports: the static graph has them as edges
    static = grimp.build_graph("langchain_graphrag_milvus", cache_dir=None)
    exported = static.find_modules_directly_imported_by("langchain_graphrag_milvus")
    assert {"langchain_graphrag_milvus.existing_store", "langchain_graphrag_milvus.store"} <= exported
    assert cycles.main([]) == 0
    assert "no import cycle in langchain_graphrag_milvus" in capsys.readouterr().out


def test_entry_points_of_pyproject_must_resolve(
    planted: Callable[[dict[str, str]], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = planted({"eppkg/__init__.py": "", "eppkg/cli.py": "def main():\n    return 0\n\nVALUE = 1\n"})
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        "[project]\nname = 'x'\n\n[project.scripts]\n"
        "good = 'eppkg.cli:main'\nmissing = 'eppkg.cli:gone'\nvalue = 'eppkg.cli:VALUE'\n"
        "dotted = 'eppkg.cli.main'\nother = 'json:dumps'\n\n"
        "[project.entry-points.'some.group']\nplugin = 'eppkg.nowhere:main'\n",
        encoding="utf-8",
    )
    assert cycles.main(["eppkg", str(pyproject)]) == 1
    out = capsys.readouterr().out
    expected = [
        f"{pyproject}:6: project.scripts 'missing' 'eppkg.cli:gone' does not resolve: "
        "module 'eppkg.cli' has no attribute 'gone'",
        f"{pyproject}:7: project.scripts 'value' 'eppkg.cli:VALUE' does not resolve: eppkg.cli.VALUE is not callable",
        f"{pyproject}:8: project.scripts 'dotted' = 'eppkg.cli.main' is not 'module:function'",
        f"{pyproject}:12: project.entry-points.some.group 'plugin' 'eppkg.nowhere:main' does not resolve: "
        "module 'eppkg.nowhere' does not import (ModuleNotFoundError: No module named 'eppkg.nowhere')",
    ]
    for line in expected:
        assert line in out, out
    assert "'good'" not in out and "json" not in out
    assert f"{len(expected)} unresolved name(s) in eppkg" in out


def test_the_project_console_script_is_resolved() -> None:
    scan = cycles.Scan()
    cycles.entry_point_refs("langchain_graphrag_milvus", cycles.PYPROJECT, scan)
    assert [(r.text, cycles.resolve(r)) for r in scan.refs] == [("langchain_graphrag_milvus.cli.main:main", None)]
