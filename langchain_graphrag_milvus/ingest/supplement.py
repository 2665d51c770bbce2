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

``supplement="auto"`` (the store's default) is ``"offline_links"`` when the store's
``extractor`` is an LLM extractor of :func:`~.triplets.create_llm_triplet_extractor` and spaCy's
pipeline is installed (the ``offline`` extra), else nothing: a store with no other extractor
adds no supplement unless asked. It is decided once, when the store is made, from its
``extractor``; like any supplement it then runs on every passage the store writes, given
triplets and a per-call ``extractor=`` included, and a per-call LLM extractor (or one set
later with ``store.extractor = ...``) on a store made without one gets none (pass
``supplement="offline_links"``). Without spaCy an LLM extractor works as before, with a
``UserWarning`` that says what is missing.

Only passages written by an ingest get the supplement: like a changed extractor, turning
it on does not touch stored passages whose text is unchanged (delete and re-ingest them).
A failed supplement extraction leaves the passage with its own triplets, counted in
``extraction_failures``, and the next ingest retries it. On musique100 (GPT-3.5 triplets,
default ranking) ``"offline_links"`` raises Recall@2/@5 from 58.8 / 78.6 to 60.5 / 82.5, above
the spaCy graph's 57.4 / 81.4 and higher or equal in each of five folds (``"offline"``: 58.0 /
79.6 at an earlier ranking; ``benchmarks/README.md``).

Example:
    .. code-block:: python

        store = MilvusGraphStore(embeddings, extractor=create_llm_triplet_extractor(llm),
                                 supplement="offline_links")
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.ingest.extract import extract_records
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, Triplet, parse_triplets
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.text.names import entity_key

__all__ = [
    "SUPPLEMENTS",
    "Supplement",
    "auto_supplement",
    "is_llm_extractor",
    "merge_supplement",
    "resolve_supplement",
    "supplement_records",
]

#: The named supplements: the offline extractor's title ↔ mention links, or all its triplets
#: (and ``"auto"``: the links for an LLM extractor, else none).
SUPPLEMENTS = ("offline_links", "offline")

Supplement = Literal["auto", "offline_links", "offline"]


def is_llm_extractor(extractor: object) -> bool:
    """Whether ``extractor`` is (a binding of) what :func:`~.triplets.create_llm_triplet_extractor` returns.

    The marker is looked for down the chain of bindings (``.bound``): a user's
    ``.with_config(metadata=...)`` replaces the outer binding's metadata, not the inner one's.
    """
    from langchain_graphrag_milvus.ingest.triplets import LLM_EXTRACTOR_KEY

    for _ in range(8):  # bindings of bindings; a few levels at most
        config = getattr(extractor, "config", None)
        metadata = config.get("metadata") if isinstance(config, dict) else None
        if isinstance(metadata, dict) and metadata.get(LLM_EXTRACTOR_KEY) == "llm":
            return True
        extractor = getattr(extractor, "bound", None)
        if extractor is None:
            return False
    return False


def auto_supplement(extractor: object) -> Supplement | None:
    """What ``supplement="auto"`` is for ``extractor``: the links for an LLM extractor, else None.

    ``"offline_links"`` when ``extractor`` is an LLM extractor (:func:`is_llm_extractor`) and
    spaCy's pipeline is installed; an LLM extractor without it gets None and a ``UserWarning``.
    """
    if not is_llm_extractor(extractor):
        return None
    from langchain_graphrag_milvus.ingest.offline import OfflineExtractorUnavailableError, resolve_pipeline

    try:
        resolve_pipeline(None)
    except OfflineExtractorUnavailableError as exc:
        warnings.warn(
            "supplement='auto': the LLM extractor's triplets get no spaCy title links, which raise "
            f"retrieval quality ({exc}); install the 'offline' extra, or pass supplement=None to silence this",
            UserWarning,
            stacklevel=3,
        )
        return None
    return "offline_links"


def resolve_supplement(
    supplement: Runnable[Any, Any] | str | None, extractor: object = None
) -> Runnable[Any, Any] | None:
    """``"offline_links"`` / ``"offline"`` → the offline extractor (links only / all); a runnable or None as is.

    ``"auto"``: :func:`auto_supplement` of the store's ``extractor``.

    Raises:
        ValueError: Another string.
        OfflineExtractorUnavailableError: A named supplement without spaCy or its pipeline.
    """
    if supplement == "auto":
        supplement = auto_supplement(extractor)
    if isinstance(supplement, str):
        if supplement not in SUPPLEMENTS:
            raise ValueError(
                f"supplement must be a Runnable, 'auto', {' or '.join(map(repr, SUPPLEMENTS))} or None, "
                f"not {supplement!r}"
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
