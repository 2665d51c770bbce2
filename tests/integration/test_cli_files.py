"""The CLI against a store (Lite and server): issue 23, "The CLI and files".

Emptied and unreadable files under ``--sync``, ``--tenant`` on a partitioned store, an
API document that reuses a CLI chunk id, ``--graph-path`` inside an ingest root, a
folder reached through a link, and escape sequences in stored text and file names.
Fast plumbing: the hidden ``--embeddings fake`` and ``--extractor none``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.cli.main import main
from langchain_graphrag_milvus.errors import InvalidIdError
from langchain_graphrag_milvus.ingest.loaders import source_key

from ..conftest import backend_uri

pytest.importorskip("langchain_community")
pytest.importorskip("pathspec")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def cli_store(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[list[str]]:
    """Store options of a fresh prefix; on the server its collections are dropped afterwards."""
    uri = backend_uri(request, backend, tmp_path)
    prefix = f"cf{uuid.uuid4().hex[:8]}"
    yield ["--uri", uri, "--prefix", prefix, "--embeddings", "fake"]
    if backend == "server":
        from pymilvus import MilvusClient

        client = MilvusClient(uri)
        for kind in ("entities", "relations", "passages"):
            if client.has_collection(f"{prefix}_{kind}"):
                client.drop_collection(f"{prefix}_{kind}")
        client.close()


def _api_store(options: list[str], **kwargs: object) -> MilvusGraphStore:
    return MilvusGraphStore(
        DeterministicFakeEmbedding(size=64),
        uri=options[1],
        collection_prefix=options[3],
        **kwargs,  # type: ignore[arg-type]
    )


def _sources(capsys: pytest.CaptureFixture[str], store: list[str], *extra: str) -> list[str]:
    rows = run_json(capsys, "query", "text", "--mode", "naive", "-k", "50", *store, *extra)
    return sorted({str(r["source"]) for r in rows})  # type: ignore[union-attr]


def test_sync_clears_emptied_and_unreadable_files(
    tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("keep.txt", "emptied.txt", "garbled.txt"):
        (docs / name).write_text(f"text of {name}")
    fast = ["--extractor", "none", *cli_store]
    assert run_json(capsys, "ingest", str(docs), *fast)["files_ingested"] == 3
    (docs / "emptied.txt").write_text("")
    (docs / "garbled.txt").write_bytes("caf\xe9 now latin-1".encode("latin-1"))
    # without --sync: the old passages stay, and the summary says so
    plain = run_json(capsys, "ingest", str(docs), *fast)
    reasons = dict(plain["skipped"])  # type: ignore[index]
    assert "--sync removes them" in reasons[source_key(docs / "emptied.txt")]
    assert "--sync removes them" in reasons[source_key(docs / "garbled.txt")]
    assert len(_sources(capsys, cli_store)) == 3
    synced = run_json(capsys, "ingest", str(docs), "--sync", *fast)
    assert synced["files_cleared"] == 2 and synced["passages_deleted"] == 2  # type: ignore[index]
    assert sorted(s for s, _ in synced["cleared"]) == [  # type: ignore[index]
        source_key(docs / "emptied.txt"),
        source_key(docs / "garbled.txt"),
    ]
    assert _sources(capsys, cli_store) == [source_key(docs / "keep.txt")]
    code, out, _ = run_cli(capsys, "ingest", str(docs), "--sync", *fast)  # again: nothing left to clear
    assert code == 0 and "0 emptied or unreadable" in out


def test_tenants(tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "notes.txt").write_text(f"text of tenant {folder.name}")
    fast = ["--extractor", "none", *cli_store]
    made = _api_store(cli_store, partition_key_field="tenant")
    made.add_documents([Document(page_content="api text", metadata={"tenant": "c"})])
    made.close()
    code, _, err = run_cli(capsys, "ingest", str(a), *fast)
    assert code == 2 and "partitioned by the metadata field 'tenant'" in err and "--tenant" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert run_json(capsys, "ingest", str(a), "--tenant", "a", *fast)["files_ingested"] == 1
    assert run_json(capsys, "ingest", str(b), "--tenant", "b", *fast)["files_ingested"] == 1
    assert _sources(capsys, cli_store, "--tenant", "a") == [source_key(a / "notes.txt")]
    assert _sources(capsys, cli_store, "--tenant", "b") == [source_key(b / "notes.txt")]
    code, _, err = run_cli(capsys, "query", "text", *cli_store)
    assert code == 2 and "--all-tenants" in err
    assert len(_sources(capsys, cli_store, "--all-tenants")) == 3
    # --sync of tenant a never deletes tenant b's files, even under the same root
    (a / "notes.txt").unlink()
    synced = run_json(capsys, "ingest", str(tmp_path), "--sync", "--exclude", "b/", "--tenant", "a", *fast)
    assert synced["deleted"] == [source_key(a / "notes.txt")]  # type: ignore[index]
    assert _sources(capsys, cli_store, "--tenant", "b") == [source_key(b / "notes.txt")]
    assert _sources(capsys, cli_store, "--tenant", "a") == []


def test_tenant_on_a_store_without_partition_key(
    tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.txt").write_text("some text")
    fast = ["--extractor", "none", *cli_store]
    assert run_json(capsys, "ingest", str(tmp_path / "x.txt"), *fast)["files_ingested"] == 1
    code, _, err = run_cli(capsys, "ingest", str(tmp_path / "x.txt"), "--tenant", "a", *fast)
    assert code == 2 and "has no partition key" in err


def test_api_document_cannot_take_over_a_cli_chunk(
    tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("the file's own passage")
    run_json(capsys, "ingest", str(tmp_path / "a.txt"), "--extractor", "none", *cli_store)
    rows = run_json(capsys, "query", "passage", "--mode", "naive", *cli_store)
    cli_id = rows[0]["id"]  # type: ignore[index]
    store = _api_store(cli_store)
    try:
        intruder = Document(id=cli_id, page_content="hijacked", metadata={"source": "api/other.txt"})
        with pytest.raises(InvalidIdError, match="chunk id"):
            store.add_documents([intruder], strict=True)
        with pytest.raises(InvalidIdError, match="chunk id"):
            store.upsert_documents([intruder], strict=True)
        report = store.upsert_documents([intruder])
        assert report.documents_skipped == 1 and report.ingested.passages_added == 0
        store.add_documents([intruder])  # non-strict: skipped and counted, never written
    finally:
        store.close()
    rows = run_json(capsys, "query", "passage", "--mode", "naive", *cli_store)
    assert [(r["id"], r["text"], r["source"]) for r in rows] == [  # type: ignore[index]
        (cli_id, "the file's own passage", source_key(tmp_path / "a.txt"))
    ]


def test_graph_path_inside_a_root_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("a user's file")
    monkeypatch.chdir(tmp_path)
    store = ["--uri", str(tmp_path / "m.db"), "--embeddings", "fake"]
    for graph_path in (str(docs), str(docs / "index"), str(tmp_path), "."):
        code, _, err = run_cli(capsys, "ingest", str(docs), "--graph-path", graph_path, "--extractor", "none", *store)
        assert code == 2 and "--graph-path" in err, graph_path
    code, _, err = run_cli(capsys, "query", "x", "--graph-path", str(tmp_path), *store)
    assert code == 2 and "working folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"] and [p.name for p in docs.iterdir()] == ["a.txt"]


def test_links_and_escape_sequences(tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("a secret outside the folder")
    (docs / "leak.txt").symlink_to(outside / "secret.txt")
    (docs / "title\x1b]0;owned\x07.txt").write_text("red \x1b[31m alert \x1b[2J cleared \x9b screen")
    (tmp_path / "docs_link").symlink_to(docs, target_is_directory=True)
    fast = ["--extractor", "none", *cli_store]
    code, out, err = run_cli(capsys, "ingest", str(docs), str(tmp_path / "docs_link"), *fast)
    assert code == 0, err
    assert "files: 1 found, 1 new" in out and "outside the given folders" in out
    code, out, err = run_cli(capsys, "query", "alert", "--mode", "naive", *cli_store)
    assert code == 0 and "\\x1b[31m" in out and "\\x1b]0;owned\\x07.txt" in out and "\\x9b" in out
    for line in (out + err).splitlines():
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in line), repr(line)
    assert _sources(capsys, cli_store) == [source_key(docs / "title\x1b]0;owned\x07.txt")]
    # what an earlier version ingested through the link that leaves the folder goes with --sync
    store = _api_store(cli_store)
    try:
        leaked = source_key(docs / "leak.txt")
        store.add_documents(
            [Document(page_content="a secret outside the folder", metadata={"source": leaked, "source_id": leaked})]
        )
    finally:
        store.close()
    assert leaked in _sources(capsys, cli_store)
    synced = run_json(capsys, "ingest", str(docs), "--sync", *fast)
    assert synced["deleted"] == [leaked] and synced["outside_links"] == [leaked]  # type: ignore[index]
    assert _sources(capsys, cli_store) == [source_key(docs / "title\x1b]0;owned\x07.txt")]


def test_tenant_on_a_new_store_creates_it_partitioned(
    tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.txt").write_text("some text of tenant a")
    fast = ["--extractor", "none", *cli_store]
    summary = run_json(capsys, "ingest", str(tmp_path / "x.txt"), "--tenant", "a", *fast)
    assert summary["files_ingested"] == 1 and summary["tenant"] == "a"  # type: ignore[index]
    store = _api_store(cli_store)
    try:
        from langchain_graphrag_milvus.cli.tenancy import existing_partition_key

        assert existing_partition_key(store) == "tenant"
    finally:
        store.close()
    code, _, err = run_cli(capsys, "ingest", str(tmp_path / "x.txt"), *fast)
    assert code == 2 and "--tenant" in err
    assert _sources(capsys, cli_store, "--tenant", "b") == []
    assert _sources(capsys, cli_store, "--tenant", "a") == [source_key(tmp_path / "x.txt")]


def test_a_pdf_read_with_warnings_is_ingested_and_named_once(
    tmp_path: Path, cli_store: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """pypdf's warnings for a PDF it reads anyway: one summary entry naming the file, its passages stored."""
    pytest.importorskip("pypdf")
    from ..unit.test_pdf_log import broken_pdf

    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = broken_pdf(tmp_path / "nano")
    (docs / "broken.pdf").write_bytes(pdf.read_bytes())
    summary = run_json(capsys, "ingest", str(docs), "--extractor", "none", *cli_store)
    warned = dict(summary["read_with_warnings"])  # type: ignore[index]
    assert list(warned) == [source_key(docs / "broken.pdf")]
    assert "from pypdf (read anyway), first: " in warned[source_key(docs / "broken.pdf")]
    assert summary["skipped"] == [] and summary["files_ingested"] == 1  # type: ignore[index]
    assert _sources(capsys, cli_store) == [source_key(docs / "broken.pdf")]
