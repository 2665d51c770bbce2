"""Normalisation, record validation and expression escaping (no Milvus)."""

from __future__ import annotations

import json

import pytest

from langchain_graphrag_milvus import MalformedRecordError, MalformedTripletError, Problem
from langchain_graphrag_milvus.errors import InvalidFilterError
from langchain_graphrag_milvus.ingest.records import iter_jsonl, parse_triplets, record_from_mapping
from langchain_graphrag_milvus.milvus.expr import and_all, eq_filter, field_name, in_list, literal
from langchain_graphrag_milvus.text.names import clean_text, entity_id, entity_key, relation_id, relation_text

from ..conftest import DATA_DIR


def test_entity_normalisation_merges_surface_variants() -> None:
    assert entity_key("leonhard Euler") == entity_key("Leonhard  Euler") == "leonhard euler"
    assert entity_key("ＬＥＯＮＨＡＲＤ\u00a0Euler") == "leonhard euler"  # NFKC: full width, nbsp
    assert entity_key("Bernoulli’s principle") == entity_key("Bernoulli's principle")
    assert entity_id("leonhard Euler") == entity_id("LEONHARD EULER")
    assert entity_id("Euler") != entity_id("Leonhard Euler")
    assert clean_text("  Leonhard \n Euler ") == "Leonhard Euler"  # display form keeps case


def test_relation_ids_are_deterministic_and_text_is_the_seeds() -> None:
    assert relation_id("Leonhard Euler", "was born in", "Basel") == relation_id(
        "leonhard Euler", "Was born in", "basel"
    )
    assert relation_id("a", "b", "c") != relation_id("c", "b", "a")
    assert relation_text("Leonhard Euler", "was born in", "Basel") == "Leonhard Euler was born in Basel"
    assert len(relation_id("a", "b", "c")) == 16 and int(relation_id("a", "b", "c"), 16) >= 0


@pytest.mark.parametrize(
    ("triplet", "reason"),
    [
        (["a", "b"], "wrong arity"),
        (["a", "b", "c", "d"], "wrong arity"),
        (["a", "", "c"], "empty part"),
        (["a", "   ", "c"], "empty part"),
        (["a", 3, "c"], "non-string"),
        (["a", None, "c"], "non-string"),
        ("a b c", "not a list"),
        (None, "not a list"),
    ],
)
def test_malformed_triplets_are_skipped_or_raise_in_strict_mode(triplet, reason) -> None:
    problems: list[Problem] = []
    good = parse_triplets([["x", "y", "z"], triplet], "rec-1", strict=False, problems=problems)
    assert [tuple(t) for t in good] == [("x", "y", "z")]
    assert len(problems) == 1 and reason in problems[0].reason and problems[0].triplet_index == 1
    assert "rec-1" in str(problems[0])
    with pytest.raises(MalformedTripletError, match=r"record 'rec-1', triplet 1: .*" + reason):
        parse_triplets([["x", "y", "z"], triplet], "rec-1", strict=True, problems=[])


def test_triplets_field_that_is_not_a_list() -> None:
    problems: list[Problem] = []
    assert parse_triplets("oops", "r", strict=False, problems=problems) == []
    assert problems and "must be a list" in problems[0].reason
    with pytest.raises(MalformedTripletError):
        parse_triplets(42, "r", strict=True, problems=[])


def test_record_shapes() -> None:
    seed = record_from_mapping(
        {"passage": "Euler was born in Basel.", "triplets": [["Euler", "born in", "Basel"]]},
        position=0,
        strict=False,
        problems=[],
    )
    assert seed.text == "Euler was born in Basel." and seed.metadata == {} and len(seed.id) == 16
    musique = record_from_mapping(
        {"id": "m-1", "title": "Basel", "text": "A city.", "triplets": [], "lang": "en"},
        position=0,
        strict=False,
        problems=[],
    )
    assert musique.id == "m-1" and musique.text == "Basel\nA city."
    assert musique.metadata == {"title": "Basel", "lang": "en"}
    same = record_from_mapping({"passage": "Euler was born in Basel."}, position=3, strict=False, problems=[])
    assert same.id == seed.id  # id derived from the text: stable across runs


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"triplets": []}, "text is missing"),
        ({"passage": "   "}, "text is missing"),
        ({"passage": 5}, "text is missing"),
        ({"passage": "x", "id": ""}, "id is empty"),
        ({"passage": "x", "id": 1.5}, "id must be"),
        ({"passage": "x", "id": "a" * 600}, "longer than 512"),
        ({"passage": "x" * 70_000}, "longer than 65535"),
        ({"passage": "x", "metadata": {"pk": 1}}, "reserved"),
        ({"passage": "x", "metadata": {"when": object()}}, "cannot store"),
        ({"passage": "x", "metadata": {"v": float("nan")}}, "NaN"),
        ({"passage": "x", "metadata": "not a dict"}, "must be a dict"),
        ("just a string", "expected a JSON object"),
    ],
)
def test_malformed_records_raise_clear_errors(record, message) -> None:
    with pytest.raises(MalformedRecordError, match=message):
        record_from_mapping(record, position=7, strict=False, problems=[])


def test_musique_file_loads_as_it_is() -> None:
    problems: list[Problem] = []
    records = [
        record_from_mapping(r, position=n, strict=False, problems=problems)
        for n, r in iter_jsonl(DATA_DIR / "passages.jsonl")
    ]
    assert len(records) == 1890
    assert sum(len(r.triplets) for r in records) == 17_419 - 185
    assert len(problems) == 185 and all("wrong arity" in p.reason for p in problems)
    with pytest.raises(MalformedTripletError, match="musique-"):
        for n, r in iter_jsonl(DATA_DIR / "passages.jsonl"):
            record_from_mapping(r, position=n, strict=True, problems=[])


def test_bad_json_lines(tmp_path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"passage": "a"}\n{not json}\n\n{"passage": "b"}\n', encoding="utf-8")
    with pytest.raises(MalformedRecordError, match=r"x.jsonl:2: invalid JSON"):
        list(iter_jsonl(path))
    problems: list[Problem] = []
    assert [n for n, _ in iter_jsonl(path, problems)] == [1, 4]
    assert problems[0].record_id == "line 2"


HOSTILE = ['x" or pk != "', "back\\slash", 'quo"te', "new\nline", "tab\t", "Ünïcødé 東京", "ctl\u0001", "'single'"]


@pytest.mark.parametrize("value", HOSTILE)
def test_literals_escape_everything(value: str) -> None:
    lit = literal(value)
    assert lit.startswith('"') and lit.endswith('"')
    assert json.loads(lit, strict=False) == value  # round-trips: every quote and backslash escaped
    assert "\n" not in lit and "\t" not in lit
    body = lit[1:-1].replace("\\\\", "")
    assert '"' not in body.replace('\\"', "")  # no unescaped quote can end the literal early


def test_expression_builders() -> None:
    assert in_list("pk", ["a", 'b"']) == 'pk in ["a", "b\\""]'
    assert eq_filter({"tenant": "a", "n": 3, "ok": True}) == '(tenant == "a") and (n == 3) and (ok == true)'
    assert eq_filter({"tenant": ["a", "b"]}) == '(tenant in ["a", "b"])'
    assert and_all(None, "a == 1", "") == "(a == 1)"
    assert and_all("a == 1", "b == 2") == "(a == 1) and (b == 2)"
    assert and_all(None) is None
    for bad in ["x or 1", "a-b", "", "1a", 'pk == "x"']:
        with pytest.raises(InvalidFilterError):
            field_name(bad)
    with pytest.raises(InvalidFilterError):
        literal(float("inf"))
    with pytest.raises(InvalidFilterError):
        literal(object())
    with pytest.raises(InvalidFilterError):
        eq_filter({})
