"""What the ranking stages pass along: the first searches' hits, candidate relations, ranked passages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.milvus.reads import Hit

__all__ = ["Candidate", "Ranked", "QueryHits", "StageSettings"]


class StageSettings(Protocol):
    """The shared settings the ranking stages read (a :class:`~.params.RetrievalParams`)."""

    @property
    def k(self) -> int: ...  # noqa: D102
    @property
    def relation_top_k(self) -> int: ...  # noqa: D102
    @property
    def max_neighbors(self) -> int | None: ...  # noqa: D102
    @property
    def max_frontier(self) -> int | None: ...  # noqa: D102
    @property
    def max_candidates(self) -> int: ...  # noqa: D102
    @property
    def walk_limit(self) -> int: ...  # noqa: D102


@dataclass
class Candidate:
    """A relation in the candidate pool (what a reranker chooses from)."""

    id: str
    text: str
    passage_ids: list[str]
    similarity: float
    hop: int | None = None


@dataclass
class Ranked:
    """A passage on its way to becoming a Document."""

    id: str
    score: float
    ranked_by: str
    relations: list[Candidate] = field(default_factory=list)
    hops: int | None = None


@dataclass
class QueryHits:
    """What the first searches found for a query: the ranking stages' input.

    ``relation_hits`` are scored against ``qvec`` with :data:`RELATION_FIELDS`; the stages
    reuse those scores instead of searching the same relations again.
    """

    graph: GraphIndex
    view: GraphView | None
    query: str
    qvec: tuple[float, ...]
    names: list[str]
    entity_hits: Sequence[Sequence[Hit]]
    relation_hits: Sequence[Hit]
    passage_hits: Sequence[Hit]
    #: The stamp the hits were scored at when the store answered them from the client alone
    #: (:class:`~.effects.SearchHeld`; the passage hits then carry no fields), else None.
    held: Any = None
    #: The passage hits of each of the question's own sub-questions (:func:`~..text.clauses.split_clauses`;
    #: ``()`` when it asks one thing or the ranking does not search them).
    clause_passage_hits: Sequence[Sequence[Hit]] = ()
