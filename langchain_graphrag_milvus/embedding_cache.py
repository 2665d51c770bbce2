"""An on-disk cache in front of any LangChain ``Embeddings`` (sqlite, standard library).

Vectors are stored per (namespace, text hash), so a re-run of an evaluation or an ingest
with the same model embeds nothing twice. Use one namespace per model.

Example:
    >>> import tempfile
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> path = tempfile.mkdtemp() + "/emb.sqlite"
    >>> cached = CachedEmbeddings(DeterministicFakeEmbedding(size=4), path, namespace="fake-4")
    >>> a = cached.embed_documents(["x", "y"])
    >>> cached.embed_documents(["y", "x"])[1] == a[0] and cached.hits == 2
    True
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["CachedEmbeddings"]


class CachedEmbeddings(Embeddings):
    """Embeddings with a persistent sqlite cache.

    Args:
        base: The model that computes vectors on a cache miss.
        path: The sqlite file (created with its directory).
        namespace: Keeps vectors of different models apart (e.g. the model name).
        cache_queries: Also cache ``embed_query`` (off by default: queries rarely repeat).
    """

    def __init__(
        self, base: Embeddings, path: str | os.PathLike[str], *, namespace: str, cache_queries: bool = False
    ) -> None:
        self.base = base
        self.namespace = namespace
        self.cache_queries = cache_queries
        self.hits = 0
        self.misses = 0
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        self._conn.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self._conn.commit()
        self._lock = threading.Lock()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.namespace}\x1f{text}".encode()).hexdigest()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors for ``texts``, computing (in one call to the model) only the missing ones."""
        keys = [self._key(t) for t in texts]
        found: dict[str, list[float]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                rows = self._conn.execute(
                    f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                found.update((k, np.frombuffer(v, dtype=np.float32).tolist()) for k, v in rows)
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self.base.embed_documents(missing)
            # stored as float32; return the same rounding on a miss as on a later hit
            new = {self._key(t): np.asarray(v, dtype=np.float32) for t, v in zip(missing, vectors)}
            with self._lock:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)",
                    [(k, v.tobytes()) for k, v in new.items()],
                )
                self._conn.commit()
            found.update((k, v.tolist()) for k, v in new.items())
        return [found[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        """A query vector (cached only with ``cache_queries``)."""
        if self.cache_queries:
            return self.embed_documents([text])[0]
        return self.base.embed_query(text)

    def close(self) -> None:
        """Close the sqlite connection."""
        with self._lock:
            self._conn.close()
