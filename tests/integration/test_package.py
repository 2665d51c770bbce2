"""The package as a user installs it: a wheel built from this tree, in a fresh virtual environment.

The wheel is built with ``python -m build`` (no isolation: hatchling from the test venv, nothing
downloaded), installed with ``--no-deps`` into a new venv whose dependencies come from this
project's venv (a ``.pth`` line; the editable install of this tree is not on that path), and
the quickstart runs from a folder outside the repository. Checks the metadata a package index
shows: the extras, and that neither torch nor langchain-openai is forced on a user.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OPENAI_API_KEY")}
    return subprocess.run(cmd, cwd=cwd, env={**full_env, **env}, capture_output=True, text=True, timeout=900)


def test_the_built_wheel_installs_into_a_fresh_venv_and_runs_the_quickstart(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], ROOT)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    wheel = next(dist.glob("*.whl"))
    assert next(dist.glob("*.tar.gz"))
    venv = tmp_path / "fresh"
    assert _run([sys.executable, "-m", "venv", str(venv)], tmp_path).returncode == 0
    python = venv / "bin" / "python"
    installed = _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], tmp_path)
    assert installed.returncode == 0, installed.stderr[-2000:]
    found = _run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], tmp_path)
    fresh_site = Path(found.stdout.strip())
    (fresh_site / "project_deps.pth").write_text(site.getsitepackages()[0] + "\n")

    where = _run([str(python), "-c", "import langchain_graphrag_milvus as m; print(m.__file__)"], tmp_path)
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr  # the wheel, not this tree
    meta = _run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; d = m.metadata('langchain-graphrag-milvus'); "
            "print('\\n'.join(d.get_all('Requires-Dist') + ['extras: ' + ' '.join(d.get_all('Provides-Extra'))]))",
        ],
        tmp_path,
    )
    lines = meta.stdout.splitlines()
    extras = set(lines[-1].removeprefix("extras: ").split())
    assert {"local", "offline", "files", "openai"} <= extras
    required = [line for line in lines[:-1] if "extra ==" not in line]
    assert not any(line.startswith("langchain-openai") for line in required), required  # an extra, not required
    torch = [line for line in lines if line.startswith("torch")]
    assert torch and "==" not in torch[0].split(";")[0], torch  # a user's own torch (a CUDA build) is kept
    cli = _run([str(venv / "bin" / "langchain-graphrag-milvus"), "--help"], tmp_path)
    assert cli.returncode == 0 and "ingest" in cli.stdout

    work = tmp_path / "work"
    work.mkdir()
    for name in ("quickstart.py", "_common.py", "_reach.py", "_musique.py", "musique_excerpt.jsonl"):
        shutil.copy(ROOT / "examples" / name, work / name)
    demo = _run([str(python), "quickstart.py"], work, EXAMPLES_MILVUS_URI=str(work / "demo.db"), HF_HUB_OFFLINE="1")
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-3000:]
    assert "Passages retrieved from graph RAG" in demo.stdout
