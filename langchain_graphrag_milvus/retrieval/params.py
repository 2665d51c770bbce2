"""Per-call retrieval settings: the single home of every default, description and validation rule.

Each retriever's settings are a frozen dataclass here (:class:`RetrievalParams` for
:class:`~langchain_graphrag_milvus.retrievers.MilvusGraphRetriever`, :class:`PathParams` for
:class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever`, :class:`NaiveParams`
for :class:`~langchain_graphrag_milvus.retrievers.NaivePassageRetriever`). Each field is
declared once with :func:`param`: its default, its description and its :class:`Rule` s.
From that one declaration come

* the retriever's pydantic field (:func:`retriever_field`: default, description and the
  rule's pydantic constraints, so ``MilvusGraphRetriever(k=0)`` fails at construction);
* the per-call check (the dataclass' ``__post_init__`` runs every rule, so
  ``retriever.invoke(q, k=0)`` fails with ``k must be a positive integer, got 0``);
* the per-call overrides (:func:`call_params`: unknown names are a ``TypeError``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import Field

from langchain_graphrag_milvus.milvus.expr import as_filter
from langchain_graphrag_milvus.retrieval.defaults import PASSAGES_K, PATHS_K
from langchain_graphrag_milvus.retrieval.rankings import (
    DEFAULT_RANKING,
    FLAT_SETTINGS,
    Ranking,
    resolve_ranking,
)
from langchain_graphrag_milvus.retrieval.settings import (
    EXPRESSION,
    POSITIVE,
    POSITIVE_OR_NONE,
    TIMEOUT,
    Rule,
    at_most,
    check_fields,
    param,
)

__all__ = [
    "RetrievalParams",
    "PathParams",
    "NaiveParams",
    "Rule",
    "param",
    "retriever_field",
    "params_from_fields",
    "call_params",
    "setting_names",
    "IGNORED_KWARGS",
]

P = TypeVar("P")

#: Per-call keyword arguments LangChain may pass that are not settings (ignored).
IGNORED_KWARGS = frozenset({"verbose"})


def _declared(cls: type[Any]) -> dict[str, dataclasses.Field[Any]]:
    """Every setting ``cls`` accepts, by name: its fields, plus the flat ranking names for :class:`RetrievalParams`."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if cls is RetrievalParams:
        fields.update({flat: f for flat, (_, f) in FLAT_SETTINGS.items()})
    return fields


def retriever_field(cls: type[Any], name: str) -> Any:
    """The pydantic ``Field`` of setting ``name`` of ``cls``: default, description, constraints.

    For :class:`RetrievalParams`, a flat ranking name (``ppr_damping``) gives the field of the
    ranking it maps onto (:data:`~.rankings.FLAT_SETTINGS`): one home per default.
    """
    f = _declared(cls)[name]
    constraints: dict[str, Any] = {}
    for rule in f.metadata.get("rules", ()):
        constraints.update(rule.constraints)
    return Field(default=f.default, description=f.metadata.get("description"), **constraints)


def setting_names(cls: type[Any]) -> frozenset[str]:
    """The settings a retriever holds as fields (every setting but the per-call ``entities``)."""
    return frozenset(name for name in _declared(cls) if name != "entities")


def params_from_fields(cls: type[P], retriever: Any) -> P:
    """``cls`` filled from a retriever's fields of the same names (its ``filter`` made an expression)."""
    kwargs = {name: getattr(retriever, name) for name in setting_names(cls)}
    kwargs["filter"] = as_filter(kwargs.get("filter"))
    return cls(**kwargs)


def call_params(defaults: P, kwargs: Mapping[str, Any]) -> P:
    """``defaults`` with the per-call overrides in ``kwargs``.

    Raises:
        TypeError: An unknown name, or ``entities`` given as one string.
        ValueError: A value that breaks its rule.
        InvalidFilterError: A filter that is neither an expression nor a ``{field: value}`` dict.
    """
    allowed = set(_declared(type(defaults)))
    unknown = set(kwargs) - allowed - IGNORED_KWARGS
    if unknown:
        raise TypeError(
            f"unexpected retrieval argument(s): {', '.join(sorted(unknown))}; accepted: {', '.join(sorted(allowed))}"
        )
    overrides = {k: v for k, v in kwargs.items() if k in allowed}
    if "filter" in overrides:
        overrides["filter"] = as_filter(overrides["filter"])
    if overrides.get("entities") is not None:
        if isinstance(overrides["entities"], str):
            raise TypeError("entities must be a list of names, not a string")
        overrides["entities"] = tuple(str(e) for e in overrides["entities"])
    return dataclasses.replace(defaults, **overrides)  # type: ignore[type-var]


_FILTER_DOC = (
    "Restricts passages *and the graph*: a Milvus expression over passage metadata "
    "(tenant == 'a') or a {field: value} dict (values escaped)."
)
_MIN_SCORE_DOC = (
    "Relevance cut-off: passages whose similarity to the query (the passage search's score, "
    "metadata '_similarity') is below it are left out, so fewer than k may come back. "
    "None (default): off, k passages are returned when the store has them."
)
MIN_SCORE = Rule(
    lambda v: v is None or (not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)),
    "must be a finite number or None",
)
_EXTRACTOR_TIMEOUT_DOC = "Seconds the entity extractor may take; then the offline linker is used. None: no limit."


@dataclass(frozen=True, kw_only=True)
class NaiveParams:
    """Settings of :class:`~langchain_graphrag_milvus.retrievers.NaivePassageRetriever`."""

    k: int = param(PASSAGES_K, "Number of passages returned.", POSITIVE)
    filter: str | None = param(None, "Restricts the passages searched (expression or {field: value} dict).", EXPRESSION)
    min_score: float | None = param(None, _MIN_SCORE_DOC, MIN_SCORE)

    def __post_init__(self) -> None:
        check_fields(self)


_RANKING_DOC = (
    "'ppr': chained PageRank walks over the graph (no LLM; the best measured); "
    "'similarity': the seed's expansion ordered by similarity to the query; "
    "or a ranking value (PageRankWalk(...), SimilarityExpansion(...): retrieval/rankings.py)."
)


@dataclass(frozen=True, kw_only=True, init=False)
class RetrievalParams:
    """Everything one graph retrieval needs; per-call kwargs override the retriever's fields.

    ``ranking`` is a :class:`~langchain_graphrag_milvus.retrieval.rankings.Ranking` value that
    owns the ranking's settings. The constructor (and so ``dataclasses.replace`` and
    :func:`call_params`) also takes ``ranking`` as a name (``"ppr"``, ``"similarity"``) and the
    flat ranking names (``ppr_damping=0.5``, ``hops=2``...): each is checked under its flat
    name and applied to the ranking it belongs to (those of another ranking are checked, then
    ignored). ``RetrievalParams(ranking="similarity", hops=2).ranking`` is
    ``SimilarityExpansion(hops=2)``.
    """

    k: int = param(PASSAGES_K, "Number of passages returned.", POSITIVE)
    ranking: Ranking = param(DEFAULT_RANKING, _RANKING_DOC)
    entity_top_k: int = param(3, "Entity hits per query entity.", POSITIVE)
    relation_top_k: int = param(3, "Relation hits for the query ('similarity').", POSITIVE)
    max_neighbors: int | None = param(100, "Relations taken per entity per hop.")
    max_frontier: int | None = param(None, "Entities expanded per hop (default: pool size).")
    max_candidates: int = param(50, "Candidate relations shown to the reranker.", POSITIVE)
    rerank_select: int = param(3, "Relations the LLM is asked to select.", POSITIVE)
    filter: str | None = param(None, _FILTER_DOC, EXPRESSION)
    entities: tuple[str, ...] | None = None
    rerank_timeout: float | None = param(
        None, "Seconds the reranker may take; then the no-LLM order is used (warning logged). None: no limit.", TIMEOUT
    )
    extractor_timeout: float | None = param(None, _EXTRACTOR_TIMEOUT_DOC, TIMEOUT)
    min_score: float | None = param(None, _MIN_SCORE_DOC, MIN_SCORE)

    def __init__(self, *, ranking: str | Ranking = DEFAULT_RANKING, **settings: Any) -> None:
        """Shared settings by name; ``ranking`` a name or a value; flat ranking names mapped onto it."""
        flat = {name: settings.pop(name) for name in list(settings) if name in FLAT_SETTINGS}
        fields = {f.name: f for f in dataclasses.fields(self) if f.name != "ranking"}
        unknown = set(settings) - set(fields)
        if unknown:
            raise TypeError(f"RetrievalParams got unexpected setting(s): {', '.join(sorted(unknown))}")
        for name, f in fields.items():
            object.__setattr__(self, name, settings.get(name, f.default))
        object.__setattr__(self, "ranking", resolve_ranking(ranking, flat))
        check_fields(self)

    def flat(self) -> dict[str, Any]:
        """The settings under the retriever's flat names (``ranking`` as its name, then the ranking's own)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["ranking"] = self.ranking.name
        return {**out, **self.ranking.flat_settings()}

    @property
    def walk_limit(self) -> int:
        """How deep a ranking's order is read: ``k``, the reranker's candidates, the dense order's depth."""
        return max(self.k, self.max_candidates, self.ranking.dense_depth())


@dataclass(frozen=True, kw_only=True)
class PathParams:
    """Per-call settings of :class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever`."""

    k: int = param(PATHS_K, "Most Documents (paths) returned, over all pairs.", POSITIVE)
    max_paths: int = param(5, "Paths kept per entity pair (diversity pruning).", POSITIVE)
    max_hops: int = param(3, "Hops searched from each side of a pair.", POSITIVE, at_most(6))
    max_neighbors: int | None = param(100, "Neighbours read per node (None: all).", POSITIVE_OR_NONE)
    max_frontier: int | None = param(10_000, "New nodes per search level (None: all).", POSITIVE_OR_NONE)
    max_entities: int = param(4, "Query entities used (pairs: n·(n-1)/2).", POSITIVE, at_most(8, " (28 pairs)"))
    relations_per_edge: int = param(2, "Parallel relations shown per edge.", POSITIVE)
    sentences: bool = param(
        False,
        "Add each relation's supporting passage sentence.",
        Rule(lambda v: isinstance(v, bool), "must be True or False"),
    )
    sentences_per_relation: int = param(1, "Passages quoted per relation.", POSITIVE)
    entity_min_score: float = param(
        0.8,
        "Least similarity for a vector-matched entity name.",
        Rule(lambda v: -1.0 <= v <= 1.0, "must be in [-1, 1]"),
    )
    filter: str | None = param(None, "Restricts the graph to relations of passages matching this filter.", EXPRESSION)
    entities: tuple[str, ...] | None = None
    extractor_timeout: float | None = param(None, _EXTRACTOR_TIMEOUT_DOC, TIMEOUT)

    def __post_init__(self) -> None:
        check_fields(self)
