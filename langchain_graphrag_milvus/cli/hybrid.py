"""The eval's hybrid baseline: BM25 + dense passage search, fused by reciprocal rank fusion.

What a user would pick instead of a graph: keyword search (BM25) and vector search over the
same passages, each list's rank turned into ``1 / (60 + rank)`` and summed (RRF, k = 60, as in
Cormack et al. 2009). Milvus Lite 3.2 has BM25 functions but the 2.3 server does not, so BM25
runs in-process with the ``bm25s`` library (the ``eval`` extra) over the passage texts read
from the store; the dense list is the store's own passage search (the ``naive`` method's).

Example:
    .. code-block:: python

        from langchain_graphrag_milvus.cli.hybrid import hybrid_retriever

        hybrid = hybrid_retriever(store, passage_ids, k=5)  # None without bm25s
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

__all__ = ["HybridRetriever", "hybrid_retriever", "rrf", "RRF_K", "SKIPPED"]

#: The RRF constant (Cormack et al.): a list's rank r contributes 1 / (RRF_K + r), r from 1.
RRF_K = 60

#: The one line the eval prints when bm25s is missing.
SKIPPED = "hybrid (BM25 + dense) skipped: bm25s is not installed (pip install 'langchain-graphrag-milvus[eval]')"


def rrf(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Ids by reciprocal rank fusion of ranked lists, best first (ties: first seen first)."""
    scores: dict[str, float] = {}
    for ranked in lists:
        for rank, pid in enumerate(dict.fromkeys(ranked), start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + rank)
    order = {pid: i for i, pid in enumerate(scores)}
    return sorted(scores, key=lambda pid: (-scores[pid], order[pid]))


class HybridRetriever(BaseRetriever):
    """BM25 (in-process) and dense search over a store's passages, fused by RRF.

    Build it with :func:`hybrid_retriever`. Each list contributes its top ``depth`` passages.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any
    bm25: Any
    ids: list[str]
    texts: dict[str, str]
    k: int = 5
    depth: int = 50

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        import bm25s

        dense = [str(d.id) for d in self.store.as_naive_retriever(k=self.depth).invoke(query)]
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        sparse: list[str] = []
        if self.ids and tokens and tokens[0]:  # a query of stopwords only has no BM25 list
            depth = min(self.depth, len(self.ids))
            docs, scores = self.bm25.retrieve(tokens, k=depth, show_progress=False)
            sparse = [self.ids[int(i)] for i, s in zip(docs[0], scores[0]) if s > 0]
        fused = rrf([dense, sparse])[: self.k]
        return [Document(id=pid, page_content=self.texts.get(pid, ""), metadata={"_passage_id": pid}) for pid in fused]


def hybrid_retriever(store: Any, passage_ids: Sequence[str], *, k: int = 5, depth: int = 50) -> HybridRetriever | None:
    """The hybrid baseline over ``passage_ids`` (texts read from the store); None without bm25s.

    Args:
        store: The ingested :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`.
        passage_ids: The corpus: ids of the store's passages (those it does not hold are skipped).
        k: Passages returned.
        depth: Passages taken from each list before fusion.
    """
    try:
        import bm25s
    except ImportError:
        return None
    rows = store.fetch("passages", list(passage_ids), ("text",))
    ids = [pid for pid in dict.fromkeys(passage_ids) if pid in rows]
    texts = {pid: str(rows[pid].get("text", "")) for pid in ids}
    index = bm25s.BM25()
    if ids:
        index.index(bm25s.tokenize([texts[i] for i in ids], stopwords="en", show_progress=False), show_progress=False)
    return HybridRetriever(store=store, bm25=index, ids=ids, texts=texts, k=k, depth=depth)
