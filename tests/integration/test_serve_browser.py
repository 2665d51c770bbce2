"""The browse page of ``serve`` in headless Chromium, driven through the DevTools protocol.

A real server process (Milvus Lite, the nano data set posted over HTTP) and Debian's chromium:
the test types an entity name, submits, clicks the entity, follows a neighbour, opens a passage
and reads its source and page from the page. Skipped without chromium unless ``REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..browser_pages import ARTIFACTS
from ..serve_process import ServeProcess
from .test_serve import nano_documents

pytestmark = [pytest.mark.browser, pytest.mark.slow]
websockets_sync = pytest.importorskip("websockets.sync.client")


class Page:
    """One Chromium tab over the DevTools protocol (the websocket of its target)."""

    def __init__(self, url: str) -> None:
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(websockets_sync.connect(url, max_size=2**26, open_timeout=30))
        self.ids = itertools.count(1)

    def call(self, method: str, **params) -> dict:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == msg_id:
                assert "error" not in reply, reply
                return reply["result"]

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}; status: {self.js('document.body.innerText')}")


@pytest.fixture(scope="module")
def browser_page(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Page, str]]:
    folder = tmp_path_factory.mktemp("browse")
    args = ["--embeddings", "fake", "--uri", str(folder / "m.db"), "--extractor", "none"]
    server = ServeProcess(folder, *args, token="page-token").wait()
    profile = folder / "profile"
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--remote-debugging-port=0", "--remote-allow-origins=*",
         f"--user-data-dir={profile}", "--window-size=1400,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        headers = {"Authorization": "Bearer page-token"}
        reply = httpx.post(server.url + "/documents", json={"documents": nano_documents()}, headers=headers, timeout=60)
        assert reply.status_code == 200, reply.text
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.2)
        port = port_file.read_text().split()[0]
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        target = next(t for t in targets if t["type"] == "page")
        page = Page(target["webSocketDebuggerUrl"])
        yield page, server.url
        page._stack.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        server.stop()


def test_search_expand_and_open_a_passage(browser_page):
    page, url = browser_page
    page.call("Page.enable")
    page.call("Page.navigate", url=url + "/")
    page.wait_for("document.body && document.body.dataset.ready === 'true'")
    # the token, as a user types it (the API refuses the page's requests without it)
    page.js("(() => { const t = document.getElementById('token'); t.value = 'page-token';"
            " t.dispatchEvent(new Event('change')); })()")  # fmt: skip
    page.js("document.getElementById('search').value = 'bernoulli';"
            "document.getElementById('search-form').requestSubmit()")  # fmt: skip
    page.wait_for("document.body.dataset.entities")
    names = page.js("[...document.querySelectorAll('.entity-result')].map(b => b.textContent)")
    assert {"Johann Bernoulli", "Daniel Bernoulli"} <= set(names)
    page.js("[...document.querySelectorAll('.entity-result')].find(b => b.textContent === 'Johann Bernoulli').click()")
    page.wait_for("document.getElementById('entity-name').textContent === 'Johann Bernoulli'")
    relations = page.wait_for("[...document.querySelectorAll('#neighbours .relation > div:first-child')]"
                              ".map(d => d.textContent).filter(Boolean)")  # fmt: skip
    assert any("Johann Bernoulli" in r for r in relations)
    first_entity = page.js("document.body.dataset.expanded")
    neighbour = page.js("(() => { const b = document.querySelector('.neighbour'); b.click(); return b.dataset.id; })()")
    page.wait_for(f"document.body.dataset.expanded === {json.dumps(neighbour)}")
    assert neighbour != first_entity
    passage_id = page.js(
        "(() => { const b = document.querySelector('.passage-link'); b.click(); return b.dataset.id; })()"
    )
    page.wait_for(f"document.body.dataset.passage === {json.dumps(passage_id)}")
    shown = page.js("({source: document.getElementById('passage-source').textContent,"
                    " page: document.getElementById('passage-page').textContent,"
                    " text: document.getElementById('passage-text').textContent})")  # fmt: skip
    assert shown["source"].endswith(".md") and shown["page"] == "1" and len(shown["text"]) > 10
    stored = httpx.get(
        f"{url}/graph/passages/{passage_id}", headers={"Authorization": "Bearer page-token"}, timeout=30
    ).json()
    assert shown["text"] == stored["text"] and shown["source"] == stored["source"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = page.call("Page.captureScreenshot", format="png")["data"]
    (ARTIFACTS / "browse-page.png").write_bytes(base64.b64decode(shot))
