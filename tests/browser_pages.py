"""Headless chromium for the browser tests (unit and integration): run it, read the DOM it dumps.

The ``chromium`` fixture (``tests/conftest.py``) finds the browser through :func:`find_chromium`.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / ".cache" / "artifacts"
WINDOW = (1700, 900)


def find_chromium() -> str:
    """Debian's chromium; skips the test when absent, unless ``REQUIRE_BROWSER=1`` makes it fail."""
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
            self._node["source"] = ""
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
        elif "source" in self._text_class:  # a passage's file and page
            self._node["source"] = data
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
