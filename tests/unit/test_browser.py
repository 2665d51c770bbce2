"""The subgraph page in a real browser: Debian's headless chromium loads it from file://.

Skipped when chromium is absent, unless ``REQUIRE_BROWSER=1`` (set by ``.ci/run``), which
makes its absence a failure. Screenshots are kept in ``.cache/artifacts/`` (paths printed).
"""

from __future__ import annotations

import pytest

from langchain_graphrag_milvus.subgraph import Subgraph, SubgraphEdge, SubgraphNode

from ..browser_pages import parse, run_chromium

pytestmark = pytest.mark.browser


def test_hostile_labels_stay_text_in_the_browser(chromium, tmp_path):
    evil = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"></script><b>x</b>"
    sub = Subgraph(
        nodes=[
            SubgraphNode("query_entity:q", evil, "query_entity"),
            SubgraphNode("relation:r", evil, "relation", 0, 0.5),
            SubgraphNode("passage:p", evil, "passage", 0, 0.1, {"rank": 1}),
        ],
        edges=[SubgraphEdge("relation:r", "passage:p", "supports", 0.5, {"led_to": True})],
        query=evil,
    )
    page = tmp_path / "evil.html"
    sub.write_html(page)
    rendered = parse(run_chromium(chromium, tmp_path / "profile", page, "--dump-dom"))
    assert rendered.body_attrs.get("data-rendered") == "true"
    assert "data-pwned" not in rendered.body_attrs
    assert "img" not in rendered.tags and "b" not in rendered.tags
    assert set(rendered.nodes) == {"query_entity:q", "relation:r", "passage:p"}
    assert "<img" in " ".join(rendered.nodes["relation:r"]["lines"])  # drawn as the text it is
