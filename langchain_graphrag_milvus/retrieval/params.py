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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import Field

from langchain_graphrag_milvus.milvus.expr import as_filter
from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH
from langchain_graphrag_milvus.retrieval.timeouts import check_timeout
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams

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


@dataclass(frozen=True)
class Rule:
    """One validation rule: ``ok(value)`` per call; ``constraints`` on the retriever's pydantic field.

    Attributes:
        ok: True when the value is valid.
        message: What a valid value is (``"must be a positive integer"``); the error reads
            ``"<name> <message>, got <value>"``.
        constraints: pydantic ``Field`` constraints (``ge``, ``le``...) checked at construction.
        show_value: Append ``", got <value>"`` to the error.
    """

    ok: Callable[[Any], bool]
    message: str
    constraints: Mapping[str, Any] = field(default_factory=dict)
    show_value: bool = True

    def check(self, name: str, value: Any) -> None:
        """Raise ``ValueError`` if ``value`` breaks this rule."""
        if not self.ok(value):
            got = f", got {value!r}" if self.show_value else ""
            raise ValueError(f"{name} {self.message}{got}")


def _int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def _real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


POSITIVE = Rule(lambda v: _int(v) and v >= 1, "must be a positive integer", {"ge": 1})
NON_NEGATIVE = Rule(lambda v: _int(v) and v >= 0, "must be a non-negative integer", {"ge": 0})
POSITIVE_OR_NONE = Rule(lambda v: v is None or (_int(v) and v >= 1), "must be a positive integer or None")
EXPRESSION = Rule(lambda v: v is None or isinstance(v, str), "must be a Milvus expression string", show_value=False)


def at_most(limit: int, note: str = "") -> Rule:
    """At most ``limit`` (pydantic ``le``)."""
    return Rule(lambda v: v <= limit, f"must be at most {limit}{note}", {"le": limit})


def _timeout_ok(value: Any) -> bool:
    try:
        check_timeout("", value)
    except ValueError:
        return False
    return True


TIMEOUT = Rule(_timeout_ok, "must be a positive number of seconds or None")


def param(default: Any, description: str, *rules: Rule) -> Any:
    """A settings field: its default, its description and its rules (checked in this order)."""
    return field(default=default, metadata={"description": description, "rules": rules})


def _check(params: Any) -> None:
    for f in dataclasses.fields(params):
        for rule in f.metadata.get("rules", ()):
            rule.check(f.name, getattr(params, f.name))


def retriever_field(cls: type[Any], name: str) -> Any:
    """The pydantic ``Field`` of setting ``name`` of ``cls``: default, description, constraints."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    constraints: dict[str, Any] = {}
    for rule in f.metadata.get("rules", ()):
        constraints.update(rule.constraints)
    return Field(default=f.default, description=f.metadata.get("description"), **constraints)


def setting_names(cls: type[Any]) -> frozenset[str]:
    """The settings a retriever holds as fields (every setting but the per-call ``entities``)."""
    return frozenset(f.name for f in dataclasses.fields(cls) if f.name != "entities")


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
    allowed = {f.name for f in dataclasses.fields(defaults)}  # type: ignore[arg-type]
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

    k: int = param(4, "Number of passages returned.", POSITIVE)
    filter: str | None = param(None, "Restricts the passages searched (expression or {field: value} dict).", EXPRESSION)
    min_score: float | None = param(None, _MIN_SCORE_DOC, MIN_SCORE)

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True, kw_only=True)
class RetrievalParams:
    """Everything one graph retrieval needs; per-call kwargs override the retriever's fields."""

    k: int = param(4, "Number of passages returned.", POSITIVE)
    ranking: Literal["ppr", "similarity"] = param(
        "ppr",
        "'ppr': chained PageRank walks over the graph (no LLM; the best measured); "
        "'similarity': the seed's expansion ordered by similarity to the query.",
        Rule(lambda v: v in ("ppr", "similarity"), "must be 'ppr' or 'similarity'"),
    )
    entity_top_k: int = param(3, "Entity hits per query entity.", POSITIVE)
    relation_top_k: int = param(3, "Relation hits for the query ('similarity').", POSITIVE)
    hops: int = param(
        1,
        "Expansion depth on the graph ('similarity'; seed: 1).",
        Rule(lambda v: v in (0, 1, 2, 3), "must be 0, 1, 2 or 3", {"ge": 0, "le": 3}),
    )
    max_neighbors: int | None = param(100, "Relations taken per entity per hop.")
    max_frontier: int | None = param(None, "Entities expanded per hop (default: pool size).")
    decay: float = param(
        0.8,
        "Graph score factor per hop ('similarity').",
        Rule(lambda v: 0.0 < v <= 1.0, "must be in (0, 1]", {"gt": 0, "le": 1}),
    )
    ppr_relation_seeds: int = param(
        50, "Most similar relations seeding PageRank; 0: none, and no relation search.", NON_NEGATIVE
    )
    relation_scope: Literal["auto", "all", "entities"] = param(
        "auto",
        "Relations the query's relation search ranks ('ppr'): 'all', or 'entities': only those of the "
        "query's linked entities when it has some (a search filtered to them; 'all' otherwise); "
        "'auto': 'all' below 30,000 relations, 'entities' from there on.",
        Rule(lambda v: v in ("auto", "all", "entities"), "must be 'auto', 'all' or 'entities'"),
    )
    ppr_passage_seeds: int = param(3, "Most similar passages seeding PageRank.", POSITIVE)
    ppr_damping: float = param(
        0.85,
        "PageRank damping (follow-an-edge probability).",
        Rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)", {"ge": 0, "lt": 1}),
    )
    ppr_temperature: float = param(
        0.02,
        "Softmax temperature of the similarity seeds.",
        Rule(lambda v: isinstance(v, (int, float)) and v > 0, "must be positive", {"gt": 0}),
    )
    ppr_chain: int = param(
        1, "Picks after which a new walk continues from the picked passages' entities.", NON_NEGATIVE
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
        0.0,
        "Share of the dense (passage-similarity) order in a weighted reciprocal-rank fusion with the graph's "
        "order ('ppr', no-LLM order; retrieval/fusion.py); 0: the graph's order alone.",
        Rule(lambda v: _real(v) and 0.0 <= v <= 1.0, "must be in [0, 1]", {"ge": 0, "le": 1}),
    )
    fuse_dense_c: float = param(
        0.0,
        "Rank offset c of the fusion: a passage scores (1 - fuse_dense) / (c + graph rank) + "
        "fuse_dense / (c + dense rank); with fuse_dense=0.5 and c=0 the two orders alternate, the graph's first.",
        Rule(lambda v: _real(v) and v >= 0.0, "must be a non-negative number", {"ge": 0}),
    )
    max_candidates: int = param(50, "Candidate relations shown to the reranker.", POSITIVE)
    rerank_select: int = param(3, "Relations the LLM is asked to select.", POSITIVE)
    filter: str | None = param(None, _FILTER_DOC, EXPRESSION)
    entities: tuple[str, ...] | None = None
    rerank_timeout: float | None = param(
        None, "Seconds the reranker may take; then the no-LLM order is used (warning logged). None: no limit.", TIMEOUT
    )
    extractor_timeout: float | None = param(None, _EXTRACTOR_TIMEOUT_DOC, TIMEOUT)
    min_score: float | None = param(None, _MIN_SCORE_DOC, MIN_SCORE)

    def __post_init__(self) -> None:
        _check(self)

    @property
    def walk_limit(self) -> int:
        """How deep the walk's order is read: ``k``, the reranker's candidates, the fusion's depth."""
        return max(self.k, self.max_candidates, FUSION_DEPTH if self.fuse_dense else 0)

    @property
    def walk(self) -> WalkParams:
        """The no-LLM ranking settings (:mod:`~langchain_graphrag_milvus.retrieval.walk_ranking`)."""
        return WalkParams(
            relation_seeds=self.ppr_relation_seeds,
            passage_seeds=self.ppr_passage_seeds,
            temperature=float(self.ppr_temperature),
            damping=self.ppr_damping,
            chain=self.ppr_chain,
        )


@dataclass(frozen=True, kw_only=True)
class PathParams:
    """Per-call settings of :class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever`."""

    k: int = param(10, "Most Documents (paths) returned, over all pairs.", POSITIVE)
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
        _check(self)
