"""Per-call retrieval settings (the retriever's fields, overridable in ``invoke``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from langchain_graphrag_milvus.retrieval.timeouts import check_timeout
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams

__all__ = ["RetrievalParams"]


@dataclass(frozen=True, kw_only=True)
class RetrievalParams:
    """Everything one retrieval call needs; per-call kwargs override the retriever's fields."""

    k: int = 4
    ranking: Literal["ppr", "similarity"] = "ppr"
    entity_top_k: int = 3
    relation_top_k: int = 3
    hops: int = 1
    max_neighbors: int | None = 100
    max_frontier: int | None = None
    decay: float = 0.8
    ppr_relation_seeds: int = 50
    ppr_passage_seeds: int = 3
    ppr_damping: float = 0.85
    ppr_temperature: float = 0.02
    ppr_chain: int = 1
    max_candidates: int = 50
    rerank_select: int = 3
    filter: str | None = None
    entities: tuple[str, ...] | None = None
    rerank_timeout: float | None = None
    extractor_timeout: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "k",
            "entity_top_k",
            "relation_top_k",
            "max_candidates",
            "rerank_select",
            "ppr_relation_seeds",
            "ppr_passage_seeds",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.ranking not in ("ppr", "similarity"):
            raise ValueError(f"ranking must be 'ppr' or 'similarity', got {self.ranking!r}")
        if self.hops not in (0, 1, 2, 3):
            raise ValueError(f"hops must be 0, 1, 2 or 3, got {self.hops!r}")
        if not 0.0 < self.decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        if not 0.0 <= self.ppr_damping < 1.0:
            raise ValueError(f"ppr_damping must be in [0, 1), got {self.ppr_damping!r}")
        if not (isinstance(self.ppr_temperature, (int, float)) and self.ppr_temperature > 0):
            raise ValueError(f"ppr_temperature must be positive, got {self.ppr_temperature!r}")
        if isinstance(self.ppr_chain, bool) or not isinstance(self.ppr_chain, int) or self.ppr_chain < 0:
            raise ValueError(f"ppr_chain must be a non-negative integer, got {self.ppr_chain!r}")
        if self.filter is not None and not isinstance(self.filter, str):
            raise ValueError("filter must be a Milvus expression string")
        check_timeout("rerank_timeout", self.rerank_timeout)
        check_timeout("extractor_timeout", self.extractor_timeout)

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
