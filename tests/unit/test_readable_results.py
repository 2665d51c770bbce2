"""Results a person can read, without Milvus: source labels, the tool text, the CLI rows, the reports."""

from __future__ import annotations

import math

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus.cli.query import _print_row, document_row
from langchain_graphrag_milvus.cli.summary import IngestSummary
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.retrieval.documents import NO_GRAPH_RANKED_BY, rank_score, source_label
from langchain_graphrag_milvus.retrieval.params import NaiveParams, RetrievalParams
from langchain_graphrag_milvus.retrieval.tool import format_documents


def test_source_label_names_file_and_page_from_one() -> None:
    assert source_label({"source": "guide.pdf", "page": 0}) == "guide.pdf, page 1"
    assert source_label({"source": "guide.pdf", "page": "iv"}) == "guide.pdf, page iv"
    assert source_label({"source_id": "notes.md"}) == "notes.md"
    assert source_label({"_passage_id": "p1"}) == "p1"
    assert source_label({"source": "", "url": "https://x", "page": True}) == "https://x, page True"  # a bool is no page
    assert [rank_score(r) for r in (1, 2, 4)] == [1.0, 0.5, 0.25]


def test_tool_text_shows_source_page_similarity_and_reasons() -> None:
    doc = Document(
        page_content="Euler was a student of Johann Bernoulli.",
        metadata={"source": "guide.pdf", "page": 2, "_passage_id": "p1", "_score": 1.0, "_similarity": 0.61},
    )
    text = format_documents([doc])
    assert text.startswith("[1] source: guide.pdf, page 3 (passage p1), score 1.000, similarity 0.610")
    assert format_documents([], reason="need two entities in the graph; found 1 (Basel)") == (
        "No passages found: need two entities in the graph; found 1 (Basel)."
    )
    no_graph = Document(page_content="x", metadata={"source": "a.txt", "_ranked_by": NO_GRAPH_RANKED_BY})
    assert format_documents([no_graph]).startswith("Note: no relations here (store or filter)")
    path = Document(page_content="A → B", metadata={"_score": 1.0, "_sources": ["a.md", "b.pdf, page 2", "a.md"]})
    assert "passages from: a.md; b.pdf, page 2\n" in format_documents([path])


def test_cli_row_shows_source_page_and_similarity_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    meta = {"source": "\x1b[31mevil.pdf", "page": 0, "_score": 0.5, "_similarity": 0.42, "_raw_score": 0.01}
    row = document_row(Document(page_content="text \x1b]0;title\x07", metadata=meta), 2)
    assert row["similarity"] == 0.42 and row["raw_score"] == 0.01 and row["page"] == 0
    _print_row(row)
    out = capsys.readouterr().out
    assert out.startswith("2. [0.500] \\x1b[31mevil.pdf (page 1)  similarity 0.420\n")
    assert "\x1b" not in out and "\x07" not in out


def test_report_and_cli_summary_say_when_the_store_has_no_relations() -> None:
    report = IngestReport(passages_seen=2, passages_added=2)
    report.warnings.append("0 relations: the graph retriever will rank by similarity only (...)")
    assert str(report).endswith("; warning: 0 relations: the graph retriever will rank by similarity only (...)")
    summary = IngestSummary()
    summary.add_ingest(report)
    summary.add_ingest(report)  # one batch after another: said once
    lines = summary.text().splitlines()
    assert lines.count("warning: 0 relations: the graph retriever will rank by similarity only (...)") == 1


@pytest.mark.parametrize("bad", [math.nan, math.inf, "0.5", True])
def test_min_score_must_be_a_finite_number(bad: object) -> None:
    with pytest.raises(ValueError, match="min_score must be a finite number or None"):
        RetrievalParams(min_score=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_score"):
        NaiveParams(min_score=bad)  # type: ignore[arg-type]
    assert RetrievalParams(min_score=-0.2).min_score == -0.2 and NaiveParams().min_score is None


def test_server_json_keeps_similarity_raw_score_and_sources() -> None:
    from langchain_graphrag_milvus.server.state import document_json

    meta = {"source": "a.pdf", "page": 0, "_score": 0.5, "_similarity": 0.4, "_raw_score": 0.01, "_sources": ["a.pdf"]}
    row = document_json(Document(page_content="t", metadata=meta), 2)
    assert (row["score"], row["similarity"], row["raw_score"], row["sources"]) == (0.5, 0.4, 0.01, ["a.pdf"])
    assert row["source"] == "a.pdf" and row["page"] == 0
