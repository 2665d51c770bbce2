"""The end of a query whose searches the store answered from the client alone (:class:`~.effects.SearchHeld`).

With the entity, relation and passage vectors held in the client (``local_search``, on Milvus
Lite by default), the first searches make no Milvus call, and the walk ranks its passages
before any. What is left is **one** Milvus wave: the rows the query returns, read by key,
sent together with the check of the stamp the held rows are of (:class:`~.effects.Unchanged`)
and the store's freshness check (:class:`~.effects.CheckGraph`). If another writer changed the
store meanwhile (the stamp moved, or the graph was reloaded), the answer is dropped and the
caller searches again the usual way; a row deleted is absent from the read, so never returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.retrieval.documents import PASSAGE_FIELDS, ranked_documents
from langchain_graphrag_milvus.retrieval.effects import (
    CheckGraph,
    Fetch,
    Gather,
    Search,
    SearchHeld,
    Steps,
    Unchanged,
    ask,
)
from langchain_graphrag_milvus.retrieval.ranked import QueryHits, Ranked

__all__ = ["held_documents"]


def held_documents(
    final: Sequence[Ranked], q: QueryHits, k: int, min_score: float | None, fill_by: str
) -> Steps[list[Document] | None]:
    """The Documents of ``final`` (then dense hits up to ``k``), their rows read in one wave; None: search again.

    The similarity of a ranked passage dense search did not return is scored in the client too
    (a held search restricted to those ids), so only the rows' text and metadata are read.
    """
    ids = list(dict.fromkeys(r.id for r in final))
    scores = {h.id: float(h.score) for h in q.passage_hits}
    unscored = tuple(i for i in ids if i not in scores)
    if unscored:
        within = Search("passages", (q.qvec,), len(unscored), expr.in_list("pk", list(unscored)), ("pk",), unscored)
        answer = yield from ask(SearchHeld((within,)))
        if answer is None or answer[1] != q.held:
            return None
        scores.update((h.id, float(h.score)) for h in answer[0][0][0])
    chosen = set(ids)
    fill_ids = [h.id for h in q.passage_hits if h.id not in chosen][:k]
    wanted = tuple(dict.fromkeys([*ids, *fill_ids]))
    read = Fetch("passages", wanted, PASSAGE_FIELDS)
    fetched, unchanged, moved_on = yield from ask(Gather((read, Unchanged(q.held), CheckGraph(q.graph))))
    if not unchanged or moved_on:
        return None
    rows = {i: (dict(fetched[i]), scores.get(i)) for i in ids if i in fetched}
    fill = [Hit(h.id, h.score, dict(fetched[h.id])) for h in q.passage_hits if h.id in fetched]
    return ranked_documents(final, rows, fill, k, min_score=min_score, fill_ranked_by=fill_by)
