"""``query --html``: the printed passages and the subgraph page come from one retrieval.

Milvus Lite, the tutorial's passages with their given triplets, the CLI's deterministic
fake embeddings (the same vectors in the test and the command).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.cli.main import main
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset


def test_query_html_runs_the_retrieval_once_and_prints_the_same_passages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = str(tmp_path / "milvus.db")
    store = MilvusGraphStore(DeterministicFakeEmbedding(size=64), uri=uri, collection_prefix="html")
    store.add_records(nano_dataset())
    store.close()
    common = [NANO_QUESTION, "-k", "2", "--uri", uri, "--prefix", "html", "--embeddings", "fake", "--json"]

    assert main(["query", *common]) == 0
    plain = json.loads(capsys.readouterr().out)

    runs: list[str] = []
    original_traced = MilvusGraphRetriever._traced
    original_invoke = MilvusGraphRetriever.invoke

    def traced(self: MilvusGraphRetriever, query: str, kwargs: dict[str, Any]) -> Any:
        runs.append("traced")
        return original_traced(self, query, kwargs)

    def invoke(self: MilvusGraphRetriever, *args: Any, **kwargs: Any) -> Any:
        runs.append("invoke")
        return original_invoke(self, *args, **kwargs)

    monkeypatch.setattr(MilvusGraphRetriever, "_traced", traced)
    monkeypatch.setattr(MilvusGraphRetriever, "invoke", invoke)
    page = tmp_path / "answer.html"
    assert main(["query", *common, "--html", str(page)]) == 0
    with_html = json.loads(capsys.readouterr().out)

    assert runs == ["traced"]  # one retrieval for both the passages and the picture
    assert with_html == plain
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html and all(f"passage:{row['id']}" in html for row in plain)
