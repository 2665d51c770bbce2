"""The subgraph page in a real browser: Debian's headless chromium loads it from file://.

Skipped when chromium is absent, unless ``REQUIRE_BROWSER=1`` (set by ``.ci/run``), which
makes its absence a failure. Screenshots are kept in ``.cache/artifacts/`` (paths printed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from langchain_graphrag_milvus.subgraph import Subgraph, SubgraphEdge, SubgraphNode

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / ".cache" / "artifacts"
WINDOW = (1700, 900)


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail("REQUIRE_BROWSER=1 but chromium is not installed (apt-get install -y chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium); REQUIRE_BROWSER=1 fails instead")
    return path


def run_chromium(chromium: str, profile: Path, page: Path, *args: str) -> str:
    """Load ``page`` headless, with every host unresolvable (the page must need no network)."""
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        *args,
        page.as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class RenderedNodes(HTMLParser):
    """The ``<g class="node">`` elements of the dumped DOM: id, kind, position and their texts."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[str, dict] = {}
        self.heads: list[str] = []
        self.svg_attrs: dict[str, str] = {}
        self.body_attrs: dict[str, str] = {}
        self.tags: list[str] = []
        self._node: dict | None = None
        self._depth = 0
        self._in_text = False
        self._text_class = ""

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "svg":
            self.svg_attrs = a
        elif tag == "body":
            self.body_attrs = a
        if self._node is not None and tag == "g":
            self._depth += 1
        if tag == "g" and a.get("class") == "node":
            x, y = map(float, re.match(r"translate\(([-\d.]+),([-\d.]+)\)", a["transform"]).groups())
            self._node = {"kind": a["data-kind"], "hop": a["data-hop"], "x": x, "y": y, "lines": [], "score": ""}
            self.nodes[a["data-id"]] = self._node
            self._depth = 1
        if tag == "text":
            self._in_text, self._text_class = True, a.get("class", "")

    def handle_endtag(self, tag):
        if tag == "text":
            self._in_text = False
        if tag == "g" and self._node is not None:
            self._depth -= 1
            if self._depth == 0:
                self._node = None

    def handle_data(self, data):
        if not self._in_text:
            return
        if self._node is None:
            if "head" in self._text_class:
                self.heads.append(data)
        elif "score" in self._text_class:
            self._node["score"] = data
        else:
            self._node["lines"].append(data)


def parse(dom: str) -> RenderedNodes:
    parser = RenderedNodes()
    parser.feed(dom)
    return parser


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
