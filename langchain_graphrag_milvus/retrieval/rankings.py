"""Rankings as values: each strategy owns its settings, their defaults, their rules and its stage.

The graph retriever orders passages with one :class:`Ranking` value, as datastax graph-rag's
``graph_retriever/strategies/`` do: a frozen ``kw_only`` dataclass whose instance holds its
settings and is replaced per call (``dataclasses.replace``, or :meth:`Ranking.replace_flat` for
the flat names). The pipeline asks the value what it needs — how many relation hits, which
relations to search, how deep the dense order is read, the ranking stage itself, the final
merge with the dense order — and never tests which ranking it holds.

* :class:`PageRankWalk` (``ranking="ppr"``, the default): chained personalised PageRank walks
  (:mod:`.walk_ranking`; its walk constants are :class:`~.walk_params.WalkParams`, from which it
  derives), then, if asked, a fusion with or a floor for the dense order.
* :class:`SimilarityExpansion` (``ranking="similarity"``): the seed notebook's method — expand
  the entity and relation hits ``hops`` deep, order the candidates by similarity to the query.

The flat names of the retriever (``ppr_damping``, ``hops``...) stay accepted: each maps onto one
field of one ranking (:data:`FLAT_SETTINGS`); a flat value is checked under its flat name, so
``ppr_damping=1.0`` fails with ``ppr_damping must be in [0, 1), got 1.0``.

A new ranking is a subclass here (its fields, its :meth:`Ranking.rank`, its entry in
:data:`RANKINGS`) plus its stage function.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH, fuse_orders
from langchain_graphrag_milvus.retrieval.keep_dense import keep_dense
from langchain_graphrag_milvus.retrieval.pair_order import DEFAULT_PAIR
from langchain_graphrag_milvus.retrieval.settings import NON_NEGATIVE, Rule, check_setting, is_real, one_of, param
from langchain_graphrag_milvus.retrieval.stages import entity_seeds, ppr_ranking, similarity_ranking
from langchain_graphrag_milvus.retrieval.walk_params import AUTO_PUSH_RELATIONS, WalkParams

if TYPE_CHECKING:
    from langchain_graphrag_milvus.retrieval.effects import Steps
    from langchain_graphrag_milvus.retrieval.ranked import Candidate, QueryHits, Ranked, StageSettings

__all__ = [
    "Ranking",
    "PageRankWalk",
    "SimilarityExpansion",
    "RANKINGS",
    "FLAT_SETTINGS",
    "DEFAULT_RANKING",
    "ranking_class",
    "resolve_ranking",
    "ranking_for_call",
    "valid_ranking",
    "check_flat",
    "relation_scope",
]


@dataclass(frozen=True, kw_only=True)
class Ranking(abc.ABC):
    """A graph retriever's ranking: its settings as fields, its behaviour as methods.

    Attributes:
        name: The string naming it in ``ranking=`` (``"ppr"``, ``"similarity"``).
        flat_names: Flat setting name (the retriever's field) → this class' field.
        links_exact_entities: A query name that is exactly a graph entity is seeded as is,
            neither embedded nor searched.
    """

    name: ClassVar[str]
    flat_names: ClassVar[Mapping[str, str]] = {}
    links_exact_entities: ClassVar[bool] = False

    def replace_flat(self, settings: Mapping[str, Any]) -> Ranking:
        """This ranking with the flat settings of its own in ``settings`` (the others ignored)."""
        changes = {self.flat_names[n]: v for n, v in settings.items() if n in self.flat_names}
        return dataclasses.replace(self, **changes) if changes else self

    def flat_settings(self) -> dict[str, Any]:
        """Its settings under their flat names (``{"ppr_damping": 0.85, ...}``)."""
        return {flat: getattr(self, name) for flat, name in self.flat_names.items()}

    def relation_hits(self, relation_top_k: int) -> int:
        """Relation hits the query's relation search returns (0: no relation search)."""
        return relation_top_k

    def search_scope(self, n_relations: int) -> str:
        """``"all"`` or ``"entities"``: the relations the query's relation search ranks."""
        return "all"

    def dense_depth(self) -> int:
        """Passage-similarity hits :meth:`merge_dense` reads beyond ``k`` (0: none)."""
        return 0

    def searches_clauses(self) -> bool:
        """A compound question's sub-questions are searched for passages too (``QueryHits.clause_passage_hits``)."""
        return False

    def passage_hits(self) -> int:
        """Passage-similarity hits it reads besides the top ``k`` (seeds, the dense order's depth).

        By default as many as the default walk's passage seeds: the passage search has always
        read them whatever the ranking, and a passage among them keeps the search's score as
        its ``_similarity`` (a passage outside the hits is scored by a second read, which can
        differ in the last float digit).
        """
        return max(_DEFAULT_PASSAGE_SEEDS, self.dense_depth())

    @abc.abstractmethod
    def rank(
        self, q: QueryHits, p: StageSettings, want_pool: bool, trace: dict[str, Any] | None
    ) -> Steps[tuple[list[Ranked], list[Candidate]]]:
        """The ranked passages and, if ``want_pool``, the reranker's candidate relations."""

    def merge_dense(self, ranked: list[Ranked], dense: list[Ranked], k: int, *, linked: bool = True) -> list[Ranked]:
        """The no-LLM order merged with the passage-similarity order ``dense`` (default: unchanged).

        ``linked``: the query has an entity seed (a name linked to the graph).
        """
        return ranked


def relation_scope(scope: str, n_relations: int) -> str:
    """``"all"`` or ``"entities"``: ``scope`` with ``"auto"`` resolved for a graph of ``n_relations``.

    ``"auto"`` ranks every relation below :data:`~.walk_params.AUTO_PUSH_RELATIONS` (30,000)
    relations — the eval graphs, unchanged — and only the linked entities' relations from there
    on, where a search over every relation vector is most of a query's time. Measured
    (``benchmarks/bench_scale.py``, 200k passages / 1.8M relations, FLAT): graph p50 361 → 88 ms
    (naive 42–53 ms), Recall@5 72.5 both ways; on the eval graphs, ``"entities"`` against ``"all"``:
    R@2 +0.9 to +1.0, R@5 −0.3 to −2.0, inside the fold spread (README, Scale).
    """
    if scope != "auto":
        return scope
    return "entities" if n_relations >= AUTO_PUSH_RELATIONS else "all"


#: The default walk's passage seeds (:class:`~.walk_params.WalkParams`, their one home).
_DEFAULT_PASSAGE_SEEDS: int = WalkParams().passage_seeds


_FUSE_DENSE_DOC = (
    "Share of the dense (passage-similarity) order in a weighted reciprocal-rank fusion with the graph's "
    "order ('ppr', no-LLM order; retrieval/fusion.py); 0: the graph's order alone."
)
_FUSE_DENSE_UNLINKED_DOC = (
    "Dense share of the fusion for a query with no entity seed (no name linked to the graph: the walk "
    "restarts from similarity alone): max(fuse_dense, fuse_dense_unlinked); 0: fuse_dense for every query."
)
_FUSE_DENSE_C_DOC = (
    "Rank offset c of the fusion: a passage scores (1 - fuse_dense) / (c + graph rank) + "
    "fuse_dense / (c + dense rank); with fuse_dense=0.5 and c=0 the two orders alternate, the graph's first."
)


@dataclass(frozen=True, kw_only=True)
class PageRankWalk(WalkParams, Ranking):
    """``ranking="ppr"``: chained PageRank walks over the graph (no LLM; the best measured).

    The walk's constants are :class:`~.walk_params.WalkParams`' (``relation_seeds``,
    ``passage_seeds``, ``damping``, ``temperature``, ``chain`` and the expert ones); this adds
    the relation search's scope and the merge of the walk's order with the dense order.

    Example:
        .. code-block:: python

            retriever = MilvusGraphRetriever(store=store, ranking=PageRankWalk(damping=0.5, chain=2))
            docs = retriever.invoke(question, ranking=PageRankWalk(fuse_dense=0.5))
    """

    name: ClassVar[str] = "ppr"
    flat_names: ClassVar[Mapping[str, str]] = {
        "ppr_relation_seeds": "relation_seeds",
        "relation_scope": "relation_scope",
        "ppr_passage_seeds": "passage_seeds",
        "ppr_damping": "damping",
        "ppr_temperature": "temperature",
        "ppr_chain": "chain",
        "ppr_clause_seeds": "clause_seeds",
        "ppr_pair_step": "pair_step",
        "keep_dense": "keep_dense",
        "keep_dense_slack": "keep_dense_slack",
        "fuse_dense": "fuse_dense",
        "fuse_dense_c": "fuse_dense_c",
        "fuse_dense_unlinked": "fuse_dense_unlinked",
    }
    links_exact_entities: ClassVar[bool] = True

    relation_scope: str = param(
        "auto",
        "Relations the query's relation search ranks ('ppr'): 'all', or 'entities': only those of the "
        "query's linked entities when it has some (a search filtered to them; 'all' otherwise); "
        "'auto': 'all' below 30,000 relations, 'entities' from there on.",
        one_of("auto", "all", "entities"),
    )
    pair_step: bool = param(
        True,
        "The walk's first passage is followed by the one of its next 4 that best completes it as a pair: about "
        "an entity the first mentions and the query does not (a bridge), covering the query's other entities, "
        "about them, close to the query (retrieval/pair_order.py, weights DEFAULT_PAIR, fitted by "
        "cross-validation); False: the walk's own second pick.",
    )
    keep_dense: int = param(
        0,
        "Top passage-similarity hits kept in the result ('ppr', no-LLM order): dense rank r is placed at "
        "position r + keep_dense_slack at the latest; 0: the graph's order alone.",
        NON_NEGATIVE,
    )
    keep_dense_slack: int = param(
        0, "Positions the graph's order may put ahead of each kept dense hit (see keep_dense).", NON_NEGATIVE
    )
    fuse_dense: float = param(
        0.0, _FUSE_DENSE_DOC, Rule(lambda v: is_real(v) and 0.0 <= v <= 1.0, "must be in [0, 1]", {"ge": 0, "le": 1})
    )
    fuse_dense_c: float = param(
        0.0, _FUSE_DENSE_C_DOC, Rule(lambda v: is_real(v) and v >= 0.0, "must be a non-negative number", {"ge": 0})
    )
    fuse_dense_unlinked: float = param(
        0.6,
        _FUSE_DENSE_UNLINKED_DOC,
        Rule(lambda v: is_real(v) and 0.0 <= v <= 1.0, "must be in [0, 1]", {"ge": 0, "le": 1}),
    )

    def relation_hits(self, relation_top_k: int) -> int:
        """At least the walk's relation seeds; none (no search) when it takes none."""
        return 0 if self.relation_seeds == 0 else max(relation_top_k, self.relation_seeds)

    def search_scope(self, n_relations: int) -> str:
        """The field ``relation_scope`` with ``"auto"`` resolved (:func:`relation_scope`)."""
        return relation_scope(self.relation_scope, n_relations)

    def searches_clauses(self) -> bool:
        """``clause_seeds``: the sub-questions' top passages seed the walk."""
        return self.clause_seeds

    def dense_depth(self) -> int:
        """The fusion reads the dense top :data:`~.fusion.FUSION_DEPTH` when it is on."""
        return FUSION_DEPTH if self.fuse_dense or self.fuse_dense_unlinked else 0

    def passage_hits(self) -> int:
        """The walk's passage seeds, the fusion's depth and the pair step's dense top."""
        return max(self.passage_seeds, self.dense_depth(), DEFAULT_PAIR.dense_depth if self.pair_step else 0)

    def rank(
        self, q: QueryHits, p: StageSettings, want_pool: bool, trace: dict[str, Any] | None
    ) -> Steps[tuple[list[Ranked], list[Candidate]]]:
        """The chained walks' order and, if wanted, its one-relation-per-passage pool.

        The walks settle the order of what is read: the ``k`` returned, or the whole order when the
        reranker's pool or the dense fusion reads it (``ppr_stop``); a query the fusion leaves alone
        (a linked one, with ``fuse_dense=0``) reads ``k``.
        """
        fused = bool(self.dense_depth()) and self.fusion_weight(bool(entity_seeds(q))) > 0
        pair = DEFAULT_PAIR if self.pair_step else None
        read = p.walk_limit if want_pool or fused else max(p.k, pair.window if pair else 0)
        return ppr_ranking(q, p, self, want_pool, trace=trace, settle=read, pair=pair)

    def fusion_weight(self, linked: bool) -> float:
        """The dense order's share for a query with (``linked``) or without an entity seed."""
        return self.fuse_dense if linked else max(self.fuse_dense, self.fuse_dense_unlinked)

    def merge_dense(self, ranked: list[Ranked], dense: list[Ranked], k: int, *, linked: bool = True) -> list[Ranked]:
        """The walk's order fused with the dense order (fusion.py), then the dense top hits kept (keep_dense.py).

        ``linked``: the query has an entity seed; without one the fusion's weight is at least
        ``fuse_dense_unlinked`` (:meth:`fusion_weight`).
        """
        weight = self.fusion_weight(linked)
        if not (weight or self.keep_dense):
            return ranked
        by_id = {r.id: r for r in dense} | {r.id: r for r in ranked}
        ids = [r.id for r in ranked]
        if weight:
            ids = fuse_orders(ids, [r.id for r in dense[:FUSION_DEPTH]], weight=weight, c=self.fuse_dense_c)
        if self.keep_dense:
            ids = keep_dense(ids, [r.id for r in dense], k=k, keep=self.keep_dense, slack=self.keep_dense_slack)
        return [by_id[i] for i in ids]


@dataclass(frozen=True, kw_only=True)
class SimilarityExpansion(Ranking):
    """``ranking="similarity"``: the seed's expansion, candidates ordered by similarity to the query.

    The entity hits and the top ``relation_top_k`` relation hits are expanded ``hops`` deep on the
    graph (scores multiplied by ``decay`` per hop); the candidate relations are ordered by their
    similarity to the query.
    """

    name: ClassVar[str] = "similarity"
    flat_names: ClassVar[Mapping[str, str]] = {"hops": "hops", "decay": "decay"}

    hops: int = param(
        1,
        "Expansion depth on the graph ('similarity'; seed: 1).",
        Rule(lambda v: v in (0, 1, 2, 3), "must be 0, 1, 2 or 3", {"ge": 0, "le": 3}),
    )
    decay: float = param(
        0.8,
        "Graph score factor per hop ('similarity').",
        Rule(lambda v: 0.0 < v <= 1.0, "must be in (0, 1]", {"gt": 0, "le": 1}),
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check_setting(f, getattr(self, f.name))

    def rank(
        self, q: QueryHits, p: StageSettings, want_pool: bool, trace: dict[str, Any] | None
    ) -> Steps[tuple[list[Ranked], list[Candidate]]]:
        """The expansion's candidates by similarity; the pool is the same candidates."""
        return similarity_ranking(q, p, self.hops, self.decay, trace=trace)


#: The rankings by the name ``ranking=`` gives them.
RANKINGS: dict[str, type[Ranking]] = {"ppr": PageRankWalk, "similarity": SimilarityExpansion}
#: The ranking a retriever uses unless told otherwise.
DEFAULT_RANKING = "ppr"
_RANKING_RULE = one_of(*RANKINGS)


def _flat_fields() -> dict[str, tuple[type[Ranking], dataclasses.Field[Any]]]:
    out: dict[str, tuple[type[Ranking], dataclasses.Field[Any]]] = {}
    for cls in RANKINGS.values():
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for flat, name in cls.flat_names.items():
            out[flat] = (cls, fields[name])
    return out


#: Every flat setting name → the ranking class and the field it maps onto.
FLAT_SETTINGS = _flat_fields()


def ranking_class(name: Any) -> type[Ranking]:
    """The ranking class ``name`` names; ``ValueError`` (``ranking must be 'ppr' or 'similarity'``) else."""
    _RANKING_RULE.check("ranking", name)
    return RANKINGS[name]


def valid_ranking(value: Any) -> Any:
    """``value`` if it is a ranking value or name; ``ValueError`` (``ranking must be ...``) else."""
    if not isinstance(value, Ranking):
        ranking_class(value)
    return value


def check_flat(settings: Mapping[str, Any]) -> None:
    """Check every flat ranking setting in ``settings`` under its flat name (whatever the ranking)."""
    for flat, value in settings.items():
        if flat in FLAT_SETTINGS:
            check_setting(FLAT_SETTINGS[flat][1], value, flat)


def resolve_ranking(ranking: str | Ranking, flat: Mapping[str, Any] = {}) -> Ranking:  # noqa: B006
    """The ranking value for ``ranking`` (a name or a value) with the flat settings of its class applied.

    Every flat setting in ``flat`` is checked under its flat name; those of another ranking are
    then ignored (``hops`` under ``"ppr"``), as they always were.
    """
    check_flat(flat)
    value = ranking if isinstance(ranking, Ranking) else ranking_class(ranking)()
    return value.replace_flat(flat)


def ranking_for_call(current: Ranking, asked: Any, own: Mapping[str, Any]) -> Ranking:
    """The ranking a call's ``ranking=`` asks of a retriever whose ranking is ``current``.

    A value is taken as is; the name of ``current``'s class keeps ``current`` (its expert
    settings included); another name builds that ranking from the retriever's flat settings
    ``own`` (``MilvusGraphRetriever(hops=2).invoke(q, ranking="similarity")`` expands 2 hops).
    """
    if isinstance(asked, Ranking):
        return asked
    cls = ranking_class(asked)
    return current if type(current) is cls else cls().replace_flat(own)
