"""A second extractor whose triplets are added to every passage's own: ``supplement=``.

A passage's own triplets come with it (given in the record) or from the store's
``extractor`` (an LLM). A *supplement* is a second extractor run on every passage
written, whatever the source of its own triplets; its triplets are added to them, except
those that state nothing new: a supplement triplet is dropped when the passage's own
triplets already connect its two entities (either direction, any predicate; names
compared as entity keys, :func:`~langchain_graphrag_milvus.text.names.entity_key`).

``supplement="offline_links"`` adds the structural links of the offline (spaCy)
extractor: the passage subject (its title) ``"mentions"`` each named entity of the text
that the own triplets do not already connect it to. LLM triplets miss these: on
musique100, 28% of the passages have GPT-3.5 triplets in which the passage's title is no
entity (13% with spaCy's triplets), and those triplets hold 53% of the passages' named
entities — so a question naming the subject or a mention cannot reach the passage
through the graph (``benchmarks/diag_llm_graph.py``). ``supplement="offline"`` adds all
of the offline extractor's triplets; any ``Runnable`` with the extractor contract can be
given too. Supplement triplets are cached like extractions (by extractor and text).

Only passages written by an ingest get the supplement: like a changed extractor, turning
it on does not touch stored passages whose text is unchanged (delete and re-ingest them).
A failed supplement extraction leaves the passage with its own triplets, counted in
``extraction_failures``, and the next ingest retries it. On musique100 (GPT-3.5 triplets,
default ranking) ``"offline_links"`` raises Recall@2/@5 from 59.8 / 77.6 to 61.4 / 81.5
and ``"offline"`` gives 58.0 / 79.6 (``benchmarks/README.md``); off by default, as it
needs the ``offline`` extra.

Example:
    .. code-block:: python

        store = MilvusGraphStore(embeddings, extractor=create_llm_triplet_extractor(llm),
                                 supplement="offline_links")
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.ingest.extract import extract_records
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, Triplet, parse_triplets
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.text.names import entity_key

__all__ = ["SUPPLEMENTS", "Supplement", "merge_supplement", "resolve_supplement", "supplement_records"]

#: The named supplements: the offline extractor's title ↔ mention links, or all its triplets.
SUPPLEMENTS = ("offline_links", "offline")

Supplement = Literal["offline_links", "offline"]


def resolve_supplement(supplement: Runnable[Any, Any] | str | None) -> Runnable[Any, Any] | None:
    """``"offline_links"`` / ``"offline"`` → the offline extractor (links only / all); a runnable or None as is.

    Raises:
        ValueError: Another string.
        OfflineExtractorUnavailableError: A named supplement without spaCy or its pipeline.
    """
    if isinstance(supplement, str):
        if supplement not in SUPPLEMENTS:
            raise ValueError(
                f"supplement must be a Runnable, {' or '.join(map(repr, SUPPLEMENTS))} or None, not {supplement!r}"
            )
        from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor

        return create_offline_triplet_extractor(links_only=supplement == "offline_links")
    if supplement is not None and not isinstance(supplement, Runnable):
        raise TypeError(f"supplement must be a Runnable, a name or None, not {type(supplement).__name__}")
    return supplement


def merge_supplement(own: Sequence[Triplet], extra: Iterable[Triplet]) -> list[Triplet]:
    """``own`` followed by the ``extra`` triplets whose two entities ``own`` does not connect yet.

    Extra triplets are also deduplicated among themselves (same entity pair: the first kept),
    and one whose subject and object are the same entity is dropped.
    """
    pairs = {frozenset((entity_key(t.subject), entity_key(t.object))) for t in own}
    out = list(own)
    for t in extra:
        pair = frozenset((entity_key(t.subject), entity_key(t.object)))
        if len(pair) == 2 and pair not in pairs:
            pairs.add(pair)
            out.append(t)
    return out


def supplement_records(
    records: Sequence[PassageRecord],
    supplement: Runnable[Any, Any],
    ctx: Any,
    report: IngestReport,
    *,
    strict: bool,
) -> None:
    """Add the supplement's triplets to each record's own (see the module rules), in place.

    ``ctx`` gives the extraction cache and concurrency (an ``IngestContext``). A failed
    supplement extraction leaves the record's own triplets and marks it for a retry on the
    next ingest (strict: raises).
    """
    for record, raw, _, _ in extract_records(
        records, supplement, ctx, report, strict=strict, what="supplement extraction"
    ):
        problems: list[Problem] = []
        extra = parse_triplets(raw, record.id, strict=strict, problems=problems)
        for problem in problems:
            report._problem(problem)
        before = len(record.triplets)
        record.triplets = merge_supplement(record.triplets, extra)
        report.triplets_supplemented += len(record.triplets) - before
