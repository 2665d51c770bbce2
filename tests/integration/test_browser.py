"""The subgraph page in a real browser: Debian's headless chromium loads it from file://.

Skipped when chromium is absent, unless ``REQUIRE_BROWSER=1`` (set by ``.ci/run``), which
makes its absence a failure. Screenshots are kept in ``.cache/artifacts/`` (paths printed).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import uuid
from html.parser import HTMLParser
from pathlib import Path

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.subgraph import Subgraph

from ..fakes import LexicalEmbeddings

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


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


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
