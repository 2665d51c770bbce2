"""With the real local model (all-MiniLM-L6-v2): embeddings, the seed example, the examples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.embeddings import local_embeddings_available

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not local_embeddings_available(), reason="needs the 'local' extra (make test installs it)"),
]
ROOT = Path(__file__).resolve().parents[2]


async def test_seed_example_without_llm(make_store, minilm) -> None:
    """The seed's question with no LLM: what the default (cross-validated) ranking returns, and what an LLM sees.

    The chained-walk ranking (walk_ranking.py) replaced a ranking whose bridge constants were fitted to the dev
    questions; without an LLM it no longer puts Daniel's passage in the top 2 here (diagnosis in
    benchmarks/README.md). The seed's method still reaches the answer: the pool an LLM reranker is shown holds
    the relation that names Daniel as the son of Euler's teacher, and the path retriever finds the chain.
    """
    from langchain_graphrag_milvus.cli.evaluation import record_pool

    store = make_store(minilm)
    store.add_records(nano_dataset())
    graph = MilvusGraphRetriever(store=store, k=2)
    sync, async_ = graph.invoke(NANO_QUESTION), await graph.ainvoke(NANO_QUESTION)
    for docs in (sync, async_):
        assert [d.page_content.split(" (")[0] for d in docs][0] == "Leonhard Euler"
        assert all(d.metadata["_relations"] for d in docs)  # each passage says which facts led to it
    assert [d.metadata["_passage_id"] for d in sync] == [d.metadata["_passage_id"] for d in async_]
    recording, pools = record_pool(graph)
    recording.invoke(NANO_QUESTION)
    daniel = [c for c in pools[0]["candidates"] if c["text"] == "Daniel Bernoulli was the son of Johann Bernoulli"]
    assert len(daniel) == 1 and len(pools[0]["candidates"]) <= graph.max_candidates
    naive = [d.page_content.split(" (")[0] for d in store.as_naive_retriever(k=2).invoke(NANO_QUESTION)]
    assert "Daniel Bernoulli" not in naive  # what the seed notebook shows: naive RAG misses it


def run_example(name: str, tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["EXAMPLES_MILVUS_URI"] = str(tmp_path / "examples.db")
    result = subprocess.run(
        [sys.executable, f"examples/{name}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_quickstart_shows_naive_and_graph_side_by_side(tmp_path) -> None:
    out = run_example("quickstart.py", tmp_path)
    assert "NO LLM runs" in out
    naive, graph = out.split("Passages retrieved from naive RAG:")[1].split("Passages retrieved from graph RAG:")
    assert "Daniel Bernoulli" not in naive
    assert "1. Leonhard Euler (1707–1783)" in graph and "via: " in graph  # graph passages show their relations
    reached = out.split("What the graph reached that naive top-2 did not")[1].split("Path retriever")[0]
    chain = next(line.strip() for line in reached.splitlines() if line.endswith("→ Daniel Bernoulli"))
    assert chain.startswith("Leonhard Euler —[") and "]→ Johann Bernoulli —[" in chain  # Euler → teacher → son
    assert "of the graph's ranking" in reached  # where the reached passage stands, in or out of the top-2
    page = tmp_path / "quickstart_subgraph.html"
    assert "subgraph page (open it in a browser): " in out and "<svg" in page.read_text(encoding="utf-8")
    real = " ".join(out.split("A real 2-hop question (MuSiQue, CC BY 4.0)")[1].split())  # wrapped lines joined
    assert "naive: " in real and "graph: " in real and "Recall@2 naive 51.6, graph" in real


def test_lcel_example_runs_offline(tmp_path) -> None:
    out = run_example("lcel_chain.py", tmp_path)
    assert out.count("the prompt the LLM would receive") == 2
    assert out.count(f"Question: {NANO_QUESTION}") == 2 and out.count("Leonhard Euler (1707–1783)") == 2


def test_langgraph_agent_example_runs_offline(tmp_path) -> None:
    out = run_example("langgraph_agent.py", tmp_path)
    assert "ScriptedToolCaller (a stand-in, not an LLM)" in out
    assert "tool_calls=[('graph_search', {" in out and "'k': 3" in out and "'entities': ['Leonhard Euler']" in out
    tool_text = out.split("[ToolMessage] ")[1].split("[AIMessage]")[0]
    assert tool_text.startswith("[1] source: euler (passage nano-3)")  # the source of each passage
    assert "relations: " in tool_text and "Leonhard Euler was a student of Johann Bernoulli" in tool_text
    assert "source: jakob" not in tool_text  # the agent's filter held


def test_paths_example_links_euler_to_daniel_through_johann(tmp_path) -> None:
    out = run_example("paths.py", tmp_path)
    found = out.split("Paths between the question's entities:")[1].split("The LCEL chain's prompt")[0]
    assert found.strip().splitlines()[0] == "Leonhard Euler → Johann Bernoulli → Daniel Bernoulli"
    assert "- Leonhard Euler was a student of Johann Bernoulli" in found
    assert "Euler was born in Basel and was a student of Johann Bernoulli" in found  # supporting sentence
    assert "(2 hops; passages " in found
    assert "  | Leonhard Euler → Johann Bernoulli → Daniel Bernoulli" in out  # the chain's prompt holds the path
    assert "no path within 2 hops per side" in out


async def test_path_retriever_with_minilm_on_both_backends(make_store, minilm) -> None:
    from langchain_graphrag_milvus import MilvusPathRetriever

    store = make_store(minilm)
    store.add_records(nano_dataset())
    paths = MilvusPathRetriever(store=store, sentences=True)
    for docs in (
        paths.invoke("How is Leonhard Euler related to Daniel Bernoulli?"),
        await paths.ainvoke("How is Leonhard Euler related to Daniel Bernoulli?"),
    ):
        assert [d.metadata["_path"] for d in docs] == [["Leonhard Euler", "Johann Bernoulli", "Daniel Bernoulli"]]
    # a name that is not an entity resolves to its nearest entity vector (MiniLM similarity)
    (doc,) = paths.invoke("?", entities=["Leonhard Euler", "Daniel Bernoulli, the physicist"], entity_min_score=0.7)
    assert doc.metadata["_path"][-1] == "Daniel Bernoulli"
