"""``relation_scope="entities"``: the filter names exactly the linked entities' relations (by key, or by entity)."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ids import key_to_id
from langchain_graphrag_milvus.retrieval import graph_pipeline
from langchain_graphrag_milvus.retrieval.graph_pipeline import linked_relations_filter


def graph_of(pairs: list[tuple[int, int]]) -> GraphIndex:
    return GraphIndex.from_relations(
        relation_keys=np.arange(100, 100 + len(pairs), dtype=np.uint64),
        subject_keys=np.array([a for a, _ in pairs], np.uint64) + 1,
        object_keys=np.array([b for _, b in pairs], np.uint64) + 1,
        passage_ids=[[f"p{i % 7}"] for i in range(len(pairs))],
    )


def listed(text: str, field: str) -> set[str]:
    """The ids of ``<field> in [...]`` in a filter built by ``expr`` (JSON string literals)."""
    start = text.index(f"{field} in [") + len(field) + 4
    return set(json.loads(text[start : text.index("]", start) + 1]))


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=60),
    picks=st.lists(st.integers(-1, 15), max_size=5),
    cap=st.integers(0, 80),
)
def test_the_filter_names_exactly_the_linked_entities_relations(pairs, picks, cap) -> None:
    g = graph_of(pairs)
    exact = [p if p < g.n_entities else -1 for p in picks]
    linked = sorted({e for e in exact if e >= 0})
    old = graph_pipeline.PK_SCOPE_MAX
    graph_pipeline.PK_SCOPE_MAX = cap
    try:
        got = linked_relations_filter(g, exact)
    finally:
        graph_pipeline.PK_SCOPE_MAX = old
    if not linked:
        assert got is None
        return
    want = {r for r in range(g.n_relations) if g.rel_subject[r] in linked or g.rel_object[r] in linked}
    degree = sum(len(g.ent_rel.row(e)) for e in linked)
    assert got is not None
    if want and degree <= cap:
        assert got.startswith("pk in") and listed(got, "pk") == {key_to_id(int(g.relations.keys[r])) for r in want}
    else:
        ids = {key_to_id(int(g.entities.keys[e])) for e in linked}
        assert listed(got, "subject_id") == ids == listed(got, "object_id")


def test_the_default_cap() -> None:
    hub = graph_of([(0, i) for i in range(1, graph_pipeline.PK_SCOPE_MAX + 2)])
    assert linked_relations_filter(hub, [1]).startswith("pk in")  # type: ignore[union-attr]
    assert "subject_id in" in linked_relations_filter(hub, [0])  # type: ignore[operator]
