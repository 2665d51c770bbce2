"""The graph and path pipelines driven by a scripted executor: the requests they make, and their result.

No Milvus and no model: the graph is built in memory, every search, embedding and fetch is
answered from the script (see ``scripted.py``), so each test states exactly which I/O a
retrieval performs, with which limits and filters, and what it makes of the answers.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from langchain_graphrag_milvus.graph import GraphIndex, aggregated_index
from langchain_graphrag_milvus.graph.ids import id_to_key
from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.retrieval.documents import (
    NO_GRAPH_EVENT,
    NO_GRAPH_IN_FILTER_RANKED_BY,
    NO_GRAPH_RANKED_BY,
)
from langchain_graphrag_milvus.retrieval.effects import (
    CheckGraph,
    Compute,
    Embed,
    EntityNames,
    Fetch,
    Gather,
    GetGraph,
    Invoke,
    LinkEntities,
    Notify,
    Search,
    ViewOf,
)
from langchain_graphrag_milvus.retrieval.graph_pipeline import PASSAGE_FIELDS, graph_pipeline, naive_pipeline
from langchain_graphrag_milvus.retrieval.params import PathParams, RetrievalParams
from langchain_graphrag_milvus.retrieval.path_pipeline import NO_PATH_EVENT, path_pipeline
from langchain_graphrag_milvus.retrieval.stages import RELATION_FIELDS, relation_similarities
from langchain_graphrag_milvus.text.names import entity_id, relation_id, relation_text

from .scripted import Step, run_script

TRIPLETS = {
    "p_jakob": [
        ("Jakob Bernoulli", "was the older brother of", "Johann Bernoulli"),
        ("Jakob Bernoulli", "is known for", "Bernoulli numbers"),
    ],
    "p_johann": [("Johann Bernoulli", "worked on", "calculus"), ("Johann Bernoulli", "mentored", "Leonhard Euler")],
    "p_daniel": [
        ("Daniel Bernoulli", "was the son of", "Johann Bernoulli"),
        ("Daniel Bernoulli", "made major contributions to", "fluid dynamics"),
    ],
    "p_euler": [("Leonhard Euler", "was a student of", "Johann Bernoulli"), ("Leonhard Euler", "was born in", "Basel")],
    "p_apollo": [("Apollo 11", "landed on", "the Moon")],
}
QUERY = "What contribution did the son of Euler's teacher make?"
Q_VEC = [1.0, 0.0, 0.0]
E_VEC = [0.0, 1.0, 0.0]


def rid(s: str, p: str, o: str) -> str:
    return relation_id(s, p, o)


def build_graph() -> GraphIndex:
    rows = [(t, pid) for pid, ts in TRIPLETS.items() for t in ts]
    return GraphIndex.from_relations(
        relation_keys=[id_to_key(rid(*t)) for t, _ in rows],
        subject_keys=[id_to_key(entity_id(t[0])) for t, _ in rows],
        object_keys=[id_to_key(entity_id(t[2])) for t, _ in rows],
        passage_ids=[[pid] for _, pid in rows],
    )


def relation_hit(triplet: tuple[str, str, str], score: float) -> Hit:
    pid = next(p for p, ts in TRIPLETS.items() if triplet in ts)
    fields = {"text": relation_text(*triplet), "passage_ids": [pid], "predicate": triplet[1]}
    return Hit(rid(*triplet), score, fields)


def passage_row(pid: str) -> dict[str, Any]:
    return {"pk": pid, "text": f"text of {pid}", "$meta": {"source": f"{pid}.txt"}}


STUDENT = ("Leonhard Euler", "was a student of", "Johann Bernoulli")
SON = ("Daniel Bernoulli", "was the son of", "Johann Bernoulli")
MENTORED = ("Johann Bernoulli", "mentored", "Leonhard Euler")
RELATION_HITS = [relation_hit(STUDENT, 0.8), relation_hit(SON, 0.7), relation_hit(MENTORED, 0.6)]
PASSAGE_HITS = [Hit("p_euler", 0.6, passage_row("p_euler")), Hit("p_daniel", 0.5, passage_row("p_daniel"))]


def searches_are(*expected: tuple[str, int, str | None]) -> Any:
    """A check of a Gather of searches: (kind, limit, filter) of each, in order."""

    def check(gather: Gather) -> bool:
        got = [(s.kind, s.limit, s.filter_expr) for s in gather.effects if isinstance(s, Search)]
        return got == list(expected) and checks_the_graph_last(gather)

    return check


def checks_the_graph_last(gather: Gather) -> bool:
    """The graph pipeline's first Gather: its searches, then the store's freshness check (no round trip of its own)."""
    return isinstance(gather.effects[-1], CheckGraph) and sum(isinstance(e, CheckGraph) for e in gather.effects) == 1


def rows_for(fetch: Fetch) -> dict[str, dict[str, Any]]:
    return {pid: passage_row(pid) for pid in fetch.ids}


def head(
    graph: GraphIndex, *, filter_expr: str | None = None, limits: tuple[int, int] = (50, 20), view: Any = None
) -> list[Step]:
    """The steps every default retrieval starts with: linker and query embedding together, graph (and view), searches.

    "Leonhard Euler" is exactly a graph entity: under ``ranking="ppr"`` it is neither
    embedded nor searched, so the query's embedding, made while the linker ran, is the only
    one, and only relations and passages are searched. The passage search reads the dense top 20:
    the default fuses a query with no entity seed with the dense order (``fuse_dense_unlinked``),
    and whether it has one is known only after these searches.
    """
    relation_limit, passage_limit = limits
    with_view = [Step(ViewOf, view, lambda v: v.filter_expr == filter_expr and v.graph is graph)] if view else []
    return [
        linker_and_query_embedding(["Leonhard Euler"], filter_expr),
        Step(GetGraph, graph, lambda g: g.defer_check),
        *with_view,
        Step(
            Gather,
            [[RELATION_HITS], [PASSAGE_HITS], False],
            searches_are(("relations", relation_limit, None), ("passages", passage_limit, filter_expr)),
        ),
    ]


def linker_and_query_embedding(names: list[str], filter_expr: str | None = None) -> Step:
    """The first request of a default retrieval: the offline linker and the query's embedding, in one Gather."""

    def check(g: Gather) -> bool:
        link, embed = g.effects
        return (
            isinstance(link, LinkEntities)
            and (link.query, link.filter_expr) == (QUERY, filter_expr)
            and isinstance(embed, Embed)
            and embed.texts == (QUERY,)
        )

    return Step(Gather, [names, [Q_VEC]], check)


def passage_ids_in(filter_expr: str | None) -> list[str]:
    """The passage ids a ``pk in [...]`` restriction names."""
    return [pid for pid in TRIPLETS if f'"{pid}"' in (filter_expr or "")]


def fetch_step(filter_expr: str | None = None, score: float = 0.3) -> Step:
    """The read that ends a graph retrieval: the passages not in hand, by a search restricted to them.

    One search scores them against the query (``_similarity``) and returns their rows; it is
    answered with a hit of ``score`` for every id asked.
    """

    def check(s: Search) -> bool:
        ok_filter = filter_expr is None or s.filter_expr.startswith(f"({filter_expr}) and ")
        return s.kind == "passages" and s.output_fields == PASSAGE_FIELDS and ok_filter and "pk in" in s.filter_expr

    def reply(s: Search) -> list[list[Hit]]:
        return [[Hit(pid, score, passage_row(pid)) for pid in passage_ids_in(s.filter_expr)]]

    return Step(Search, reply=reply, check=check)


def test_default_graph_pipeline_end_to_end() -> None:
    graph = build_graph()
    p = RetrievalParams(k=2)
    docs, requests = run_script(
        graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), [*head(graph), fetch_step()]
    )
    # no reranker: no pool search, no LLM call; the passage fetch asks only for the returned passages
    # the passage search did not bring (p_euler's row came with its hit)
    assert [type(r).__name__ for r in requests] == ["Gather", "GetGraph", "Gather", "Search"]
    assert passage_ids_in(requests[-1].filter_expr) == ["p_johann"] and requests[-1].limit == 1
    assert [d.id for d in docs] == ["p_euler", "p_johann"]  # the question's entity, then its teacher (the bridge)
    first = docs[0]
    assert first.page_content == "text of p_euler" and first.metadata["source"] == "p_euler.txt"
    assert first.metadata["_ranked_by"] == "graph" and first.metadata["_passage_id"] == "p_euler"
    assert first.metadata["_relation_ids"] == [rid(*STUDENT)] and first.metadata["_hops"] == 0
    assert docs[1].metadata["_relation_ids"] == [rid(*MENTORED)]
    # scores in the returned order (1 / rank); the PageRank mass kept as _raw_score; similarity from the searches
    assert [d.metadata["_score"] for d in docs] == [1.0, 0.5]
    assert 0 < docs[1].metadata["_raw_score"] < 1 and docs[1].metadata["_raw_score"] != 0.5
    assert [d.metadata["_similarity"] for d in docs] == [0.6, 0.3]


def test_a_passage_the_restricted_search_misses_is_fetched_unscored() -> None:
    graph = build_graph()
    missed = Step(Search, [[]], lambda s: s.kind == "passages" and "pk in" in s.filter_expr)
    fetch = Step(Fetch, reply=rows_for, check=lambda f: f.kind == "passages" and f.ids == ("p_johann",))
    docs, _ = run_script(
        graph_pipeline(QUERY, RetrievalParams(k=2), entity_extractor=None, reranker=None),
        [*head(graph), missed, fetch],
    )
    assert [d.id for d in docs] == ["p_euler", "p_johann"] and "_similarity" not in docs[1].metadata


def test_min_score_drops_passages_below_it_whatever_ranked_them() -> None:
    graph = build_graph()
    p = RetrievalParams(k=2, min_score=0.55)
    docs, _ = run_script(
        graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), [*head(graph), fetch_step(score=0.3)]
    )
    # p_johann (graph, similarity 0.3) is cut; p_daniel (0.5) too: no padding below the cut-off
    assert [d.id for d in docs] == ["p_euler"] and docs[0].metadata["_score"] == 1.0
    docs, _ = run_script(
        graph_pipeline(QUERY, RetrievalParams(k=2, min_score=0.4), entity_extractor=None, reranker=None),
        [*head(graph), fetch_step(score=0.3)],
    )
    assert [d.id for d in docs] == ["p_euler", "p_daniel"]  # the fill from the passage search, above the cut-off
    assert docs[1].metadata["_ranked_by"] == "passage_similarity" and docs[1].metadata["_score"] == 0.5


def test_a_store_without_relations_ranks_by_similarity_and_says_so() -> None:
    empty = GraphIndex.empty()
    script = [
        linker_and_query_embedding([]),
        Step(GetGraph, empty),
        Step(Gather, [[[]], [PASSAGE_HITS], False], checks_the_graph_last),
        Step(Notify, None, lambda n: n.name == NO_GRAPH_EVENT and "no relations" in n.data["reason"]),
    ]
    docs, _ = run_script(graph_pipeline(QUERY, RetrievalParams(k=2), entity_extractor=None, reranker=None), script)
    assert [d.id for d in docs] == ["p_euler", "p_daniel"]
    assert all(d.metadata["_ranked_by"] == NO_GRAPH_RANKED_BY for d in docs)
    assert [d.metadata["_score"] for d in docs] == [1.0, 0.5] and docs[1].metadata["_similarity"] == 0.5


ALL_RELATIONS = [t for ts in TRIPLETS.values() for t in ts]


def _pool_search() -> Step:
    """The reranker's pool: the ranked passages' relations *not already in hand*, in one restricted search."""
    in_hand = {h.id for h in RELATION_HITS}

    def check(s: Search) -> bool:
        asked = {rid(*t) for t in ALL_RELATIONS if rid(*t) in (s.filter_expr or "")}
        return s.kind == "relations" and s.limit == len(asked) > 0 and not asked & in_hand

    def reply(s: Search) -> list[list[Hit]]:  # a lower score for every relation that was not a top hit
        return [[relation_hit(t, 0.1) for t in ALL_RELATIONS if rid(*t) in (s.filter_expr or "")]]

    return Step(Search, reply=reply, check=check)


def test_rerank_falls_back_to_the_graph_order_when_the_reranker_fails(caplog: pytest.LogCaptureFixture) -> None:
    graph = build_graph()
    p = RetrievalParams(k=2)
    reranker: Any = object()  # never called: the scripted executor answers the Invoke
    script = [
        *head(graph, limits=(50, 50)),  # with a reranker, 50 passages feed the pool
        _pool_search(),
        Step(Invoke, raises=RuntimeError("LLM down"), check=lambda i: i.runnable is reranker),
        fetch_step(),
    ]
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        docs, requests = run_script(graph_pipeline(QUERY, p, entity_extractor=None, reranker=reranker), script)
    invoke = next(r for r in requests if isinstance(r, Invoke))
    assert invoke.input["question"] == QUERY and invoke.input["select"] == 3
    assert len(invoke.input["relations"]) == len(invoke.input["candidates"]) >= 2
    assert "reranker failed (LLM down)" in caplog.text
    assert [d.id for d in docs] == ["p_euler", "p_johann"]  # the no-LLM order, as without a reranker
    assert all(d.metadata["_ranked_by"] == "graph" for d in docs)


def test_rerank_choice_comes_first() -> None:
    graph = build_graph()
    p = RetrievalParams(k=2)
    reranker: Any = object()

    def choose_daniel(invoke: Invoke) -> list[int]:  # the position of p_daniel's relation in the pool shown
        return [next(i for i, c in enumerate(invoke.input["candidates"]) if c["passage_ids"] == ["p_daniel"])]

    script = [*head(graph, limits=(50, 50)), _pool_search(), Step(Invoke, reply=choose_daniel)]  # rows in hand
    docs, _ = run_script(graph_pipeline(QUERY, p, entity_extractor=None, reranker=reranker), script)
    assert docs[0].id == "p_daniel" and docs[0].metadata["_ranked_by"] == "llm"
    assert docs[0].metadata["_relation_ids"][0] == rid(*SON)


def test_a_filter_reaches_every_request_and_restricts_the_graph() -> None:
    graph = build_graph()
    tenant = "tenant == 'a'"
    allowed = [int(i) for i in graph.passages.find(["p_euler", "p_daniel"])]
    p = RetrievalParams(k=2, filter=tenant)
    script = [
        # other tenants' hits are dropped: relations are searched 4x deeper
        *head(graph, filter_expr=tenant, limits=(200, 20), view=graph.view(allowed)),
    ]  # both passages returned came with the (filtered) passage search: no fetch
    docs, requests = run_script(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), script)
    assert {d.id for d in docs} <= {"p_euler", "p_daniel"}  # never p_johann, outside the view
    assert docs[0].id == "p_euler"
    for d in docs:  # relations shown are those of allowed passages only
        assert rid(*MENTORED) not in d.metadata.get("_relation_ids", [])


def test_naive_pipeline_requests() -> None:
    docs, requests = run_script(
        naive_pipeline("q", 2, "x == 1"),
        [
            Step(Embed, [Q_VEC], lambda e: e.texts == ("q",)),
            Step(
                Search,
                [PASSAGE_HITS],
                lambda s: (
                    (s.kind, s.limit, s.filter_expr, s.output_fields) == ("passages", 2, "x == 1", PASSAGE_FIELDS)
                ),
            ),
        ],
    )
    assert [d.id for d in docs] == ["p_euler", "p_daniel"]
    assert docs[0].metadata["_ranked_by"] == "passage_similarity" and docs[0].metadata["_score"] == 0.6
    assert docs[0].metadata["_similarity"] == 0.6


def test_naive_min_score_cuts_without_padding() -> None:
    script = [Step(Embed, [Q_VEC]), Step(Search, [PASSAGE_HITS])]
    docs, _ = run_script(naive_pipeline("q", 2, None, min_score=0.55), script)
    assert [d.id for d in docs] == ["p_euler"]


def test_path_pipeline_finds_the_path_through_the_teacher() -> None:
    graph = build_graph()
    p = PathParams(entities=("Leonhard Euler", "Daniel Bernoulli"))
    names = {entity_id(n): n for ts in TRIPLETS.values() for t in ts for n in (t[0], t[2])}
    script = [
        Step(GetGraph, graph),  # entities given: no linker, no extractor
        Step(Embed, [Q_VEC], lambda e: e.texts == ("how?",)),  # both names exact: only the query is embedded
        Step(Compute, aggregated_index(graph), lambda c: c.args == (graph, None)),
        Step(
            Gather,
            [[[relation_hit(STUDENT, 0.8), relation_hit(SON, 0.7), relation_hit(MENTORED, 0.6)]]],
            lambda g: [(s.kind, s.limit) for s in g.effects] == [("relations", 3)],
        ),
        Step(EntityNames, reply=lambda e: {i: names.get(i, "") for i in e.ids}),
    ]
    (doc,), _ = run_script(path_pipeline("how?", p, entity_extractor=None), script)
    assert doc.metadata["_path"] == ["Leonhard Euler", "Johann Bernoulli", "Daniel Bernoulli"]
    assert doc.metadata["_hops"] == 2 and doc.metadata["_pair"] == ["Leonhard Euler", "Daniel Bernoulli"]
    # both parallel relations of the first edge, most similar first; then the second edge
    assert doc.metadata["_relation_ids"] == [rid(*STUDENT), rid(*MENTORED), rid(*SON)]
    assert doc.metadata["_passage_ids"] == ["p_euler", "p_johann", "p_daniel"]
    assert doc.page_content.splitlines()[0] == "Leonhard Euler → Johann Bernoulli → Daniel Bernoulli"
    assert doc.metadata["_raw_score"] == pytest.approx((0.8 + 0.7) / 2) and doc.metadata["_score"] == 1.0


def test_path_pipeline_without_a_path_notifies_and_returns_nothing() -> None:
    graph = build_graph()
    p = PathParams(entities=("Leonhard Euler", "Apollo 11"))
    docs, requests = run_script(
        path_pipeline("how?", p, entity_extractor=None),
        [
            Step(GetGraph, graph),
            Step(Embed, [Q_VEC]),
            Step(Compute, aggregated_index(graph)),
            Step(Notify, None, lambda n: n.name == NO_PATH_EVENT),
        ],
    )
    assert docs == []
    event = requests[-1].data
    assert event["entities"] == ["Leonhard Euler", "Apollo 11"]
    assert event["reason"].startswith("no path found (Leonhard Euler – Apollo 11:")
    assert event["pairs"][0]["paths"] == 0


def test_path_pipeline_with_one_known_entity_says_so() -> None:
    graph = build_graph()
    p = PathParams(entities=("Leonhard Euler", "Nobody"))
    docs, requests = run_script(
        path_pipeline("how?", p, entity_extractor=None),
        [
            Step(GetGraph, graph),
            Step(Embed, [Q_VEC, E_VEC], lambda e: e.texts == ("how?", "Nobody")),  # the unknown name is embedded
            Step(Search, [[Hit(entity_id("Basel"), 0.3, {})]], lambda s: s.kind == "entities" and s.limit == 3),
            Step(Notify, None),
        ],
    )
    assert docs == []
    assert requests[-1].data["reason"] == "need two entities in the graph; found 1 (Leonhard Euler); not found: Nobody"


def test_relation_similarities_search_only_what_is_not_in_hand() -> None:
    known = [relation_hit(STUDENT, 0.8), relation_hit(SON, 0.7)]
    ids = [rid(*STUDENT), rid(*MENTORED), rid(*SON)]
    # one search for the one relation not in hand; the answer merges both, most similar first
    hits, requests = run_script(
        relation_similarities(tuple(Q_VEC), ids, known),
        [Step(Search, [[relation_hit(MENTORED, 0.75)]], lambda s: s.limit == 1 and rid(*MENTORED) in s.filter_expr)],
    )
    assert [h.id for h in hits] == [rid(*STUDENT), rid(*MENTORED), rid(*SON)]
    assert requests[0].output_fields == RELATION_FIELDS
    # everything in hand: no search at all
    hits, requests = run_script(relation_similarities(tuple(Q_VEC), [rid(*SON), rid(*STUDENT)], known), [])
    assert [h.id for h in hits] == [rid(*STUDENT), rid(*SON)] and requests == []
    # nothing in hand: exactly the search's answer
    answer = [relation_hit(SON, 0.7), relation_hit(STUDENT, 0.71)]
    hits, _ = run_script(relation_similarities(tuple(Q_VEC), ids, []), [Step(Search, [answer])])
    assert hits == answer


def test_a_filter_without_relations_ranks_by_similarity_and_says_so() -> None:
    graph = build_graph()
    empty_view = graph.view([])  # e.g. a tenant that ingested without an extractor
    script = [
        Step(GetGraph, graph),
        Step(ViewOf, empty_view),
        Step(Embed, [Q_VEC]),
        Step(Gather, [[RELATION_HITS], [PASSAGE_HITS], False], checks_the_graph_last),
        Step(Notify, None, lambda n: n.name == NO_GRAPH_EVENT and "filter's part" in n.data["reason"]),
    ]
    p = RetrievalParams(k=2, filter="tenant == 'b'", entities=())
    docs, _ = run_script(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), script)
    assert [d.id for d in docs] == ["p_euler", "p_daniel"]
    assert all(d.metadata["_ranked_by"] == NO_GRAPH_IN_FILTER_RANKED_BY for d in docs)
