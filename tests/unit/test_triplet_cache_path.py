"""Where ``ingest`` keeps its extraction cache, and which files it refuses to use."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import pytest

from langchain_graphrag_milvus.cli.triplet_cache import (
    CACHE_SUFFIX,
    add_cache_arguments,
    default_cache_path,
    extraction_cache_path,
)
from langchain_graphrag_milvus.errors import ExtractionCacheError
from langchain_graphrag_milvus.ingest.extraction_cache import TripletCache


def _args(*argv: str, uri: str = "./graphrag_milvus.db", prefix: str = "graphrag") -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_cache_arguments(parser)
    args = parser.parse_args(list(argv))
    args.uri, args.prefix = uri, prefix
    return args


def test_a_lite_store_keeps_its_cache_beside_the_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = default_cache_path("./graphrag_milvus.db", "graphrag")
    assert path == tmp_path / ("graphrag_milvus.db" + CACHE_SUFFIX)
    assert default_cache_path("./graphrag_milvus.db", "other") == path  # one file per .db (keys are per extractor)


def test_a_server_store_has_one_file_per_uri_database_and_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    one = default_cache_path("http://localhost:19530", "graphrag")
    assert one.parent == tmp_path / "xdg" / "langchain-graphrag-milvus" and one.suffix == ".sqlite"
    others = {
        default_cache_path("http://localhost:19531", "graphrag"),
        default_cache_path("http://localhost:19530", "docs"),
        default_cache_path("http://localhost:19530", "graphrag", "db2"),
    }
    assert one not in others and len(others) == 3
    assert default_cache_path("http://localhost:19530", "graphrag") == one
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored, as the XDG spec says
    assert default_cache_path("http://localhost:19530", "graphrag").parent == (
        Path.home() / ".cache" / "langchain-graphrag-milvus"
    )


def test_the_options(tmp_path: Path) -> None:
    extractor = object()
    assert extraction_cache_path(_args(), None) is None  # nothing to cache without an extractor
    assert extraction_cache_path(_args("--no-extraction-cache"), extractor) is None
    assert extraction_cache_path(_args("--extraction-cache", str(tmp_path / "t.sqlite")), extractor) == (
        tmp_path / "t.sqlite"
    )
    assert extraction_cache_path(_args(uri=str(tmp_path / "s.db")), extractor) == tmp_path / "s.db.triplets.sqlite"
    with pytest.raises(SystemExit):
        _args("--no-extraction-cache", "--extraction-cache", "x.sqlite")


def test_files_the_package_did_not_create_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database\n")
    with pytest.raises(ExtractionCacheError, match="notes.sqlite"):
        TripletCache(text)
    assert text.read_text() == "not a database\n"
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(ExtractionCacheError, match="something else"):
        TripletCache(other)
    with pytest.raises(ExtractionCacheError, match="not a regular file"):
        TripletCache(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ExtractionCacheError, match="folder cannot be created"):
        TripletCache(blocker / "sub" / "cache.sqlite")
    ours = TripletCache(tmp_path / "ours.sqlite")
    ours.put_many({"k": [["a", "b", "c"]]})
    assert TripletCache(tmp_path / "ours.sqlite").get_many(["k"]) == {"k": [["a", "b", "c"]]}
