"""Inputs that got raw errors or wrong results (issue 23), without Milvus.

The extraction cache (foreign, tampered and truncated files; extractor identity), JSONL
lines that cannot be read, merge targets that are too long, GraphML with control
characters, vectors sorted into usable and unusable, and the canonical identity of
passages (NFC, numbers by value).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus.errors import (
    EmbeddingDimensionError,
    ExtractionCacheError,
    InvalidEmbeddingError,
    MalformedRecordError,
)
from langchain_graphrag_milvus.ingest.extraction_cache import TripletCache, extractor_name
from langchain_graphrag_milvus.ingest.identity import default_passage_id
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, check_entity_name, iter_jsonl
from langchain_graphrag_milvus.milvus.vectors import partition_vectors

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------- extraction cache


def test_foreign_and_tampered_cache_files_raise_typed_errors_naming_the_file(tmp_path: Path) -> None:
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not a database at all " * 100)
    with pytest.raises(ExtractionCacheError, match="notes.txt"):
        TripletCache(text_file)
    assert text_file.read_text().startswith("not a database")  # untouched

    foreign = tmp_path / "app.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    conn.close()
    with pytest.raises(ExtractionCacheError, match=r"app.sqlite.*something else"):
        TripletCache(foreign)
    with sqlite3.connect(foreign) as conn:  # nothing was added to the other program's file
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert tables == {"users"}

    same_name = tmp_path / "other.sqlite"  # a "triplets" table of another shape
    with sqlite3.connect(same_name) as conn:
        conn.execute("CREATE TABLE triplets (id INTEGER, s TEXT, p TEXT, o TEXT)")
    conn.close()
    with pytest.raises(ExtractionCacheError, match="other.sqlite"):
        TripletCache(same_name)

    good = tmp_path / "cache.sqlite"
    cache = TripletCache(good)
    key = TripletCache.key("x", "a passage")
    cache.put_many({key: [["a", "b", "c"]]})
    assert cache.get_many([key]) == {key: [["a", "b", "c"]]}
    with sqlite3.connect(good) as conn:  # tamper with the stored value
        conn.execute("UPDATE triplets SET value = ? WHERE key = ?", ("{not json", key))
    conn.close()
    with pytest.raises(ExtractionCacheError, match=r"cache.sqlite.*not valid JSON"):
        TripletCache(good).get_many([key])
    with sqlite3.connect(good) as conn:
        conn.execute("UPDATE triplets SET value = ? WHERE key = ?", ('{"a": 1}', key))
    conn.close()
    with pytest.raises(ExtractionCacheError, match="not a list"):
        TripletCache(good).get_many([key])

    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(good.read_bytes()[:100])
    with pytest.raises(ExtractionCacheError, match="truncated.sqlite"):
        TripletCache(truncated).get_many([key])


def test_a_cache_written_by_an_earlier_version_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    key = TripletCache.key("graph_triplet_extraction[gpt-4o-mini]", "text")
    with sqlite3.connect(path) as conn:  # the layout before the format marker
        conn.execute("CREATE TABLE triplets (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO triplets VALUES (?, ?)", (key, '[["a", "b", "c"]]'))
    conn.close()
    assert TripletCache(path).get_many([key]) == {key: [["a", "b", "c"]]}


def test_extractor_identity() -> None:
    first = RunnableLambda(lambda text: {"triplets": [["A", "is", "first"]]})
    second = RunnableLambda(lambda text: {"triplets": [["B", "is", "second"]]})
    assert extractor_name(first) != extractor_name(second)

    def make(value: str) -> RunnableLambda:
        return RunnableLambda(lambda text: {"triplets": [[value, "is", "x"]]})

    assert extractor_name(make("a")) != extractor_name(make("b"))  # closures differ
    assert extractor_name(make("a")) == extractor_name(make("a"))
    assert extractor_name(first | second) != extractor_name(second | first)
    assert extractor_name(first.with_config(run_name="mine-v1")) == "mine-v1"  # a chosen name is trusted


_PROBE = """
import sys
sys.path.insert(0, {root!r})
from langchain_core.runnables import RunnableLambda
from langchain_graphrag_milvus.ingest.extraction_cache import extractor_name
print(extractor_name(RunnableLambda(lambda text: {{"triplets": [["A", "is", {value!r}]]}})))
"""


def test_extractor_identity_is_stable_across_processes() -> None:
    def probe(value: str, seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        code = _PROBE.format(root=str(ROOT), value=value)
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout

    assert probe("x", "1") == probe("x", "2") != probe("y", "1")


# ---------------------------------------------------------------------------- JSONL lines


def test_bad_jsonl_lines_are_named_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    lines = [
        b'{"id": "ok1", "text": "fine"}',
        b'{"id": "bad", "text": "caf\xe9"}',  # latin-1, not UTF-8
        b"[" * 100_000 + b"]" * 100_000,  # nested beyond the parser's recursion limit
        b'{"id": ' + b"9" * 5_000 + b', "text": "big id"}',  # more digits than int() accepts
        b"{not json",
        b'{"id": "ok2", "text": "fine too"}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    problems: list[Problem] = []
    parsed = list(iter_jsonl(path, problems))
    assert [n for n, _ in parsed] == [1, 6]
    assert [p.record_id for p in problems] == ["line 2", "line 3", "line 4", "line 5"]
    assert "UTF-8" in problems[0].reason and "nested" in problems[1].reason and "digits" in problems[2].reason
    with pytest.raises(MalformedRecordError, match=r"records.jsonl:2: not valid UTF-8"):
        list(iter_jsonl(path))


# ---------------------------------------------------------------------------- merge target


def test_merge_target_name_is_checked() -> None:
    assert check_entity_name("  Leonhard   Euler ", "into") == "Leonhard Euler"
    for bad, message in (
        ("x" * 70_000, "longer than 4096"),
        ("", "non-empty"),
        (7, "non-empty"),
        ("a\ud800", "Unicode"),
    ):
        with pytest.raises(MalformedRecordError, match=message):
            check_entity_name(bad, "into")


# ---------------------------------------------------------------------------- GraphML


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=40))
def test_graphml_is_valid_xml_whatever_the_text(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    nx = pytest.importorskip("networkx")
    from langchain_graphrag_milvus.subgraph import Subgraph, SubgraphEdge, SubgraphNode

    graph = Subgraph(
        nodes=[
            SubgraphNode(id=f"passage:{text}", label=text, kind="passage", data={"text": text, f"k{text[:3]}": text}),
            SubgraphNode(id="entity:e", label="e", kind="entity"),
        ],
        edges=[SubgraphEdge(source="entity:e", target=f"passage:{text}", kind="supports")],
        query=text,
    )
    path = tmp_path_factory.mktemp("gml") / "g.graphml"
    graph.write_graphml(path)
    ET.parse(path)
    loaded = nx.read_graphml(path)
    assert loaded.number_of_nodes() == 2 and loaded.number_of_edges() == 1


# ---------------------------------------------------------------------------- vectors


def test_partition_vectors_sorts_bad_vectors_out() -> None:
    texts = ["good", "nan", "inf", "zero", "words", "good2"]
    vectors = [[1.0, 0.0], [float("nan"), 1.0], [float("inf"), 0.0], [0.0, 0.0], "ab", [0.0, 1.0]]
    good, bad = partition_vectors(texts, vectors, dim=None, cosine=True)
    assert list(good) == ["good", "good2"] and sorted(bad) == ["inf", "nan", "words", "zero"]
    with pytest.raises(InvalidEmbeddingError):
        partition_vectors(texts, vectors[:2], dim=None, cosine=True)  # a wrong count is the model's fault
    with pytest.raises(EmbeddingDimensionError):
        partition_vectors(["a", "b"], [[1.0, 0.0], [float("nan")]], dim=3, cosine=True)


# ---------------------------------------------------------------------------- identity


def _record(text: str, metadata: dict) -> PassageRecord:
    return PassageRecord(id="p", text=text, triplets=[], metadata=metadata)


def test_one_passage_for_nfc_and_nfd_and_for_1_and_1_0() -> None:
    nfc, nfd = "Caf\u00e9 in Z\u00fcrich", "Cafe\u0301 in Zu\u0308rich"
    assert nfc != nfd
    assert default_passage_id(nfc) == default_passage_id(nfd)
    assert default_passage_id(nfc, {"page": 1}) == default_passage_id(nfd, {"page": 1.0})
    assert default_passage_id(nfc, {"where": "Z\u00fcrich"}) == default_passage_id(nfc, {"where": "Zu\u0308rich"})
    assert default_passage_id(nfc, {"n": [1, {"x": 2.0}]}) == default_passage_id(nfc, {"n": [1.0, {"x": 2}]})
    assert _record(nfc, {"page": 1}).content_hash == _record(nfd, {"page": 1.0}).content_hash
    # still different: other values, true vs 1, "1" vs 1, 1.5 vs 1, compatibility forms
    for a, b in (({"page": 1}, {"page": 2}), ({"x": True}, {"x": 1}), ({"x": "1"}, {"x": 1}), ({"x": 1.5}, {"x": 1})):
        assert default_passage_id(nfc, a) != default_passage_id(nfc, b), (a, b)
    assert default_passage_id("\ufb01le") != default_passage_id("file")
    assert default_passage_id("plain text") == default_passage_id("plain text", {})  # ids of earlier versions


@given(st.text(min_size=1, max_size=30), st.integers(min_value=-(2**52), max_value=2**52))
def test_identity_is_canonical(text: str, number: int) -> None:
    import unicodedata

    nfd = unicodedata.normalize("NFD", text)
    assert default_passage_id(text, {"n": number}) == default_passage_id(nfd, {"n": float(number)})
    assert json.loads(json.dumps({"n": number}))["n"] == number
