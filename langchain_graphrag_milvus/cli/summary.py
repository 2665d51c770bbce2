"""What ``ingest`` did, for a person (``text()``) and for a program (``to_json()``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_graphrag_milvus.cli.output import terminal_text

__all__ = ["IngestSummary"]


@dataclass
class IngestSummary:
    """What one ``ingest`` run did (printed at the end; ``--json`` prints it as JSON)."""

    files_found: int = 0
    files_ingested: int = 0
    files_unchanged: int = 0
    files_skipped: int = 0
    files_deleted: int = 0
    chunks: int = 0
    passages_added: int = 0
    passages_updated: int = 0
    passages_metadata_updated: int = 0
    passages_unchanged: int = 0
    passages_deleted: int = 0
    entities_added: int = 0
    relations_added: int = 0
    entities_deleted: int = 0
    relations_deleted: int = 0
    texts_embedded: int = 0
    extraction_calls: int = 0
    extraction_cached: int = 0
    extraction_failures: int = 0
    #: The supplement run on every passage written ("offline_links", "offline"; None: none), and its triplets kept.
    supplement: str | None = None
    triplets_supplemented: int = 0
    seconds: float = 0.0
    files_cleared: int = 0
    #: Files found by how they are read: "markdown", "text", "text by content" (no known suffix), "pdf"...
    read_as: dict[str, int] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: Files read despite what their reader warned about (pypdf's workarounds): source, one line.
    read_with_warnings: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    cleared: list[tuple[str, str]] = field(default_factory=list)
    outside_links: list[str] = field(default_factory=list)
    tenant: str | None = None
    warnings: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The human summary."""
        lines = [
            f"files: {self.files_found} found, {self.files_ingested} new or changed, {self.files_unchanged} "
            f"unchanged, {self.files_skipped} skipped, {self.files_deleted} deleted (vanished), "
            f"{self.files_cleared} emptied or unreadable (passages removed)",
            "files read as: " + (", ".join(f"{n} {kind}" for kind, n in sorted(self.read_as.items())) or "-"),
            f"passages: {self.chunks} chunks loaded; {self.passages_added} added, {self.passages_updated} updated "
            f"({self.passages_metadata_updated} in metadata only: not embedded or extracted again), "
            f"{self.passages_unchanged} unchanged, {self.passages_deleted} deleted",
            f"graph: {self.entities_added} entities and {self.relations_added} relations added; "
            f"{self.entities_deleted} entities and {self.relations_deleted} relations deleted",
            f"embedded {self.texts_embedded} texts; extraction: {self.extraction_calls} calls, "
            f"{self.extraction_cached} from the cache, "
            f"{self.extraction_failures} failed; {self.seconds:.1f}s",
        ]
        if self.supplement:
            added = f"{self.triplets_supplemented} triplets added to the extractor's"
            lines.insert(-1, f"supplement {self.supplement}: {added}")
        if self.tenant is not None:
            lines.insert(0, f"tenant: {terminal_text(self.tenant)}")
        lines += [f"  skipped {terminal_text(s)}: {terminal_text(r)}" for s, r in self.skipped[:50]]
        if len(self.skipped) > 50:
            lines.append(f"  ... and {len(self.skipped) - 50} more skipped")
        lines += [f"  read {terminal_text(s)}: {terminal_text(w)}" for s, w in self.read_with_warnings[:50]]
        if len(self.read_with_warnings) > 50:
            lines.append(f"  ... and {len(self.read_with_warnings) - 50} more read with warnings")
        lines += [f"  removed the stored passages of {terminal_text(s)}: {terminal_text(r)}" for s, r in self.cleared]
        lines += [f"warning: {terminal_text(w)}" for w in self.warnings]
        if self.outside_links:
            lines.append(f"  {len(self.outside_links)} symbolic links leave the given folders and were not followed")
        return "\n".join(lines)

    def count_read(self, files: Iterable[Any]) -> None:
        """Count the found files by how they are read (a kind told from the first bytes says "by content")."""
        for file in files:
            kind = file.read_as
            self.read_as[kind] = self.read_as.get(kind, 0) + 1

    def add_ingest(self, report: Any) -> None:
        """Add an ``IngestReport``'s counts."""
        self.passages_added += report.passages_added
        self.passages_updated += report.passages_updated
        self.passages_metadata_updated += report.passages_metadata_updated
        self.passages_unchanged += report.passages_unchanged
        self.entities_added += report.entities_added
        self.relations_added += report.relations_added
        self.entities_deleted += report.entities_removed
        self.relations_deleted += report.relations_removed
        self.texts_embedded += report.texts_embedded
        self.extraction_calls += report.extraction_calls
        self.extraction_cached += report.extraction_cached
        self.extraction_failures += report.extraction_failures
        self.triplets_supplemented += getattr(report, "triplets_supplemented", 0)
        self.skipped += [(p.record_id, p.reason) for p in report.problems[:50]]
        self.warnings += [w for w in getattr(report, "warnings", []) if w not in self.warnings]

    def add_delete(self, report: Any) -> None:
        """Add a ``DeleteReport``'s counts."""
        self.passages_deleted += report.passages_deleted
        self.entities_deleted += report.entities_deleted
        self.relations_deleted += report.relations_deleted
