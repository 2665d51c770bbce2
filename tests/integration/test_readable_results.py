"""No silent fallback, results a person can read (issue 24, items 5 and 6), on Milvus Lite and on the server.

* a store with passages but no relations warns at ingest (report, CLI summary) and, once per
  store, at retrieval; every Document says it was ranked by similarity for that reason;
* ``_score`` decreases in the returned order, ``_raw_score`` keeps the ranker's value,
  ``_similarity`` is comparable across modes; ``min_score`` cuts without padding;
* the path retriever and ``query --mode paths`` give the reason when there is no path;
* the command line shows every passage's source and page.
"""

from __future__ import annotations

import json
import warnings

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.cli.main import main
from langchain_graphrag_milvus.datasets import NANO_QUESTION
from langchain_graphrag_milvus.errors import NoRelationsWarning
from langchain_graphrag_milvus.retrieval.documents import NO_GRAPH_RANKED_BY
from langchain_graphrag_milvus.retrievers import warn_if_no_graph

from ..fakes import LexicalEmbeddings

PAGES = [
    Document(
        page_content="Leonhard Euler was a student of Johann Bernoulli in Basel.",
        metadata={"source": "guide.pdf", "page": 2, "triplets": [["Leonhard Euler", "student of", "Johann Bernoulli"]]},
    ),
    Document(
        page_content="Daniel Bernoulli was the son of Johann Bernoulli and worked on fluid dynamics.",
        metadata={"source": "notes.md", "triplets": [["Daniel Bernoulli", "son of", "Johann Bernoulli"]]},
    ),
    Document(page_content="Apollo 11 landed on the Moon in 1969.", metadata={"source": "moon.txt"}),
]


def _plain(docs: list[Document]) -> list[Document]:
    """The documents without their triplets (what a user without an extractor ingests)."""
    return [Document(page_content=d.page_content, metadata={"source": d.metadata["source"]}) for d in docs]


# ---------------------------------------------------------------------------- 5. no silent fallback


def test_an_ingest_that_leaves_no_relation_warns_and_says_so_in_the_report(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    with pytest.warns(NoRelationsWarning, match="extractor") as caught:
        report = store.upsert_documents(_plain(PAGES))
    message = str(caught[0].message)
    assert store.collection_prefix in message and "--extractor offline" in message
    assert "0 relations: the graph retriever will rank by similarity only" in str(report)
    assert report.ingested.warnings == [message]
    with warnings.catch_warnings():  # a store with relations: not a word
        warnings.simplefilter("error", NoRelationsWarning)
        other = make_store(LexicalEmbeddings())
        assert other.add_documents(PAGES).warnings == []


async def test_graph_retrieval_without_relations_is_marked_and_warns_once_per_store(
    make_store, retrieve, caplog
) -> None:
    store = make_store(LexicalEmbeddings())
    with pytest.warns(NoRelationsWarning):
        store.add_documents(_plain(PAGES))
    with pytest.warns(NoRelationsWarning, match="ranks by similarity only"):
        docs = await retrieve(MilvusGraphRetriever(store=store, k=2), NANO_QUESTION)
    assert len(docs) == 2 and all(d.metadata["_ranked_by"] == NO_GRAPH_RANKED_BY for d in docs)
    naive = store.as_naive_retriever(k=2).invoke(NANO_QUESTION)  # what it is: a similarity search
    assert [d.metadata["_similarity"] for d in docs] == pytest.approx([d.metadata["_score"] for d in naive])
    with warnings.catch_warnings(), caplog.at_level("INFO", logger="langchain_graphrag_milvus"):
        warnings.simplefilter("error", NoRelationsWarning)  # a second retriever on the same store: no warning
        again = await retrieve(MilvusGraphRetriever(store=store, k=2), NANO_QUESTION)
    assert again[0].metadata["_ranked_by"] == NO_GRAPH_RANKED_BY
    assert "graphrag_no_graph: the store has no relations" in caplog.text  # still logged, at INFO


def test_no_warning_when_the_graph_ranked_the_passages(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents(PAGES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoRelationsWarning)
        docs = MilvusGraphRetriever(store=store, k=3).invoke("Who was the teacher of Leonhard Euler?")
        warn_if_no_graph(store, docs)
    assert all(d.metadata["_ranked_by"] != NO_GRAPH_RANKED_BY for d in docs)


# ---------------------------------------------------------------------------- 6. scores, cut-off, reasons


async def test_scores_decrease_in_order_and_similarity_compares_across_modes(nano_store, retrieve) -> None:
    docs = await retrieve(MilvusGraphRetriever(store=nano_store, k=4), NANO_QUESTION)
    assert [d.metadata["_score"] for d in docs] == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4])
    assert all(isinstance(d.metadata["_raw_score"], float) for d in docs)
    graph_ranked = [d for d in docs if d.metadata["_ranked_by"] == "graph"]
    assert graph_ranked and all(0 < d.metadata["_raw_score"] < 1 for d in graph_ranked)  # PageRank mass, kept
    naive = {d.id: d.metadata["_similarity"] for d in nano_store.as_naive_retriever(k=4).invoke(NANO_QUESTION)}
    for d in docs:  # the same passage has the same similarity in both modes
        assert d.metadata["_similarity"] == pytest.approx(naive[d.id], abs=1e-5)


async def test_min_score_cuts_without_padding_in_graph_and_naive_modes(nano_store, retrieve) -> None:
    every = nano_store.as_naive_retriever(k=4).invoke(NANO_QUESTION)
    sims = sorted((d.metadata["_similarity"] for d in every), reverse=True)
    cut = (sims[1] + sims[2]) / 2  # exactly two passages are at least this similar
    naive = await retrieve(nano_store.as_naive_retriever(k=4, min_score=cut), NANO_QUESTION)
    assert len(naive) == 2 and all(d.metadata["_similarity"] >= cut for d in naive)
    graph = await retrieve(MilvusGraphRetriever(store=nano_store, k=4), NANO_QUESTION, min_score=cut)
    assert 1 <= len(graph) <= 2 and all(d.metadata["_similarity"] >= cut for d in graph)
    assert [d.metadata["_score"] for d in graph] == pytest.approx([1 / r for r in range(1, len(graph) + 1)])
    assert await retrieve(MilvusGraphRetriever(store=nano_store, k=4, min_score=1.01), NANO_QUESTION) == []


def test_the_path_retriever_gives_its_reason(nano_store) -> None:
    paths = nano_store.as_path_retriever(sentences=True)
    docs, reason = paths.invoke_with_reason("How is Basel related to rockets?", entities=["Basel", "rockets"])
    assert docs == [] and reason.startswith("need two entities in the graph; found 1 (Basel)")
    docs, reason = paths.invoke_with_reason("?", entities=["Leonhard Euler", "Daniel Bernoulli"])
    assert docs and reason is None
    assert docs[0].metadata["_score"] == 1.0 and docs[0].metadata["_sources"]


# ---------------------------------------------------------------------------- the command line


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_query_shows_source_page_and_similarity(make_store, capsys) -> None:
    store = make_store(DeterministicFakeEmbedding(size=64))
    store.add_documents(PAGES)
    where = ["--uri", store.uri, "--prefix", store.collection_prefix, "--embeddings", "fake"]
    store.close()
    for mode in ("graph", "naive"):
        question = "Who was the teacher of Leonhard Euler?"
        code, out, err = _cli(capsys, "query", question, "-k", "3", "--mode", mode, *where)
        assert code == 0, err
        heads = [line for line in out.splitlines() if line[:1].isdigit()]
        assert len(heads) == 3
        assert any("guide.pdf (page 3)" in h for h in heads)  # page 2 counted from 0, shown from 1
        assert {"notes.md", "moon.txt"} <= {h.split("] ", 1)[1].split()[0] for h in heads}
        scores = [float(h.split("[", 1)[1].split("]", 1)[0]) for h in heads]
        assert scores == sorted(scores, reverse=True)
    rows = json.loads(_cli(capsys, "query", "Euler", "-k", "3", "--json", *where)[1])
    assert {r["source"] for r in rows} == {"guide.pdf", "notes.md", "moon.txt"}
    assert all(isinstance(r["similarity"], float) and isinstance(r["raw_score"], float) for r in rows)
    assert next(r for r in rows if r["source"] == "guide.pdf")["page"] == 2
    code, out, _ = _cli(capsys, "query", "Euler", "--min-score", "1.01", *where)
    assert code == 0 and out.strip() == "no passages found with similarity of at least --min-score 1.01"


def test_cli_paths_prints_its_reason(make_store, capsys) -> None:
    store = make_store(DeterministicFakeEmbedding(size=64))
    store.add_documents(PAGES)
    where = ["--uri", store.uri, "--prefix", store.collection_prefix, "--embeddings", "fake"]
    store.close()
    code, out, err = _cli(capsys, "query", "How is Apollo related to the Moon?", "--mode", "paths", *where)
    assert code == 0, err
    assert out.startswith("no path found: need two entities in the graph; found 0")
    question = "How is Leonhard Euler related to Daniel Bernoulli?"
    code, out, _ = _cli(capsys, "query", question, "--mode", "paths", *where)
    assert out.startswith("1. [1.000] path, 2 hops") and "passages from: guide.pdf, page 3; notes.md" in out


def test_cli_ingest_and_query_say_when_there_is_no_graph(make_store, capsys, tmp_path) -> None:
    store = make_store(DeterministicFakeEmbedding(size=64))
    where = ["--uri", store.uri, "--prefix", store.collection_prefix, "--embeddings", "fake"]
    store.close()
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Leonhard Euler was a student of Johann Bernoulli.", encoding="utf-8")
    code, out, err = _cli(capsys, "ingest", str(folder), "--extractor", "none", *where)
    assert code == 0, err
    assert "warning: 0 relations: the graph retriever will rank by similarity only" in out
    assert "--extractor offline" in out and "NoRelationsWarning" not in err  # said once, in the summary
    code, out, err = _cli(capsys, "query", "Who taught Euler?", *where)
    assert code == 0 and "a.txt" in out
    assert "note: the store (or the filtered part) has no relations" in err and "--extractor offline" in err


# ---------------------------------------------------------------------------- the subgraph page


@pytest.mark.browser
def test_the_page_shows_each_passage_source_and_page(make_store, chromium, tmp_path) -> None:
    from ..browser_pages import parse, run_chromium

    store = make_store(LexicalEmbeddings())
    store.add_documents(PAGES)
    sub = MilvusGraphRetriever(store=store, k=3).explain("Who was the teacher of Leonhard Euler?")
    page = tmp_path / "answer.html"
    sub.write_html(page)
    rendered = parse(run_chromium(chromium, tmp_path / "profile", page, "--dump-dom"))
    assert rendered.body_attrs.get("data-rendered") == "true"
    shown = {node_id: n for node_id, n in rendered.nodes.items() if n["kind"] == "passage"}
    assert len(shown) == 3
    assert sorted(n["source"] for n in shown.values()) == ["guide.pdf, page 3", "moon.txt", "notes.md"]
    for node in sub.nodes:
        if node.kind == "passage":  # drawn under the passage's text, above its score line
            assert shown[node.id]["source"] == node.data["source"]
            assert shown[node.id]["score"].startswith(f"#{node.data['rank']} · score {node.score:.3f}")
