"""What an ingest did: :class:`IngestReport` (counts, problems, a one-paragraph summary)."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_graphrag_milvus.ingest.records import Problem
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION

__all__ = ["IngestReport", "MAX_PROBLEMS_KEPT"]

MAX_PROBLEMS_KEPT = 1000


@dataclass
class IngestReport:
    """What an ingest did. ``str(report)`` gives a one-paragraph summary.

    Counts are exact; ``problems`` keeps the first 1,000 skipped items with their reasons.
    The ``extraction_*`` and token counts describe triplet extraction (0 without one).
    """

    passages_seen: int = 0
    passages_added: int = 0
    passages_updated: int = 0
    passages_unchanged: int = 0
    #: Of ``passages_updated``: text unchanged, only metadata new; the row was rewritten with its
    #: stored vector and its graph links kept (nothing embedded or extracted, see ``ingest/reuse.py``).
    passages_metadata_updated: int = 0
    records_skipped: int = 0
    triplets_seen: int = 0
    triplets_skipped: int = 0
    entities_added: int = 0
    relations_added: int = 0
    relations_linked: int = 0
    links_dropped: int = 0
    relations_removed: int = 0
    entities_removed: int = 0
    texts_embedded: int = 0
    extraction_calls: int = 0
    extraction_cached: int = 0
    extraction_failures: int = 0
    #: Triplets a ``supplement`` extractor added to the passages' own (see ``ingest/supplement.py``).
    triplets_supplemented: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    #: The load started on empty collections and skipped the existence reads (see ``ingest/bulk.py``).
    bulk_load: bool = False
    problems: list[Problem] = field(default_factory=list)
    #: What the user should know about the store after this ingest (e.g. it holds no relations).
    warnings: list[str] = field(default_factory=list)

    def _problem(self, problem: Problem) -> None:
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(problem)

    def __str__(self) -> str:
        text = (
            f"{self.passages_seen} passages seen: {self.passages_added} added, "
            f"{self.passages_updated} updated ({self.passages_metadata_updated} in metadata only), "
            f"{self.passages_unchanged} unchanged, "
            f"{self.records_skipped} skipped; {self.triplets_seen} triplets seen, "
            f"{self.triplets_skipped} malformed skipped; {self.entities_added} entities and "
            f"{self.relations_added} relations added, {self.relations_linked} relations gained "
            f"passages; {self.texts_embedded} texts embedded in {self.seconds:.1f}s"
        )
        if self.relations_removed or self.entities_removed:
            text += (
                f"; {self.relations_removed} relations and {self.entities_removed} entities that only the old "
                "versions of updated passages stated were removed"
            )
        if self.extraction_calls or self.extraction_cached or self.extraction_failures:
            text += (
                f"; extraction: {self.extraction_calls} calls ({self.input_tokens} input, {self.output_tokens} "
                f"output tokens), {self.extraction_cached} cached, {self.extraction_failures} failed"
            )
        if self.triplets_supplemented:
            text += f"; {self.triplets_supplemented} triplets added by the supplement"
        if self.links_dropped:
            text += f"; {self.links_dropped} passage links beyond {MAX_PASSAGES_PER_RELATION} per relation dropped"
        for warning in self.warnings:
            text += f"; warning: {warning}"
        return text
