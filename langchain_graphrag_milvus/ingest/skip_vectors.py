"""A non-strict ingest skips only the documents whose vectors are bad.

An embedding model may answer one text of a batch with NaN, infinite or zero values.
The documents that need such a vector (for their passage text, or for an entity or a
relation their triplets state) are left out of the chunk and counted in the report
(``records_skipped``, one problem each, naming the document and the text); the other
documents of the chunk are written. With ``strict`` the first such document raises
:class:`~langchain_graphrag_milvus.errors.InvalidEmbeddingError` naming it, before
anything of the chunk is written.
"""

from __future__ import annotations

from typing import Any

from langchain_graphrag_milvus.errors import InvalidEmbeddingError
from langchain_graphrag_milvus.ingest.plan import triplet_rows
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem

__all__ = ["drop_bad_vectors"]


def _bad_text(record: PassageRecord, bad: dict[str, str], names: dict[str, str], texts: dict[str, str]) -> str | None:
    if record.text in bad:
        return record.text
    entities, relations = triplet_rows([(record.id, record.triplets)])
    for entity_id in entities:
        if names.get(entity_id) in bad:
            return names[entity_id]
    for relation_id in relations:
        if texts.get(relation_id) in bad:
            return texts[relation_id]
    return None


def drop_bad_vectors(sorted_: Any, bad: dict[str, str], report: Any, strict: bool) -> list[PassageRecord]:
    """Remove from ``sorted_.to_write`` (and ``.changed``) the records that need a bad vector.

    Args:
        sorted_: The chunk's :class:`~langchain_graphrag_milvus.ingest.plan.Classified`.
        bad: Texts whose vector is unusable, with the reason.
        report: The ingest report (counts adjusted: the records are skipped, not added).
        strict: Raise instead of skipping.

    Returns:
        The records still to write.

    Raises:
        InvalidEmbeddingError: With ``strict``, naming the first document and the text.
    """
    names, relations = triplet_rows((r.id, r.triplets) for r in sorted_.to_write)
    texts = {rid: rel.text for rid, rel in relations.items()}
    changed = {r.id for r in sorted_.changed}
    kept: list[PassageRecord] = []
    for record in sorted_.to_write:
        text = _bad_text(record, bad, names, texts)
        if text is None:
            kept.append(record)
            continue
        message = f"document {record.id!r:.80}: the embedding of {text[:60]!r} is unusable ({bad[text]})"
        if strict:
            raise InvalidEmbeddingError(message + "; nothing of this batch was written")
        report.records_skipped += 1
        if record.id in changed:
            report.passages_updated -= 1
        else:
            report.passages_added -= 1
        report._problem(Problem(record.id, message))
    sorted_.to_write = kept
    kept_ids = {r.id for r in kept}
    sorted_.changed = [r for r in sorted_.changed if r.id in kept_ids]
    return kept
