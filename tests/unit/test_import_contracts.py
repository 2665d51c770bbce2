"""The import contracts of pyproject.toml ([tool.importlinter], run by `make lint`) catch what they must.

The project's own configuration is applied to a small stand-in package with the same module names:
clean, it passes; an upward import hidden under ``if TYPE_CHECKING:`` (or inside a function), a framework
import in ``graph/``, an import of ``cli`` or between ``ingest`` and ``retrieval`` each break it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with Python 3.11's tomllib")
PACKAGE = "langchain_graphrag_milvus"
FAKE = "layered_pkg"
MODULES = [
    "__main__", "agent_tool", "errors", "existing_store", "existing_parts", "path_retriever", "retrievers",
    "store", "subgraph", "datasets", "embedding_cache", "embeddings", "embeddings_onnx", "offline_extraction",
    "triplets", "answers", "forwarding", "store_outputs",
    "server/__init__", "cli/__init__", "cli/main", "graph/__init__", "graph/index", "text/__init__", "text/names",
    "ingest/__init__", "ingest/load", "retrieval/__init__", "retrieval/stages", "milvus/__init__", "milvus/reads",
]  # fmt: skip


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


def _config(tmp_path: Path) -> Path:
    """The project's [tool.importlinter] with the package renamed, as a stand-alone config file."""
    section = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    text = json.dumps(section).replace(PACKAGE, FAKE)
    section = json.loads(text)
    lines = ["[tool.importlinter]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in section.items() if k != "contracts"]
    for contract in section["contracts"]:
        lines += ["", "[[tool.importlinter.contracts]]"] + [f"{k} = {_toml_value(v)}" for k, v in contract.items()]
    path = tmp_path / "contracts.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _lint(tmp_path: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    root = tmp_path / "src"
    for name in MODULES:
        path = root / FAKE / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    (root / FAKE / "__init__.py").write_text("", encoding="utf-8")
    # the allowed direction, top to bottom (and __main__ -> cli)
    (root / FAKE / "__main__.py").write_text(f"from {FAKE}.cli import main\n", encoding="utf-8")
    (root / FAKE / "cli" / "main.py").write_text(f"from {FAKE} import store, existing_store\n", encoding="utf-8")
    (root / FAKE / "store.py").write_text(f"from {FAKE} import retrievers, subgraph\n", encoding="utf-8")
    (root / FAKE / "retrievers.py").write_text(f"from {FAKE}.retrieval import stages\n", encoding="utf-8")
    (root / FAKE / "ingest" / "load.py").write_text(f"from {FAKE}.milvus import reads\n", encoding="utf-8")
    (root / FAKE / "milvus" / "reads.py").write_text(f"from {FAKE}.graph import index\n", encoding="utf-8")
    (root / FAKE / "graph" / "index.py").write_text(f"from {FAKE} import errors\nimport numpy\n", encoding="utf-8")
    for name, text in extra.items():
        (root / FAKE / f"{name}.py").write_text(text, encoding="utf-8")
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--config", str(_config(tmp_path)), "--no-cache"],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_clean_stand_in_keeps_every_contract(tmp_path: Path) -> None:
    proc = _lint(tmp_path, {})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 kept, 0 broken" in proc.stdout


TYPE_CHECKING_UP = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from {pkg}.store import X\n"


@pytest.mark.parametrize(
    ("module", "text", "broken"),
    [
        ("milvus/reads", TYPE_CHECKING_UP, "Layers"),
        ("ingest/load", "def f():\n    from {pkg}.retrievers import X\n", "Layers"),
        ("graph/index", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pymilvus\n", "LangChain"),
        ("text/names", "from langchain_core.documents import Document\n", "LangChain"),
        ("ingest/load", "from {pkg}.retrieval.stages import f\n", "do not import each other"),
        ("milvus/reads", "from {pkg}.cli import main\n", "only __main__"),
        ("answers", "from {pkg}.server import app\n", "Layers"),
        ("store", "def f():\n    from {pkg}.answers import x\n", "Layers"),
        ("__init__", "from {pkg}.cli import main\n", "__init__ does not import cli"),
        ("embeddings", "from {pkg}.store import X\n", "Layers"),
        ("forwarding", "from {pkg}.milvus import reads\n", "Layers"),
        ("datasets", "from {pkg}.ingest import load\n", "Layers"),
    ],
)
def test_each_kind_of_violation_breaks_a_contract(tmp_path: Path, module: str, text: str, broken: str) -> None:
    proc = _lint(tmp_path, {module: text.format(pkg=FAKE)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    broken_lines = [line for line in proc.stdout.splitlines() if line.rstrip().endswith("BROKEN")]
    assert any(broken in line for line in broken_lines), proc.stdout


def _layer_modules() -> set[str]:
    section = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (layers,) = [c for c in section["contracts"] if c["id"] == "layers"]
    return {m.strip() for layer in layers["layers"] for m in layer.replace("|", ":").split(":")}


def test_every_top_level_module_and_folder_has_a_layer_and_a_line_in_architecture() -> None:
    """A module beside the folders is in the layer contract and in ARCHITECTURE.md (named as ``name.py``)."""
    package = ROOT / PACKAGE
    tops = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    folders = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert tops and folders
    layered = _layer_modules()
    assert sorted((tops | folders) - layered) == []
    assert sorted(layered - tops - folders) == []
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert sorted(m for m in tops if f"{m}.py" not in architecture) == []
    assert sorted(f for f in folders if f"{f}/" not in architecture) == []
