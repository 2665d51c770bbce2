"""The store's offline linker: entity passage counts from the current graph, word counts from the passages.

:func:`graph_linker` is the factory a store gives its graph cache (names → :class:`EntityLinker`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker, NameFrequency
from langchain_graphrag_milvus.text.passage_words import PassageWordFrequency

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex

__all__ = ["EntityLinker", "graph_frequency", "graph_linker"]


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


def graph_linker(
    current: Callable[[], GraphIndex], texts: Callable[[], Iterable[str]] | None = None
) -> Callable[[Iterable[str]], EntityLinker]:
    """The store's linker factory: names as a question writes them, partial names, passage counts from ``current()``.

    ``texts``: reads every passage's text; the words' passage counts (the keyphraseness rule) are made
    from it once per graph ``current()`` returns.
    """
    text_frequency = None if texts is None else PassageWordFrequency(texts, current)
    return lambda names: EntityLinker(
        names, require_capital=True, partial=True, frequency=graph_frequency(current), text_frequency=text_frequency
    )
