"""``serve`` as a real HTTP server (a subprocess on a free port), driven over HTTP and MCP, on Lite and a server.

One server process per backend for the module (fake embeddings, no extractor: documents carry
their triplets; ``--llm fake`` stands in for OpenAI in ``/ask``). The stdio MCP server runs on
Lite only, in its own data folder.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator

import httpx
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset

from ..conftest import BACKENDS, backend_uri
from ..serve_process import ServeProcess

pytestmark = pytest.mark.slow
TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def nano_documents() -> list[dict]:
    docs = []
    for i, rec in enumerate(nano_dataset()):
        pid = str(rec.get("id", f"nano{i}"))
        text = rec.get("text") or rec["passage"]
        meta = {"source": f"{pid}.md", "page": 0}
        docs.append({"id": pid, "text": text, "metadata": meta, "triplets": rec["triplets"]})
    return docs


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    backend = str(request.param)
    folder = tmp_path_factory.mktemp("serve")
    uri = backend_uri(request, backend, folder)
    prefix = f"s{uuid.uuid4().hex[:10]}"
    args = ["--embeddings", "fake", "--uri", uri, "--prefix", prefix, "--extractor", "none", "--llm", "fake"]
    server = ServeProcess(folder, *args, "--max-k", "20", "--max-body-mb", "1", token=TOKEN).wait()
    try:
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as client:
            reply = client.post("/documents", json={"documents": nano_documents()})
            assert reply.status_code == 200, reply.text
        yield server.url, backend
    finally:
        server.stop()
        if backend == "server":
            store = MilvusGraphStore(DeterministicFakeEmbedding(size=64), uri=uri, collection_prefix=prefix)
            store.drop()
            store.close()


@pytest.fixture
def client(served: tuple[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served[0], headers=AUTH, timeout=60) as c:
        yield c


def test_token_is_required_except_on_health_and_the_page(served):
    url = served[0]
    assert httpx.get(url + "/health").json()["status"] == "ok"
    assert httpx.get(url + "/").status_code == 200
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        reply = httpx.post(url + "/query", json={"query": "Euler"}, headers=headers)
        assert reply.status_code == 401
        assert reply.json()["error"] == "Unauthorized"
    assert httpx.post(url + "/mcp/", json={}, headers={"Accept": "application/json"}).status_code == 401


def test_query_modes_return_passages_with_source_page_and_relations(client):
    from langchain_graphrag_milvus.datasets import NANO_QUESTION

    graph = client.post("/query", json={"query": NANO_QUESTION, "k": 2}).json()
    assert graph["mode"] == "graph" and len(graph["documents"]) == 2
    first = graph["documents"][0]
    assert first["source"].endswith(".md") and first["page"] == 0 and first["relations"]
    assert first["text"] and isinstance(first["score"], float)
    naive = client.post("/query", json={"query": NANO_QUESTION, "k": 3, "mode": "naive"}).json()
    assert len(naive["documents"]) == 3 and all(d["source"] for d in naive["documents"])
    paths = client.post("/query", json={"query": NANO_QUESTION, "mode": "paths", "entities": ["Euler"]})
    assert paths.status_code == 200, paths.text
    only = client.post("/query", json={"query": NANO_QUESTION, "k": 5, "filter": {"source": first["source"]}}).json()
    assert {d["source"] for d in only["documents"]} == {first["source"]}


def test_explain_as_json_and_as_the_page(client):
    sub = client.post("/explain", json={"query": "Who taught Euler?", "k": 2}).json()
    kinds = {n["kind"] for n in sub["nodes"]}
    assert {"relation", "passage"} <= kinds and sub["query"] == "Who taught Euler?"
    page = client.get("/explain", params={"query": "Who taught Euler?"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html") and "<svg" in page.text


def test_typed_errors(client):
    cases = [
        ({"query": "Euler", "k": 21}, 400, "ValueError"),
        ({"query": "Euler", "filter": {"bad field": "x"}}, 400, "InvalidFilterError"),
        ({"query": "  "}, 400, "ValueError"),
        ({"qury": "Euler"}, 422, "ValidationError"),
        ({"query": "Euler", "mode": "other"}, 422, "ValidationError"),
    ]
    for body, status, error in cases:
        reply = client.post("/query", json=body)
        assert (reply.status_code, reply.json()["error"]) == (status, error), reply.text
        assert reply.json()["message"]
    missing = client.get("/graph/passages/nope")
    assert (missing.status_code, missing.json()["error"]) == (404, "UnknownIdError")
    # refused by Content-Length before it is read: the client gets the 413 or, while it is still sending,
    # a reset connection (uvicorn); the body is never buffered
    try:
        big = httpx.post(
            str(client.base_url) + "/documents", content=b"x" * (2 * 2**20),
            headers={**AUTH, "content-type": "application/json"},
        )  # fmt: skip
        assert (big.status_code, big.json()["error"]) == (413, "RequestTooLarge")
    except (httpx.ReadError, httpx.WriteError):
        pass
    assert client.get("/health").status_code == 200
    bad_doc = client.post("/documents", json={"documents": [{"text": "a", "id": "", "metadata": {}}]})
    assert bad_doc.status_code in (200, 400)  # an invalid id is skipped (listed) or refused, never a 500
    assert bad_doc.status_code == 400 or bad_doc.json()["sources_skipped"]


def test_upsert_files_and_delete_by_source(client):
    doc = {"text": "Ada Lovelace worked with Charles Babbage.", "metadata": {"source": "ada.md"},
           "triplets": [["Ada Lovelace", "worked with", "Charles Babbage"]]}  # fmt: skip
    assert client.post("/documents", json={"documents": [doc]}).json()["ingested"]["passages_added"] == 1
    again = client.post("/documents", json={"documents": [doc]}).json()
    assert again["ingested"]["passages_added"] == 0 and again["ingested"]["passages_unchanged"] == 1
    files = {"files": ("notes.md", b"# Notes\n\nGrace Hopper wrote the first compiler.\n", "text/markdown")}
    up = client.post("/files", files=files).json()
    assert up["chunks"] == 1 and up["report"]["ingested"]["passages_added"] == 1
    skipped = client.post("/files", files={"files": ("x.exe", b"MZ", "application/octet-stream")}).json()
    assert skipped["chunks"] == 0 and "unsupported" in skipped["skipped"][0]["reason"]
    hits = client.post("/query", json={"query": "Grace Hopper compiler", "mode": "naive", "k": 20}).json()
    assert "notes.md" in {d["source"] for d in hits["documents"]}
    gone = client.request("DELETE", "/documents", json={"sources": ["ada.md", "notes.md"]}).json()
    assert gone["passages_deleted"] == 2
    hits = client.post("/query", json={"query": "Grace Hopper compiler", "mode": "naive", "k": 20}).json()
    assert not {"notes.md", "ada.md"} & {d["source"] for d in hits["documents"]}
    stats = client.get("/stats").json()
    assert stats["passages"] == len(nano_documents()) and stats["graph"]["relations"] > 0


def test_ask_streams_the_answer_then_the_citations(client):
    whole = client.post("/ask", json={"question": "Who taught Euler?", "k": 2}).json()
    assert whole["answer"].endswith("[1].") and whole["citations"][0]["n"] == 1
    assert whole["citations"][0]["source"] == whole["passages"][0]["source"]
    with client.stream("POST", "/ask", json={"question": "Who taught Euler?", "k": 2, "stream": True}) as reply:
        chunks = [json.loads(line) for line in reply.iter_lines() if line]
    assert len([c for c in chunks if "answer" in c]) > 1 and "citations" in chunks[-1]
    assert "".join(c.get("answer", "") for c in chunks) == whole["answer"]


def test_browse_reads(client):
    found = client.get("/graph/entities", params={"q": "bernoulli"}).json()["entities"]
    assert {"Johann Bernoulli", "Daniel Bernoulli"} <= {e["name"] for e in found}
    johann = next(e for e in found if e["name"] == "Johann Bernoulli")
    near = client.get(f"/graph/entities/{johann['id']}").json()
    assert near["entity"]["name"] == "Johann Bernoulli" and near["relations"]
    rel = near["relations"][0]
    assert johann["id"] in (rel["subject"]["id"], rel["object"]["id"])
    passage = client.get(f"/graph/passages/{rel['passage_ids'][0]}").json()
    assert passage["source"].endswith(".md") and passage["text"]


async def test_mcp_over_http(served):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=AUTH) as http, streamable_http_client(
        served[0] + "/mcp/", http_client=http
    ) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"search", "explain", "stats"} <= names
        found = await session.call_tool("search", {"query": "Who taught Euler?", "k": 2})
        assert not found.is_error
        docs = found.structured_content["documents"]
        assert len(docs) == 2 and docs[0]["source"].endswith(".md") and docs[0]["relations"]
        sub = await session.call_tool("explain", {"query": "Who taught Euler?"})
        assert not sub.is_error and sub.structured_content["nodes"]
        bad = await session.call_tool("search", {"query": "Euler", "k": 999})
        assert bad.is_error and "ValueError: k must be between 1 and 20" in bad.content[0].text


async def test_mcp_over_stdio(tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from ..serve_process import ROOT

    uri = str(tmp_path / "m.db")
    store = MilvusGraphStore(DeterministicFakeEmbedding(size=64), uri=uri, collection_prefix="graphrag")
    store.add_records(nano_dataset())
    store.close()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "langchain_graphrag_milvus", "serve", "--mcp", "stdio", "--embeddings", "fake",
              "--uri", str(tmp_path / "m.db"), "--extractor", "none"],  # fmt: skip
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            found = await session.call_tool("search", {"query": "Who taught Euler?", "k": 2, "mode": "naive"})
            assert not found.is_error, found.content
            assert len(found.structured_content["documents"]) == 2
            stats = await session.call_tool("stats", {})
            assert stats.structured_content["passages"] == len(nano_dataset())


def test_cli_ask_with_citations_and_without_a_key(tmp_path, capsys, monkeypatch):
    from langchain_graphrag_milvus.cli.common import FAKE_ANSWER
    from langchain_graphrag_milvus.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    uri = str(tmp_path / "a.db")
    store = MilvusGraphStore(DeterministicFakeEmbedding(size=64), uri=uri, collection_prefix="graphrag")
    store.add_records(nano_dataset())
    store.close()
    common = ["--embeddings", "fake", "--uri", uri, "-k", "2"]
    assert main(["ask", "Who taught Euler?", "--llm", "fake", "--json", *common]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] == FAKE_ANSWER and out["citations"][0]["n"] == 1 and len(out["passages"]) == 2
    assert main(["ask", "Who taught Euler?", "--llm", "fake", *common]) == 0
    text = capsys.readouterr().out
    assert text.startswith(FAKE_ANSWER) and "Sources:\n[1] " in text
    assert main(["ask", "Who taught Euler?", *common]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
