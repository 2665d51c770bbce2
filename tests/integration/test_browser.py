"""The subgraph page in a real browser: Debian's headless chromium loads it from file://.

Skipped when chromium is absent, unless ``REQUIRE_BROWSER=1`` (set by ``.ci/run``), which
makes its absence a failure. Screenshots are kept in ``.cache/artifacts/`` (paths printed).
"""

from __future__ import annotations

import uuid

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.subgraph import Subgraph

from ..browser_pages import ARTIFACTS, WINDOW, parse, png_size, run_chromium
from ..fakes import LexicalEmbeddings

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def nano_subgraph(tmp_path_factory) -> tuple[Subgraph, Subgraph]:
    """The demo question's subgraph and the whole graph, from a real Milvus Lite store."""
    store = MilvusGraphStore(
        LexicalEmbeddings(),
        uri=str(tmp_path_factory.mktemp("browser") / "milvus.db"),
        collection_prefix=f"b{uuid.uuid4().hex[:8]}",
    )
    try:
        store.add_records(nano_dataset())
        retriever = MilvusGraphRetriever(store=store, k=2)
        yield retriever.explain(NANO_QUESTION), store.export_graph()
    finally:
        store.close()


def test_query_page_renders_every_node_with_scores_and_hops(chromium, nano_subgraph, tmp_path):
    sub, _ = nano_subgraph
    page = tmp_path / "subgraph.html"
    sub.write_html(page)
    rendered = parse(run_chromium(chromium, tmp_path / "profile", page, "--dump-dom"))

    assert rendered.body_attrs.get("data-rendered") == "true"
    drawn = {n.id: n for n in sub.nodes if n.kind != "entity" or n.hop == 0}
    assert set(rendered.nodes) == set(drawn)
    assert rendered.svg_attrs["data-nodes"] == str(len(drawn))
    assert rendered.heads[:2] == ["Query entities", "Matched entities"]
    assert {"Relations, hop 0", "Relations, hop 1", "Relations, hop 2", "Passages returned"} <= set(rendered.heads)
    for node_id, node in drawn.items():
        shown = rendered.nodes[node_id]
        text = " ".join(shown["lines"])
        assert shown["kind"] == node.kind
        if node.kind == "passage":
            assert shown["score"].startswith(f"#{node.data['rank']} · score {node.score:.3f} · hop {node.hop}")
            assert text.replace("…", "")[:40] == node.label[:40]
        elif node.kind == "relation":
            assert text == node.label  # short enough to show in full
            hop = "" if node.hop is None else f" · hop {node.hop}"  # a vector hit without an entity path
            assert shown["score"].startswith(f"sim {node.score:.3f}{hop}")
        elif node.kind == "entity":
            assert text == node.label and shown["score"].startswith(f"match {node.score:.3f}")
    columns: dict[str, float] = {}
    for node_id, shown in rendered.nodes.items():  # one column per kind and hop, left to right
        key = f"{shown['kind']}{shown['hop']}"
        assert columns.setdefault(key, shown["x"]) == shown["x"]
    order = ["query_entity", "entity0", "relation0", "relation1", "relation2", "passage0"]
    assert [columns[k] for k in order] == sorted(columns[k] for k in order)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "subgraph-nano.png"
    shot.unlink(missing_ok=True)
    run_chromium(chromium, tmp_path / "profile", page, f"--screenshot={shot}")
    print(f"\nscreenshot of the demo question's subgraph: {shot}")
    assert png_size(shot) == WINDOW
    assert shot.stat().st_size > 40_000  # a blank page compresses to a few kB


def test_store_page_draws_the_whole_graph(chromium, nano_subgraph, tmp_path):
    _, whole = nano_subgraph
    page = tmp_path / "graph.html"
    whole.write_html(page, title="nano")
    rendered = parse(run_chromium(chromium, tmp_path / "profile", page, "--dump-dom"))
    assert set(rendered.nodes) == {n.id for n in whole.nodes}
    names = {" ".join(n["lines"]) for n in rendered.nodes.values() if n["kind"] == "entity"}
    assert {"Johann Bernoulli", "Daniel Bernoulli", "Euler", "Basel"} <= names
    xs = [n["x"] for n in rendered.nodes.values()]
    assert max(xs) - min(xs) > 200  # laid out, not piled up
    shot = ARTIFACTS / "graph-nano.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    run_chromium(chromium, tmp_path / "profile", page, f"--screenshot={shot}")
    print(f"\nscreenshot of the whole nano graph: {shot}")
    assert png_size(shot) == WINDOW
