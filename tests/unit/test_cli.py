"""The command line without Milvus: file discovery and loaders, --help's imports.

The loaders are real (LangChain's text, Markdown, HTML and PDF loaders) and read the nano corpus
written as files (``tests/cli_corpus.py``). The commands against a store are in
``tests/integration/test_cli.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, discover_files, load_file, source_key

from ..cli_corpus import write_corpus

pytest.importorskip("langchain_community")
pytest.importorskip("pypdf")

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- loaders


def test_discover_include_exclude_hidden(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.txt").write_text("hidden")
    (tmp_path / ".draft.md").write_text("hidden")
    found = discover_files([tmp_path])
    assert [Path(f.source).name for f in found.files] == ["euler.pdf", "jakob.txt", "johann.md", "daniel.html"]
    assert [Path(s).name for s, _ in found.skipped] == ["image.bin"]
    only_md = discover_files([tmp_path], include=["*.md"])
    assert [Path(f.source).name for f in only_md.files] == ["johann.md"]
    no_people = discover_files([tmp_path], exclude=["people/*", "*.pdf"])
    assert sorted(Path(f.source).name for f in no_people.files) == ["jakob.txt", "johann.md"]
    # a file given directly, twice and through another spelling, is one source
    twice = discover_files([tmp_path / "jakob.txt", tmp_path / "people" / ".." / "jakob.txt"])
    assert len({f.source for f in twice.files}) <= 2 and all(f.path.is_file() for f in twice.files)
    with pytest.raises(FileNotFoundError):
        discover_files([tmp_path / "missing"])


def test_load_pdf_html_markdown_metadata(tmp_path: Path) -> None:
    files = write_corpus(tmp_path)
    settings = ChunkSettings(chunk_size=1000, chunk_overlap=100)
    by_name = {Path(f.source).name: f for f in discover_files([tmp_path]).files}
    pdf = load_file(by_name["euler.pdf"], settings)
    assert [d.metadata["page"] for d in pdf.documents] == [0, 1]
    assert "student of Johann Bernoulli" in " ".join(d.page_content for d in pdf.documents)
    html = load_file(by_name["daniel.html"], settings).documents
    assert html[0].metadata["title"] == "Daniel" and "var x" not in html[0].page_content
    assert html[0].page_content.startswith("Daniel Bernoulli (1700")  # the <title> is metadata, not text
    md = load_file(by_name["johann.md"], settings).documents
    assert md[0].metadata["source"] == md[0].metadata["source_id"] == source_key(files["md"])
    assert {d.metadata["file_chunks"] for d in md} == {len(md)}
    # unchanged chunks keep their ids when text before them changes
    small = ChunkSettings(chunk_size=120, chunk_overlap=0)
    before = load_file(by_name["jakob.txt"], small).documents
    files["txt"].write_text("A new first sentence.\n\n" + files["txt"].read_text())
    after = load_file(by_name["jakob.txt"], small).documents
    assert before[-1].id == after[-1].id and len({d.id for d in after}) == len(after)
    assert before[0].metadata["file_fingerprint"] != after[0].metadata["file_fingerprint"]


# ---------------------------------------------------------------------------- errors and --help


def test_help_imports_nothing_heavy() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for argv in (["--help"], ["ingest", "--help"], ["query", "--help"], ["graph", "export", "--help"]):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "langchain_graphrag_milvus", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert proc.returncode == 0 and "usage:" in proc.stdout
        imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
        heavy = imported & {"langchain_core", "langchain_community", "pymilvus", "torch", "numpy", "scipy", "spacy"}
        assert not heavy, (argv, heavy)
