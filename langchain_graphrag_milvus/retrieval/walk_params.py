"""The free constants of the chained-walk ranking (:mod:`.walk_ranking`): their one home.

:class:`WalkParams` declares each constant once (default, description, rule); the retriever's
``ranking="ppr"`` strategy (:class:`~langchain_graphrag_milvus.retrieval.rankings.PageRankWalk`)
derives from it, and the flat settings (``ppr_damping``...) take their defaults, descriptions
and rules from its fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_graphrag_milvus.retrieval.settings import (
    NON_NEGATIVE,
    POSITIVE,
    Rule,
    check_fields,
    is_real,
    one_of,
    param,
)

__all__ = ["AUTO_MID_PUSH_EPSILON", "AUTO_PUSH_RELATIONS", "AUTO_WALK_PUSH_RELATIONS", "WalkParams"]

#: From this many relations on, ``ppr_method="auto"`` solves by pushes at ``push_epsilon``
#: (``benchmarks/bench_query_path.py``), and ``relation_scope="auto"`` searches entity-scoped.
AUTO_PUSH_RELATIONS = 30_000
#: ``ppr_method="auto"`` solves by pushes from this many relations on, globally below (issue 25:
#: at 18,735 relations a push at :data:`AUTO_MID_PUSH_EPSILON` cost 13% less CPU than the settled
#: global solve, at 28,816 50% less; the three evaluation graphs hold 17k–29k).
AUTO_WALK_PUSH_RELATIONS = 15_000
#: The push tolerance of ``"auto"`` from :data:`AUTO_WALK_PUSH_RELATIONS` up to
#: :data:`AUTO_PUSH_RELATIONS` relations (``push_epsilon`` if smaller): on the three evaluation
#: graphs every question's Recall@2/@5 equals the global solver's (1e-4 lost a musique100 passage).
AUTO_MID_PUSH_EPSILON = 3e-5


@dataclass(frozen=True, kw_only=True)
class WalkParams:
    """The free constants of the chained-walk ranking (defaults chosen by cross-validation).

    The one home of their defaults and rules: ``ranking="ppr"`` is its subclass
    :class:`~langchain_graphrag_milvus.retrieval.rankings.PageRankWalk`.

    Attributes:
        relation_seeds: Most similar relations in the restart (0: none, and no relation search).
        passage_seeds: Most similar passages in the restart.
        temperature: Softmax temperature over their similarities (cosine units).
        damping: Probability of following an edge (``1 - damping``: of restarting).
        chain: Picks after which a continued walk ranks the rest (0: one walk only).
        chain_mode: What the continued walk restarts at besides the query's seeds:
            ``"entities"`` (the picked passages' entities the query does not name,
            weighted by the first walk) or ``"passages"`` (the picked passages).
        cover_query_entities: Drop the query entities a picked passage covers from the
            continued walk's restart.
        novel_seeds: Make the continued walk look only for evidence the picked passages do
            not already supply. ``"none"``: keep every seed. ``"entities"``: drop the bridge
            entities no other passage mentions (their restart mass can only flow back to
            what was picked). ``"all"``: also drop the relation seeds that belong to a
            picked passage and the picked passages among the passage seeds. Each group left
            is renormalised to one share (``chain_mode="entities"`` only). The default,
            ``"entities"``, is what every fold of the cross-validation over musique100
            (given and offline triplets) and hotpotqa100 (offline) chose
            (``benchmarks/README.md``); ``"all"`` loses 3–5 points of R@2.
        ppr_method: How each walk is solved. ``"global"``: power iteration over the whole
            graph (:func:`~langchain_graphrag_milvus.graph.ppr.personalized_pagerank`), exact;
            its cost grows with the graph (≈2.3 ms per walk at 10k relations, 23 ms at
            100k, 460 ms at 1M). ``"push"``: residual pushes from the seeds
            (:func:`~langchain_graphrag_milvus.graph.local_ppr.local_pagerank`), an
            approximation within ``push_epsilon`` whose cost follows the seeds'
            neighbourhood, not the graph's size. ``"auto"`` (default): ``"global"`` below
            :data:`AUTO_WALK_PUSH_RELATIONS` (15,000) relations; ``"push"`` from there on, at
            :data:`AUTO_MID_PUSH_EPSILON` (3e-5) below :data:`AUTO_PUSH_RELATIONS` (30,000)
            relations and at ``push_epsilon`` from there. On the three evaluation graphs (17k–29k
            relations) the pushes at 3e-5 give every question the global solver's Recall@2/@5
            at 50–87% of its CPU (issue 25, ``benchmarks/README.md``); from 30k relations on,
            the whole per-query library work is ≈10 ms with push at any size to 1M relations
            (``benchmarks/bench_query_path.py``).
        ppr_stop: When the global solver stops. ``"order"`` (default): as soon as the order
            of the passages the ranking reads (the ``k`` returned; the whole ``walk_limit``
            when a reranker's pool or the dense fusion reads deeper) is settled, by each
            passage's last change and the sweep's contraction
            (:func:`~langchain_graphrag_milvus.graph.ppr.passages_settled`), and at the
            L1 tolerance (1e-4) at the latest: about half the sweeps on the evaluation
            graphs, with the same top 5 as ``"residual"`` on all 404 of their walks and the
            same evaluation figures (``benchmarks/README.md``). ``"residual"``: at the L1
            tolerance only (the scores of before, bit for bit). The push solver has its own
            bound (``push_epsilon``).
        push_epsilon: Residual tolerance per unit of degree of ``"push"`` (and of
            ``"auto"`` from 30,000 relations; below, ``"auto"`` pushes to the smaller of this
            and 3e-5). The default, 1e-4, keeps the per-query library
            work under 10 ms at 1M relations; against the global solver it ranked within
            one or two questions on musique100 and hotpotqa100, inside the fold spread
            (1e-5: closer still, one hotpotqa question apart, ≈3× the work;
            ``benchmarks/README.md``).
    """

    relation_seeds: int = param(
        50, "Most similar relations seeding PageRank; 0: none, and no relation search.", NON_NEGATIVE
    )
    passage_seeds: int = param(3, "Most similar passages seeding PageRank.", POSITIVE)
    temperature: float = param(
        0.02,
        "Softmax temperature of the similarity seeds.",
        Rule(lambda v: isinstance(v, (int, float)) and v > 0, "must be positive", {"gt": 0}),
    )
    damping: float = param(
        0.85,
        "PageRank damping (follow-an-edge probability).",
        Rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)", {"ge": 0, "lt": 1}),
    )
    chain: int = param(1, "Picks after which a new walk continues from the picked passages' entities.", NON_NEGATIVE)
    chain_mode: str = param("entities", "", one_of("entities", "passages"))
    cover_query_entities: bool = param(True, "")
    novel_seeds: str = param("entities", "", one_of("none", "entities", "all"))
    ppr_method: str = param("auto", "", one_of("auto", "global", "push"))
    ppr_stop: str = param("order", "", one_of("order", "residual"))
    push_epsilon: float = param(1e-4, "", Rule(lambda v: is_real(v) and v > 0.0, "must be positive"))
    clause_seeds: bool = param(
        True,
        "A compound question's own sub-questions (text.clauses.split_clauses) are searched too, and the "
        "passage seeds are shared equally by the question and each sub-question's top passages.",
    )

    def __post_init__(self) -> None:
        check_fields(self)
        object.__setattr__(self, "temperature", float(self.temperature))
