"""The command line: ingest folders of mixed files with --sync, query, graph export, stats, --help.

The end-to-end test is real: LangChain loaders (text, Markdown, HTML, a PDF written here),
Milvus Lite, all-MiniLM-L6-v2 and spaCy triplet extraction. The --sync safety tests use the
hidden ``--embeddings fake`` and ``--extractor none`` (they check which sources are deleted,
not retrieval) and run on Lite and on the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, discover_files, load_file, source_key

pytest.importorskip("langchain_community")
pytest.importorskip("pypdf")

ROOT = Path(__file__).resolve().parents[2]
OLD_JOHANN = "brachistochrone"  # only in the first version of johann.md
NEW_JOHANN = "Johann Bernoulli taught at the University of Groningen and later held the chair in Basel."


def minimal_pdf(pages: list[str]) -> bytes:
    """A real PDF (one text line per page, Helvetica), written by hand: no PDF library needed."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>")
    font = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 10 Tf 40 720 Td ({escaped}) Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def _ascii(text: str) -> str:
    return text.replace("–", "-").replace("’", "'")


def write_corpus(folder: Path) -> dict[str, Path]:
    """The seed's four passages as four kinds of file, plus one file of an unsupported type."""
    jakob, johann, daniel, euler = (_ascii(r["passage"]) for r in nano_dataset())
    (folder / "people").mkdir(parents=True)
    files = {
        "txt": folder / "jakob.txt",
        "md": folder / "johann.md",
        "html": folder / "people" / "daniel.html",
        "pdf": folder / "euler.pdf",
    }
    files["txt"].write_text(jakob, encoding="utf-8")
    files["md"].write_text(f"# Johann Bernoulli\n\n{johann}\n", encoding="utf-8")
    files["html"].write_text(
        f"<html><head><title>Daniel</title><script>var x = 1;</script></head><body><p>{daniel}</p></body></html>",
        encoding="utf-8",
    )
    half = euler.index(". ", len(euler) // 2) + 1
    files["pdf"].write_bytes(minimal_pdf([euler[:half], euler[half:].strip()]))
    (folder / "image.bin").write_bytes(b"\x00\x01")
    return files


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


# ---------------------------------------------------------------------------- end to end


# ---------------------------------------------------------------------------- --sync deletes only under its roots


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
