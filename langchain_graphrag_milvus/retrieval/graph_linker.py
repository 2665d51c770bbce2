"""The store's offline linker: entity passage counts from the current graph, word counts from the passages.

:func:`graph_linker` is the factory a store gives its graph cache (names → :class:`EntityLinker`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker, NameFrequency
from langchain_graphrag_milvus.text.passage_words import PassageWordFrequency

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex, GraphView

__all__ = ["EntityLinker", "LinkerFactory", "graph_frequency", "graph_linker", "view_frequency"]


def graph_frequency(current: Callable[[], GraphIndex]) -> NameFrequency:
    """A :data:`NameFrequency` over the graph ``current()`` returns when it is called.

    Counts are the passages whose relations name the entity (0: not in the graph).
    """

    def frequency(names: Sequence[str]) -> tuple[list[int], int]:
        from langchain_graphrag_milvus.retrieval.stages import exact_entities

        graph = current()
        found = exact_entities(graph, list(names), None)
        counts = iter(graph.entity_passage_counts(found[found >= 0]).tolist())
        return [next(counts) if e >= 0 else 0 for e in found.tolist()], graph.n_passages

    return frequency


class LinkerFactory:
    """Names → :class:`EntityLinker` over the graph ``current()`` returns (see :func:`graph_linker`)."""

    def __init__(self, current: Callable[[], GraphIndex], texts: Callable[[], Iterable[str]] | None) -> None:
        self.current = current
        self.text_frequency = None if texts is None else PassageWordFrequency(texts, current)

    def __call__(self, names: Iterable[str]) -> EntityLinker:
        """The linker over all the store's names: passage counts of the graph, word counts of every passage."""
        return self._make(names, self.text_frequency)

    def for_view(self, names: Iterable[str], graph: GraphIndex, view: GraphView) -> EntityLinker:
        """A tenant view's linker: nothing outside the view decides what a question links.

        Passage counts inside the view only, and no keyphraseness rule (its word counts are every
        tenant's passages').
        """
        return EntityLinker(
            names, require_capital=True, partial=True, frequency=view_frequency(graph, view), text_frequency=None
        )

    def _make(self, names: Iterable[str], text_frequency: NameFrequency | None) -> EntityLinker:
        frequency = graph_frequency(self.current)
        return EntityLinker(
            names, require_capital=True, partial=True, frequency=frequency, text_frequency=text_frequency
        )


def view_frequency(graph: GraphIndex, view: GraphView) -> NameFrequency:
    """A :data:`NameFrequency` inside a filter's view.

    Counts are the view's passages whose relations (of the view) name the entity (0: not in the
    view); the total is the view's passages.
    """
    n_passages = int(view.passages.sum())

    def frequency(names: Sequence[str]) -> tuple[list[int], int]:
        from langchain_graphrag_milvus.retrieval.stages import exact_entities

        found = exact_entities(graph, list(names), view)
        counts = iter(graph.entity_passage_counts(found[found >= 0], view.relations, view.passages).tolist())
        return [next(counts) if e >= 0 else 0 for e in found.tolist()], n_passages

    return frequency


def graph_linker(current: Callable[[], GraphIndex], texts: Callable[[], Iterable[str]] | None = None) -> LinkerFactory:
    """The store's linker factory: names as a question writes them, partial names, passage counts from ``current()``.

    ``texts``: reads every passage's text; the words' passage counts (the keyphraseness rule) are made
    from it once per graph ``current()`` returns. A filter's view gets its linker from
    :meth:`LinkerFactory.for_view`, without them.
    """
    return LinkerFactory(current, texts)
