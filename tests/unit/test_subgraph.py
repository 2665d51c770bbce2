"""Subgraph: what the retriever did for a query, the stored graph, and their exports."""

from __future__ import annotations

import json
import re

import networkx as nx
import pytest

from langchain_graphrag_milvus.subgraph import Subgraph, SubgraphEdge, SubgraphNode

HOSTILE = '</script><script>alert("x")</script><!-- \u2028 & <b>'


def _small() -> Subgraph:
    return Subgraph(
        nodes=[
            SubgraphNode("query_entity:Euler", "Euler", "query_entity"),
            SubgraphNode("entity:e1", "Euler", "entity", 0, 0.9, {"entity_id": "e1"}),
            SubgraphNode("relation:r1", HOSTILE, "relation", 0, 0.5, {"passage_ids": ["p1"], "rank": None}),
            SubgraphNode("passage:p1", "Euler was born in Basel", "passage", 0, 0.25, {"rank": 1}),
        ],
        edges=[
            SubgraphEdge("query_entity:Euler", "entity:e1", "match", 0.9),
            SubgraphEdge("entity:e1", "relation:r1", "subject"),
            SubgraphEdge("relation:r1", "passage:p1", "supports", 0.5, {"led_to": True}),
        ],
        query="Where was Euler born?",
        settings={"k": 1, "entities": ("Euler",)},
    )


def _embedded_json(page: str) -> dict:
    match = re.search(r'<script id="subgraph-data" type="application/json">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


# ---------------------------------------------------------------------- exports, no store
def test_json_round_trip_and_networkx(tmp_path):
    sub = _small()
    data = sub.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["settings"]["entities"] == ["Euler"]
    again = Subgraph.from_json(json.loads(json.dumps(data)))
    assert again.to_json() == data

    graph = sub.to_networkx()
    assert isinstance(graph, nx.DiGraph)
    assert graph.nodes["relation:r1"]["label"] == HOSTILE
    assert graph.nodes["relation:r1"]["score"] == 0.5
    assert "rank" not in graph.nodes["relation:r1"]  # None attributes are left out
    assert json.loads(graph.nodes["relation:r1"]["passage_ids"]) == ["p1"]
    assert graph.edges["relation:r1", "passage:p1"]["led_to"] is True

    path = tmp_path / "g.graphml"
    sub.write_graphml(path)
    loaded = nx.read_graphml(path)
    assert set(loaded.nodes) == {n.id for n in sub.nodes}
    assert set(loaded.edges) == {(e.source, e.target) for e in sub.edges}
    assert loaded.nodes["passage:p1"]["kind"] == "passage"
    assert loaded.nodes["entity:e1"]["hop"] == 0


def test_from_json_rejects_other_documents():
    with pytest.raises(ValueError, match="not a subgraph"):
        Subgraph.from_json({"nodes": [{"label": "no id"}], "edges": []})
    with pytest.raises(ValueError, match="not a subgraph"):
        Subgraph.from_json({"graph": {}})


def test_html_is_self_contained_and_text_stays_data():
    sub = _small()
    page = sub.to_html(title='<i>"title"</i>')
    assert "<title>&lt;i&gt;&quot;title&quot;&lt;/i&gt;</title>" in page
    assert HOSTILE not in page  # the label cannot close the script element or open markup
    assert page.count("</script>") == 2
    assert "\u2028" not in page
    assert _embedded_json(page) == sub.to_json()  # ... and still reads back exactly
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)  # nothing fetched from a network
    assert "innerHTML" not in page
