"""Integrity of reads (issue 12, part B): a saved index that heals, fresh readers, tenant views
that hide everything outside them, and bounded work (capped parsing, timeouts, no blank Document).

Store-backed tests run on Milvus Lite and on the server (``make_store`` / ``backend``), and
retrievals both sync and async (``retrieve``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusPathRetriever, create_llm_reranker
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.errors import CorruptIndexError, StaleIndexError
from langchain_graphrag_milvus.graph import persist
from langchain_graphrag_milvus.path_retriever import NoPathEvents
from langchain_graphrag_milvus.pipeline import first_unique_names
from langchain_graphrag_milvus.rerank import parse_rerank_answer
from langchain_graphrag_milvus.stages import Candidate, order_from_positions

from .fakes import LexicalEmbeddings
from .test_tenants import documents as tenant_documents

LOGGER = "langchain_graphrag_milvus"


def ids(docs: list[Document]) -> list[str | None]:
    return [d.id for d in docs]


# ------------------------------------------------------------------ 4. a saved index that heals
def _truncate(path: Path) -> None:
    file = path / "rel_subject.npy"
    file.write_bytes(file.read_bytes()[:-7])


def _flip_a_byte(path: Path) -> None:  # same length, other content: only the checksum sees it
    file = path / "ent_rel_indices.npy"
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF
    file.write_bytes(bytes(data))


DAMAGE = {
    "truncated .npy": _truncate,
    "altered byte": _flip_a_byte,
    "invalid manifest.json": lambda p: (p / "manifest.json").write_text("{not json", encoding="utf-8"),
    "manifest of another shape": lambda p: (p / "manifest.json").write_text("[1, 2]", encoding="utf-8"),
    "missing .npy": lambda p: (p / "passage_offsets.npy").unlink(),
    "missing manifest": lambda p: (p / "manifest.json").unlink(),
}


async def test_a_damaged_index_is_rebuilt_with_a_warning_or_refused(make_store, retrieve, tmp_path, caplog) -> None:
    graph_path = tmp_path / "graph-index"
    writer = make_store(LexicalEmbeddings(), graph_path=graph_path)
    writer.add_records(nano_dataset())
    expected = ids(MilvusGraphRetriever(store=writer, k=3).invoke(NANO_QUESTION))
    persist.verify(graph_path)  # saved with lengths and checksums of every file
    for what, damage in DAMAGE.items():
        damage(graph_path)
        strict = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=graph_path,
                            on_stale="error")  # fmt: skip
        with pytest.raises(CorruptIndexError, match="graph_path=.*graph-index") as err:
            await retrieve(MilvusGraphRetriever(store=strict, k=3), NANO_QUESTION)
        assert isinstance(err.value, StaleIndexError), what
        caplog.clear()
        reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=graph_path)
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            assert ids(await retrieve(MilvusGraphRetriever(store=reader, k=3), NANO_QUESTION)) == expected, what
        assert "is damaged" in caplog.text and "graph-index" in caplog.text, what
        persist.verify(graph_path)  # healed: rewritten from Milvus
        assert persist.load(graph_path).n_relations == writer.graph.n_relations


async def test_a_stale_index_names_graph_path(make_store, tmp_path) -> None:
    graph_path = tmp_path / "graph-index"
    writer = make_store(LexicalEmbeddings(), graph_path=graph_path)
    writer.add_records(nano_dataset()[:3])
    writer.graph  # noqa: B018  (built, hence saved)
    assert (graph_path / "manifest.json").exists()
    other = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix)  # no graph_path: does not save
    other.add_records(nano_dataset()[3:])
    strict = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=graph_path, on_stale="error")
    with pytest.raises(StaleIndexError, match="graph_path=.*graph-index") as err:
        strict.graph  # noqa: B018
    assert not isinstance(err.value, CorruptIndexError)


def test_persist_refuses_inconsistent_files(tmp_path) -> None:
    from langchain_graphrag_milvus.graph import GraphIndex

    graph = GraphIndex.from_relations(
        relation_keys=[1, 2], subject_keys=[10, 20], object_keys=[20, 30], passage_ids=[["p1"], ["p2", "p1"]]
    )
    path = graph.save(tmp_path / "g", fingerprint={"generation": 1})
    assert persist.load(path).n_relations == 2
    manifest = persist.read_manifest(path)
    assert set(manifest["files"]) == {f.name for f in path.glob("*.npy")}
    # a consistent but wrong manifest (counts edited, checksums recomputed) is still refused
    manifest["relations"] = 3
    (path / "manifest.json").write_text(__import__("json").dumps(manifest), encoding="utf-8")
    with pytest.raises(persist.IndexFileError, match="does not match its manifest"):
        persist.load(path)
    np.save(path / "rel_subject.npy", np.zeros(5, np.int32))  # arrays that disagree with each other
    manifest["relations"] = 2
    manifest["files"]["rel_subject.npy"] = {
        "bytes": (path / "rel_subject.npy").stat().st_size,
        "crc32": persist.file_checksum(path / "rel_subject.npy"),
    }
    (path / "manifest.json").write_text(__import__("json").dumps(manifest), encoding="utf-8")
    with pytest.raises(persist.IndexFileError, match="disagree"):
        persist.load(path)
    manifest["files"]["../escape.npy"] = {"bytes": 1, "crc32": 0}
    with pytest.raises(persist.IndexFileError, match="invalid file entry"):
        persist.verify(path, manifest)
