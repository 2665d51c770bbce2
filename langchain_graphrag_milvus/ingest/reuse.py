"""An updated passage whose text did not change keeps its vector, and its graph links when extraction would agree.

The work of a passage follows its inputs: its vector is the embedding of its text, its
triplets are what the extractor makes of its text and title. A passage whose stored row
says it changed (another ``doc_hash``: its metadata changed, e.g. a file's fingerprint,
modification time or chunk count) but whose text is the stored text exactly is therefore:

* **re-stamped** when its triplets come from the extractor, the title the extractor reads
  is the stored one and its last extraction did not fail: its row is rewritten with the new
  metadata and the *stored* vector, its links to relations stay as they are; nothing is
  embedded and nothing is extracted. This is what an unchanged passage gets too (a
  stored passage is not re-extracted when the extractor changes; delete and re-ingest
  it for that);
* otherwise (triplets given with the document, no extractor, a new title, a failed
  extraction to retry) replaced as any changed passage, but with the stored vector: its
  text is not embedded again.

The rewritten row is still the commit marker of the passage (written last, with the new
``doc_hash``): a failure before it leaves the old row, which a re-run re-stamps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.plan import Classified
from langchain_graphrag_milvus.ingest.records import PassageRecord

__all__ = ["StoredWork", "reuse_stored"]

_RETRY = "!retry"


@dataclass
class StoredWork:
    """What a chunk takes from the stored rows of its changed passages.

    Attributes:
        vectors: Text → stored vector, for changed passages whose text is the stored one.
        kept: Passages re-stamped: rewritten with the stored vector, links kept, not extracted.
    """

    vectors: dict[str, list[float]] = field(default_factory=dict)
    kept: list[PassageRecord] = field(default_factory=list)


def _title(value: Any) -> str | None:
    """The title an extractor reads (``extract_texts`` passes only non-empty strings)."""
    return value if isinstance(value, str) and value else None


def _vector(raw: Any) -> list[float] | None:
    if raw is None:
        return None
    try:
        return [float(x) for x in raw]
    except (TypeError, ValueError):
        return None


def reuse_stored(ctx: IngestContext, sorted_: Classified, extractor: Any) -> StoredWork:
    """Read the stored text and vector of the changed passages; take out those to re-stamp.

    Re-stamped records leave ``sorted_.to_write`` and ``sorted_.changed`` (the caller writes
    them with ``vectors``); ``report.passages_updated`` still counts them.
    """
    work = StoredWork()
    if not sorted_.changed:
        return work
    rows = ctx.parts.reads.fetch("passages", [r.id for r in sorted_.changed], ("text", "vector", "title"))
    kept_ids: set[str] = set()
    for record in sorted_.changed:
        row = rows.get(record.id)
        vector = _vector(row.get("vector")) if row is not None else None
        if row is None or vector is None or row.get("text") != record.text:
            continue
        work.vectors[record.text] = vector
        stored_hash = str(sorted_.old_passages.get(record.id, {}).get("doc_hash", ""))
        if (
            extractor is not None
            and record.needs_extraction
            and not stored_hash.endswith(_RETRY)
            and _title(row.get("title")) == _title(record.metadata.get("title"))
        ):
            work.kept.append(record)
            kept_ids.add(record.id)
    if kept_ids:
        sorted_.to_write = [r for r in sorted_.to_write if r.id not in kept_ids]
        sorted_.changed = [r for r in sorted_.changed if r.id not in kept_ids]
    return work


def unembedded(texts: Sequence[str], work: StoredWork) -> list[str]:
    """The texts that still need an embedding (those without a stored vector)."""
    return [t for t in texts if t not in work.vectors]
