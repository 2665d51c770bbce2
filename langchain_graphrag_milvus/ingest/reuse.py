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

**Vectors by text.** A vector is a function of its text, so the stored vectors of texts a
write is about to lose are kept in a pool for that write: the old texts of its changed
passages, with their relations and entities (:func:`reuse_stored`), and the stale passages
an upsert deletes whose text comes back under another id, with the relations and entities
of every stale passage (:func:`stale_vectors`, read before the delete). A chunk that moved
to another id, or a relation deleted with one passage and stated again by another, is then
written with its stored vector; only text never stored is embedded. (A re-run after a
failure may find less in the pool and embed more: never anything else.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.plan import Classified
from langchain_graphrag_milvus.ingest.records import PassageRecord

__all__ = ["StoredWork", "known", "reuse_stored", "stale_vectors", "unembedded"]

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
    rewritten: list[str] = []  # passages getting another text: their old text may have moved to another id
    for record in sorted_.changed:
        row = rows.get(record.id)
        vector = _vector(row.get("vector")) if row is not None else None
        if row is None or vector is None:
            continue
        if isinstance(row.get("text"), str):
            work.vectors.setdefault(str(row["text"]), vector)
        if row.get("text") != record.text:
            rewritten.append(record.id)
            continue
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
    for text, vector in linked_vectors(ctx, rewritten).items():
        work.vectors.setdefault(text, vector)
    return work


def unembedded(texts: Sequence[str], pool: Mapping[str, list[float]]) -> list[str]:
    """The texts that still need an embedding (those without a stored vector in ``pool``)."""
    return [t for t in texts if t not in pool]


def known(texts: Sequence[str], pool: Mapping[str, list[float]]) -> dict[str, list[float]]:
    """The stored vectors of those of ``texts`` that have one in ``pool``."""
    return {t: pool[t] for t in texts if t in pool}


def stale_vectors(ctx: IngestContext, stale: Sequence[str], texts: Iterable[str]) -> dict[str, list[float]]:
    """Text → stored vector of the stale passages whose text comes back, and of their relations and entities.

    Read by ``upsert_documents`` before it deletes a source's stale passages: a chunk that
    moved to another id (a splitter's positional ids after an insertion above it; a generated
    id after a metadata change), and the relations and entities that the delete removes and
    the new version states again, are then not embedded again.
    """
    wanted = set(texts)
    if not stale or not wanted:
        return {}
    reads = ctx.parts.reads
    rows = reads.fetch("passages", stale, ("text", "vector"))
    back = {pid: row for pid, row in rows.items() if row.get("text") in wanted}
    pool = {str(row["text"]): v for row in back.values() if (v := _vector(row.get("vector"))) is not None}
    for text, vector in linked_vectors(ctx, list(rows)).items():
        pool.setdefault(text, vector)
    return pool


def linked_vectors(ctx: IngestContext, passage_ids: Sequence[str]) -> dict[str, list[float]]:
    """Text → stored vector of the relations these passages are linked to, and of their entities.

    The unlink of a changed passage (or the delete of a stale one) may remove relations and
    entities that another passage of the same write states again: their stored vectors are
    then reused, not embedded again.
    """
    if not passage_ids:
        return {}
    reads, pool = ctx.parts.reads, dict[str, list[float]]()
    graph = ctx.parts.graph.current()
    found = graph.passages.find(list(passage_ids)).tolist()
    rel_idx = sorted({r for p in found if p >= 0 for r in graph.pas_rel.row(p).tolist()})
    rel_ids = graph.relations.ids_at(rel_idx)
    relations = reads.fetch("relations", rel_ids, ("text", "vector", "subject_id", "object_id")) if rel_ids else {}
    entity_ids = sorted({str(row[f]) for row in relations.values() for f in ("subject_id", "object_id")})
    entities = reads.fetch("entities", entity_ids, ("text", "vector")) if entity_ids else {}
    for row in [*relations.values(), *entities.values()]:
        vector = _vector(row.get("vector"))
        if vector is not None and isinstance(row.get("text"), str):
            pool.setdefault(str(row["text"]), vector)
    return pool
