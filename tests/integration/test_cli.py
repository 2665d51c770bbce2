"""The command line: ingest folders of mixed files with --sync, query, graph export, stats, --help.

The end-to-end test is real: LangChain loaders (text, Markdown, HTML, a PDF written by hand),
Milvus Lite, all-MiniLM-L6-v2 and spaCy triplet extraction. The --sync safety tests use the
hidden ``--embeddings fake`` and ``--extractor none`` (they check which sources are deleted,
not retrieval) and run on Lite and on the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from langchain_graphrag_milvus.cli.main import main
from langchain_graphrag_milvus.ingest.loaders import source_key

from ..cli_corpus import NEW_JOHANN, OLD_JOHANN, write_corpus
from ..conftest import backend_uri

pytest.importorskip("langchain_community")
pytest.importorskip("pypdf")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------------------- end to end


@pytest.mark.model
@pytest.mark.slow
def test_ingest_sync_query_export_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("spacy")
    folder = tmp_path / "docs"
    files = write_corpus(folder)
    store = ["--uri", str(tmp_path / "milvus.db"), "--prefix", "e2e"]

    first = run_json(capsys, "ingest", str(folder), "--sync", "--extractor", "offline", *store)
    assert first["files_found"] == 4 and first["files_ingested"] == 4 and first["files_skipped"] == 1
    assert first["passages_added"] >= 5 and first["relations_added"] > 0 and first["entities_added"] > 0

    again = run_json(capsys, "ingest", str(folder), "--sync", "--extractor", "offline", *store)
    assert again["files_unchanged"] == 4 and again["chunks"] == 0 and again["texts_embedded"] == 0

    files["md"].write_text(f"# Johann Bernoulli\n\n{NEW_JOHANN}\n", encoding="utf-8")
    files["html"].unlink()
    second = run_json(capsys, "ingest", str(folder), "--sync", "--extractor", "offline", *store)
    assert second["files_ingested"] == 1 and second["files_unchanged"] == 2
    assert second["deleted"] == [source_key(files["html"])] and second["passages_deleted"] >= 2

    stats = run_json(capsys, "stats", *store)
    assert stats["sources"] == 3 and stats["passages"] >= 3
    for mode in ("naive", "graph"):  # k above the passage count: every stored passage is seen
        rows = run_json(capsys, "query", "Where did Johann Bernoulli teach?", "--mode", mode, "-k", "50", *store)
        texts = " ".join(r["text"] for r in rows)
        assert "Groningen" in texts, mode
        assert OLD_JOHANN not in texts and "fluid dynamics" not in texts, mode
        assert source_key(files["html"]) not in {r["source"] for r in rows}
        assert {r["source"] for r in rows} <= {source_key(p) for p in (files["txt"], files["md"], files["pdf"])}
    top = run_json(capsys, "query", "Who taught at the University of Groningen?", "-k", "1", "--mode", "naive", *store)
    assert top[0]["source"] == source_key(files["md"]) and isinstance(top[0]["score"], float)

    code, out, _ = run_cli(capsys, "query", "Who was the teacher of Leonhard Euler?", "-k", "2", *store)
    assert code == 0 and out.startswith("1. [") and "via: " in out

    graphml = tmp_path / "store.graphml"
    assert run_cli(capsys, "graph", "export", "-o", str(graphml), *store)[0] == 0
    import networkx as nx

    graph = nx.read_graphml(graphml)
    labels = " ".join(str(data) for _, data in graph.nodes(data=True))
    assert graph.number_of_nodes() > 5 and graph.number_of_edges() > 0
    assert "Groningen" in labels and "fluid dynamics" not in labels and OLD_JOHANN not in labels

    sub_json = tmp_path / "answer.json"
    code, _, _ = run_cli(capsys, "graph", "export", "--query", "Who taught Euler?", "-o", str(sub_json), *store)
    assert code == 0 and json.loads(sub_json.read_text())["nodes"]

    # the same store from another process: the console entry point as a user runs it
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_graphrag_milvus", "query", "Groningen", "--mode", "naive", "-k", "50"]
        + [*store, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert any("Groningen" in r["text"] for r in rows) and not any(OLD_JOHANN in r["text"] for r in rows)


# ---------------------------------------------------------------------------- --sync deletes only under its roots


def test_sync_deletes_only_under_given_roots(
    request: pytest.FixtureRequest, backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = backend_uri(request, backend, tmp_path)
    store = ["--uri", uri, "--prefix", f"cli{uuid.uuid4().hex[:8]}", "--embeddings", "fake"]
    fast = ["--extractor", "none", *store]
    docs, docs2 = tmp_path / "docs", tmp_path / "docs2"  # docs2 shares docs' name as a prefix
    for folder in (docs, docs2):
        (folder / "sub").mkdir(parents=True)
        (folder / "a.txt").write_text(f"alpha text of {folder.name}")
        (folder / "sub" / 'q"uote.md').write_text(f"quoted file of {folder.name}")
    lone = tmp_path / "lone.txt"
    lone.write_text("a file given by itself")
    try:
        assert run_json(capsys, "ingest", str(docs), str(docs2), str(lone), *fast)["files_ingested"] == 5
        (docs2 / "a.txt").unlink()
        (docs2 / "sub" / 'q"uote.md').unlink()
        lone.unlink()
        only_docs = run_json(capsys, "ingest", str(docs), "--sync", *fast)
        assert only_docs["files_deleted"] == 0 and only_docs["files_unchanged"] == 2
        assert run_json(capsys, "stats", *store)["sources"] == 5
        (docs / "sub" / 'q"uote.md').unlink()
        synced = run_json(capsys, "ingest", str(docs), str(docs2), "--sync", *fast)
        assert sorted(synced["deleted"]) == sorted(
            source_key(p) for p in (docs / "sub" / 'q"uote.md', docs2 / "a.txt", docs2 / "sub" / 'q"uote.md')
        )
        assert run_json(capsys, "stats", *store)["sources"] == 2  # docs/a.txt and lone.txt
        # a path that no longer exists is a root too, with --sync: its stored files go
        gone = run_json(capsys, "ingest", str(lone), "--sync", *fast)
        assert gone["deleted"] == [source_key(lone)]
        rows = run_json(capsys, "query", "text", "--mode", "naive", "-k", "20", *store)
        assert [r["source"] for r in rows] == [source_key(docs / "a.txt")]
    finally:
        if backend == "server":
            from pymilvus import MilvusClient

            client = MilvusClient(uri)
            prefix = store[3]
            for kind in ("entities", "relations", "passages"):
                if client.has_collection(f"{prefix}_{kind}"):
                    client.drop_collection(f"{prefix}_{kind}")
            client.close()


# ---------------------------------------------------------------------------- errors and --help


def test_errors_are_one_line_with_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = ["--uri", str(tmp_path / "m.db"), "--embeddings", "fake"]
    code, _, err = run_cli(capsys, "ingest", str(tmp_path / "missing"), "--extractor", "none", *store)
    assert code == 2 and "no such file or folder" in err
    code, _, err = run_cli(capsys, "query", "anything", *store)
    assert code == 1 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "query", "x", "--filter", "{not json", *store)
    assert code == 2 and "--filter" in err
    broken = tmp_path / "docs"
    broken.mkdir()
    (broken / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    (broken / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))  # not UTF-8
    (broken / "ok.txt").write_text("one good file")
    summary = run_json(capsys, "ingest", str(broken), "--extractor", "none", *store)
    assert summary["files_ingested"] == 1 and summary["files_skipped"] == 2
    assert sorted(s for s, _ in summary["skipped"]) == [source_key(broken / n) for n in ("broken.pdf", "latin1.txt")]
