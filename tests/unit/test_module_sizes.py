"""No module of the package over 400 lines, and none kept under it by packing settings per line.

Packing: a constructor that sets several attributes in one statement from a tuple
(``self.a, self.b = a, b``); each setting gets its own line. Unpacking a pair of values that
belong together (``graph, view = q.graph, q.view``) elsewhere is not packing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import langchain_graphrag_milvus

PACKAGE = Path(langchain_graphrag_milvus.__file__).resolve().parent
MAX_LINES = 400


def modules(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def too_long(root: Path) -> list[str]:
    """``path: lines`` of every module over :data:`MAX_LINES` lines."""
    found = []
    for path in modules(root):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            found.append(f"{path.relative_to(root)}: {n} lines")
    return found


def packed_settings(root: Path) -> list[str]:
    """``path:line`` of every constructor statement that sets two or more attributes from one tuple."""
    found = []
    for path in modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if function.name not in ("__init__", "__post_init__"):
                continue
            for node in ast.walk(function):
                if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)):
                    continue
                for target in node.targets:
                    if isinstance(target, ast.Tuple) and sum(isinstance(e, ast.Attribute) for e in target.elts) >= 2:
                        found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_module_over_400_lines() -> None:
    assert too_long(PACKAGE) == []


def test_no_settings_packed_into_one_line() -> None:
    assert packed_settings(PACKAGE) == []


@pytest.mark.parametrize(
    ("text", "packed"),
    [
        ("class A:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n", ["m.py:3"]),
        ("class A:\n    def __post_init__(self):\n        self.a, self.b, c = 1, 2, 3\n", ["m.py:3"]),
        ("class A:\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n", []),
        ("def f(q):\n    graph, view = q.graph, q.view\n    return graph, view\n", []),
        ("class A:\n    def __init__(self, p):\n        self.a, self.b = p.split()\n", []),
    ],
)
def test_the_checks_catch_a_planted_case(tmp_path: Path, text: str, packed: list[str]) -> None:
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    assert packed_settings(tmp_path) == packed
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    assert too_long(tmp_path) == [f"long.py: {MAX_LINES + 1} lines"]
