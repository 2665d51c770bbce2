"""Edits pay for what changed (issue 24, item 4), by counted embedding and extraction calls.

A file of several chunks is ingested, one line is appended, and it is ingested again: only
the changed chunk is embedded (its passage text) and extracted, through the CLI and through
``store.upsert_documents(docs, splitter=...)`` with metadata that changes with every edit of
the file (a fingerprint, a modification time). The store then equals a clean ingest of the
new version, row by row. The real offline (spaCy) extractor is counted where the ingest calls
it (``OfflineTripletExtractor.extract_many``), the embeddings by a counting wrapper.

The CLI keeps extractions in a sqlite file beside the store (a Lite ``.db``) or in the user's
cache folder (a server): a later run, which has a new store object as a new process has,
extracts nothing extracted before; one case runs the CLI in separate processes. The cache
file is the package's own: a file it did not create is refused, never overwritten.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.cli.main import main
from langchain_graphrag_milvus.cli.triplet_cache import default_cache_path
from langchain_graphrag_milvus.errors import ExtractionCacheError
from langchain_graphrag_milvus.milvus.fingerprint import PROBE_TEXT

from ..conftest import backend_uri
from ..fakes import LexicalEmbeddings
from ..faults import diff, snapshot
from ..graph_checks import graph_signature

pytest.importorskip("spacy", reason="the offline extra is not installed")
pytest.importorskip("langchain_community")
pytest.importorskip("pathspec")

PARAGRAPHS = [
    "Ada Lovelace worked with Charles Babbage in London. She wrote an algorithm for his Analytical Engine.",
    "Charles Babbage designed the Difference Engine. The Science Museum in London later built it.",
    "Luigi Menabrea described the Analytical Engine in French. Ada Lovelace translated his article.",
    "Alan Turing studied at King's College in Cambridge. He later worked at Bletchley Park.",
    "Grace Hopper worked on the Harvard Mark I. She later led the team that developed COBOL.",
    "John von Neumann worked at Princeton. He described the stored-program computer for the EDVAC.",
]
VERSION_1 = "\n\n".join(PARAGRAPHS) + "\n"
APPENDED = "Tim Berners-Lee later worked at CERN in Geneva."
VERSION_2 = VERSION_1 + APPENDED + "\n"


class CountingEmbeddings(LexicalEmbeddings):
    """The lexical embeddings, recording every text they embed but the fingerprint's probe.

    The probe (one text per store object, :mod:`langchain_graphrag_milvus.milvus.fingerprint`) is
    what opening a store costs, not what an edit costs: it is left out explicitly.
    """

    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += [t for t in texts if t != PROBE_TEXT]
        return super().embed_documents(texts)


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the real offline extractor is called on (cached ones never reach it)."""
    from langchain_graphrag_milvus.ingest.offline import OfflineTripletExtractor

    seen: list[str] = []
    real = OfflineTripletExtractor.extract_many

    def counting(self: Any, items: Any) -> Any:
        for item in items:
            seen.append(
                item if isinstance(item, str) else item["text"] if isinstance(item, dict) else item.page_content
            )
        return real(self, items)

    monkeypatch.setattr(OfflineTripletExtractor, "extract_many", counting)
    return seen


@pytest.fixture
def embeddings(monkeypatch: pytest.MonkeyPatch) -> CountingEmbeddings:
    """The embeddings every CLI command of the test gets (``--embeddings`` is ignored)."""
    counting = CountingEmbeddings()
    monkeypatch.setattr("langchain_graphrag_milvus.cli.common.make_embeddings", lambda name: counting)
    return counting


@pytest.fixture
def cli_store(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[list[str]]:
    """Store options of a fresh prefix; on the server its collections are dropped afterwards."""
    uri = backend_uri(request, backend, tmp_path)
    prefix = f"ec{uuid.uuid4().hex[:8]}"
    yield ["--uri", uri, "--prefix", prefix]
    if backend == "server":
        from pymilvus import MilvusClient

        client = MilvusClient(uri)
        for kind in ("entities", "relations", "passages"):
            if client.has_collection(f"{prefix}_{kind}"):
                client.drop_collection(f"{prefix}_{kind}")
        client.close()


def _ingest(capsys: pytest.CaptureFixture[str], path: Path, store: list[str], *extra: str) -> dict[str, Any]:
    code = main(
        ["ingest", str(path), *store, "--extractor", "offline", "--chunk-size", "150", "--chunk-overlap", "0"]
        + [*extra, "--json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


def _stored_texts(store: list[str]) -> set[str]:
    with _api_store(store) as api:
        api.check_open()
        rows = api.client.query(api.collection_name("passages"), filter='pk != ""', output_fields=["text"], limit=1000)
    return {str(r["text"]) for r in rows}


class _api_store:  # noqa: N801 - a context manager used like a function
    def __init__(self, options: list[str]) -> None:
        self.store = MilvusGraphStore(
            LexicalEmbeddings(64), uri=options[1], collection_prefix=options[3], consistency_level="Strong"
        )

    def __enter__(self) -> MilvusGraphStore:
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def test_cli_append_embeds_and_extracts_only_the_changed_chunk(
    tmp_path: Path,
    cli_store: list[str],
    embeddings: CountingEmbeddings,
    extracted: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = tmp_path / "computing.txt"
    doc.write_text(VERSION_1)
    first = _ingest(capsys, doc, cli_store)
    old = _stored_texts(cli_store)
    assert len(old) >= 5 and set(extracted) == old and first["extraction_calls"] == len(old)
    embeddings.texts.clear()
    extracted.clear()

    doc.write_text(VERSION_2)
    second = _ingest(capsys, doc, cli_store)
    new = _stored_texts(cli_store)
    changed = new - old
    assert changed and len(changed) < len(new) // 2, (old, new)
    assert sorted(t for t in embeddings.texts if t in new | old) == sorted(changed)  # no unchanged chunk embedded
    assert sorted(extracted) == sorted(changed)  # nor extracted
    assert second["extraction_calls"] == len(changed)
    assert second["passages_metadata_updated"] == len(new & old)  # re-stamped with the new file fingerprint

    embeddings.texts.clear()
    extracted.clear()
    third = _ingest(capsys, doc, cli_store)  # unchanged file: skipped by its fingerprint
    assert third["files_unchanged"] == 1 and not embeddings.texts and not extracted


def test_cli_cache_outlives_the_run(
    tmp_path: Path,
    backend: str,
    cli_store: list[str],
    embeddings: CountingEmbeddings,
    extracted: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each ``main`` builds a new store and extractor, as a new process does: only the cache file remembers."""
    doc = tmp_path / "computing.txt"
    doc.write_text(VERSION_1)
    _ingest(capsys, doc, cli_store)
    cache = default_cache_path(cli_store[1], cli_store[3])
    assert cache.is_file()
    if backend == "lite":
        assert cache.parent == Path(cli_store[1]).absolute().parent
    else:
        assert Path(os.environ["XDG_CACHE_HOME"]) in cache.parents
    v1 = _stored_texts(cli_store)
    doc.write_text(VERSION_2)
    _ingest(capsys, doc, cli_store)
    added = _stored_texts(cli_store) - v1
    extracted.clear()
    doc.write_text(VERSION_1)  # the edit undone: the old last chunk is back
    report = _ingest(capsys, doc, cli_store)
    assert _stored_texts(cli_store) == v1
    assert extracted == [] and report["extraction_calls"] == 0 and report["extraction_cached"] >= 1, added
    extracted.clear()
    doc.write_text(VERSION_2)
    report = _ingest(capsys, doc, cli_store, "--no-extraction-cache")  # memory only: extracted again
    assert sorted(extracted) == sorted(added) and report["extraction_calls"] == len(added)


def test_cli_cache_option_and_ownership(
    tmp_path: Path, cli_store: list[str], embeddings: CountingEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "computing.txt"
    doc.write_text(VERSION_1)
    chosen = tmp_path / "caches" / "mine.sqlite"
    _ingest(capsys, doc, cli_store, "--extraction-cache", str(chosen))
    assert chosen.is_file() and not default_cache_path(cli_store[1], cli_store[3]).exists()

    foreign = tmp_path / "notes.sqlite"
    foreign.write_text("my own notes, not a cache\n")
    doc.write_text(VERSION_2)
    code = main(["ingest", str(doc), *cli_store, "--extractor", "offline", "--extraction-cache", str(foreign)])
    _, err = capsys.readouterr()
    assert code != 0 and "notes.sqlite" in err
    assert foreign.read_text() == "my own notes, not a cache\n"  # refused, never overwritten
    with pytest.raises(ExtractionCacheError):
        MilvusGraphStore(LexicalEmbeddings(8), uri=str(tmp_path / "x.db"), extraction_cache=tmp_path)  # a folder


def test_cli_separate_processes_extract_only_the_changed_chunk(tmp_path: Path) -> None:
    """Real processes on Milvus Lite: the second run after an edit extracts the new chunk, the third nothing."""
    doc = tmp_path / "computing.txt"
    db = tmp_path / "store.db"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    code = "import sys; from langchain_graphrag_milvus.cli.main import main; sys.exit(main(sys.argv[1:]))"

    def run() -> dict[str, Any]:
        argv = [sys.executable, "-c", code, "ingest", str(doc), "--uri", str(db), "--embeddings", "fake"]
        argv += ["--extractor", "offline", "--chunk-size", "150", "--chunk-overlap", "0", "--json"]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    doc.write_text(VERSION_1)
    first = run()
    doc.write_text(VERSION_2)
    second = run()
    assert second["extraction_calls"] == second["passages_added"] >= 1
    assert second["passages_metadata_updated"] == first["passages_added"] - second["passages_deleted"]
    doc.write_text(VERSION_1)
    third = run()
    assert third["extraction_calls"] == 0 and third["extraction_cached"] == third["passages_added"] >= 1
    assert (db.parent / (db.name + ".triplets.sqlite")).is_file()


def _file_docs(text: str, version: int) -> list[Document]:
    """One document per file, as a loader gives it, with metadata that changes with each edit."""
    return [Document(page_content=text, metadata={"source": "computing.txt", "modified": version})]


def _splitter() -> Any:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=150, chunk_overlap=0)


def test_upsert_with_splitter_pays_only_for_the_changed_chunk(make_store, extracted: list[str]) -> None:
    counting = CountingEmbeddings()
    store = make_store(counting, extractor="offline", consistency_level="Strong")
    store.upsert_documents(_file_docs(VERSION_1, 1), splitter=_splitter())
    old = {d.page_content for d in _splitter().split_documents(_file_docs(VERSION_1, 1))}
    assert set(extracted) == old
    # a new store object on the same collections (a new process: no extraction cached in memory)
    again = make_store(counting, extractor="offline", prefix=store.collection_prefix, consistency_level="Strong")
    counting.texts.clear()
    extracted.clear()
    report = again.upsert_documents(_file_docs(VERSION_2, 2), splitter=_splitter())
    new = {d.page_content for d in _splitter().split_documents(_file_docs(VERSION_2, 2))}
    changed = new - old
    assert changed and len(changed) < len(new) // 2
    assert sorted(t for t in counting.texts if t in new | old) == sorted(changed)
    assert sorted(extracted) == sorted(changed)
    assert report.ingested.passages_metadata_updated == len(new & old)

    clean = make_store(LexicalEmbeddings(64), extractor="offline", consistency_level="Strong")
    clean.upsert_documents(_file_docs(VERSION_2, 2), splitter=_splitter())
    assert diff(snapshot(again), snapshot(clean)) == ""  # exactly the new version, vectors included
    assert graph_signature(again.rebuild_graph()) == graph_signature(clean.rebuild_graph())


def test_what_is_reused_follows_the_extractor_inputs(make_store, extracted: list[str]) -> None:
    """A new title is read by the extractor: re-extracted, not re-embedded; given triplets replace the links."""
    counting = CountingEmbeddings()
    store = make_store(counting, extractor="offline", consistency_level="Strong")
    text = "Ada Lovelace worked with Charles Babbage in London."
    store.upsert_documents([Document(id="a", page_content=text, metadata={"title": "Notes"})])
    counting.texts.clear()
    extracted.clear()
    report = store.upsert_documents([Document(id="a", page_content=text, metadata={"title": "Engines"})])
    assert extracted == [text] and text not in counting.texts
    assert report.ingested.passages_updated == 1 and report.ingested.passages_metadata_updated == 0

    extracted.clear()
    given = Document(
        id="a", page_content=text, metadata={"title": "Engines", "v": 2, "triplets": [["Ada", "met", "Mary"]]}
    )
    store.upsert_documents([given])
    assert extracted == [] and text not in counting.texts
    rows = store.client.query(store.collection_name("relations"), filter='pk != ""', output_fields=["text"], limit=50)
    assert [r["text"] for r in rows] == ["Ada met Mary"]  # the extracted relations were replaced


def test_upsert_after_an_insertion_above_reuses_the_moved_chunks(make_store, extracted: list[str], tmp_path) -> None:
    """A paragraph inserted at the top moves every chunk to the next positional id: none is embedded again.

    Their vectors (and those of the relations and entities the move unlinks and links again)
    are read back from Milvus; their triplets come from the extraction cache file. The store
    then equals a clean ingest of the new version.
    """
    counting = CountingEmbeddings()
    cache = tmp_path / "triplets.sqlite"
    store = make_store(counting, extractor="offline", extraction_cache=cache, consistency_level="Strong")
    store.upsert_documents(_file_docs(VERSION_1, 1), splitter=_splitter())
    inserted = "Konrad Zuse built the Z3 computer in Berlin in 1941. It was the first working programmable machine."
    version_2 = inserted + "\n\n" + VERSION_1
    again = make_store(
        counting,
        extractor="offline",
        extraction_cache=cache,
        prefix=store.collection_prefix,
        consistency_level="Strong",
    )
    counting.texts.clear()
    extracted.clear()
    report = again.upsert_documents(_file_docs(version_2, 2), splitter=_splitter())
    new = {d.page_content for d in _splitter().split_documents(_file_docs(version_2, 2))}
    assert report.ingested.passages_updated == len(PARAGRAPHS) and report.ingested.passages_added == 1
    assert [t for t in counting.texts if t in new] == [inserted] and extracted == [inserted]
    clean_embeddings = CountingEmbeddings()
    clean = make_store(clean_embeddings, extractor="offline", consistency_level="Strong")
    clean.upsert_documents(_file_docs(version_2, 2), splitter=_splitter())
    assert len(counting.texts) < len(clean_embeddings.texts) // 3  # entity and relation names reused too
    assert diff(snapshot(again), snapshot(clean)) == ""
    assert graph_signature(again.rebuild_graph()) == graph_signature(clean.rebuild_graph())
