"""Index the passages of an existing collection: triplets → entity and relation collections.

Re-runnable and incremental: every run reads all passages (key and text), takes their
triplets from ``triplets=`` or the extractor (cached by text, so a re-run calls no model
for unchanged passages) plus the store's ``supplement``, writes only missing entities and
relations (each text embedded once), links relations to the passages that state them, unlinks what a changed passage no
longer states, and removes what only vanished passages supported. Writes go entities →
relations; the graph index is derived from the relation rows, so a run that crashed is
completed by running it again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.extract import extract_each
from langchain_graphrag_milvus.ingest.plan import triplet_rows
from langchain_graphrag_milvus.ingest.records import Problem, Triplet, parse_triplets
from langchain_graphrag_milvus.ingest.supplement import merge_supplement
from langchain_graphrag_milvus.milvus.graph_cache import GraphDelta
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION
from langchain_graphrag_milvus.milvus.writes import RELATION_ROW_FIELDS, apply_graph_change, relation_row, write_rows
from langchain_graphrag_milvus.text.names import relation_id

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

__all__ = ["IndexReport", "index_passages"]


@dataclass
class IndexReport:
    """What :func:`index_passages` did."""

    passages_seen: int = 0
    passages_with_triplets: int = 0
    passages_removed: int = 0
    entities_added: int = 0
    relations_added: int = 0
    relations_linked: int = 0
    links_removed: int = 0
    texts_embedded: int = 0
    extraction_calls: int = 0
    extraction_cached: int = 0
    extraction_failures: int = 0
    triplets_supplemented: int = 0
    triplets_skipped: int = 0
    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{self.passages_seen} passages ({self.passages_with_triplets} with triplets, {self.passages_removed} "
            f"vanished); {self.entities_added} entities and {self.relations_added} relations added, "
            f"{self.relations_linked} relations relinked, {self.links_removed} links removed; "
            f"{self.texts_embedded} texts embedded; extraction: {self.extraction_calls} calls, "
            f"{self.extraction_cached} cached, {self.extraction_failures} failed; "
            f"{self.triplets_skipped} triplets skipped"
            + (f"; {self.triplets_supplemented} triplets supplemented" if self.triplets_supplemented else "")
        )


def _scan(reads: StoreReads, batch: int) -> Iterator[list[tuple[str, str]]]:
    """(passage id, text) batches of the existing collection (a page ending on a key pymilvus cannot page raises)."""
    rows = reads.iterate("passages", ("text",), batch)
    while page := list(islice(rows, batch)):
        yield [(str(r["pk"]), str(r.get("text") or "")) for r in page]


def _triplets_of(
    batch: list[tuple[str, str]],
    given: Mapping[str, Sequence[Sequence[str]]] | None,
    extractor: Runnable[str, Any] | None,
    ctx: IngestContext,
    report: IndexReport,
    strict: bool,
) -> dict[str, list[Triplet]]:
    raw: dict[str, Any] = {pid: given[pid] for pid, _ in batch if given is not None and pid in given}
    todo = [(pid, text) for pid, text in batch if pid not in raw and text.strip()]
    if extractor is not None and todo:
        for i, triplets, _usage, cached in _extract(todo, extractor, ctx, report, strict, "triplet extraction"):
            report.extraction_cached += int(cached)
            report.extraction_calls += int(not cached)
            raw[todo[i][0]] = triplets
    out: dict[str, list[Triplet]] = {pid: _parse(pid, value, report, strict) for pid, value in raw.items()}
    if ctx.supplement is not None:
        _supplement(batch, out, ctx, report, strict)
    return out


def _supplement(
    batch: list[tuple[str, str]], out: dict[str, list[Triplet]], ctx: IngestContext, report: IndexReport, strict: bool
) -> None:
    """Add the store's supplement triplets to the passages whose own triplets this run found (in place).

    Only those passages: one this run leaves alone keeps what is stored. A passage whose
    supplement fails is left out of this run altogether (its stored links stay; the next run
    retries it), so a failure never unlinks what an earlier run's supplement added.
    """
    assert ctx.supplement is not None
    texts = [(pid, text) for pid, text in batch if pid in out and text.strip()]
    done = _extract(texts, ctx.supplement, ctx, report, strict, "supplement extraction")
    for i, extra, _, _ in done:
        pid = texts[i][0]
        merged = merge_supplement(out[pid], _parse(pid, extra, report, strict))
        report.triplets_supplemented += len(merged) - len(out[pid])
        out[pid] = merged
    for i in sorted(set(range(len(texts))) - {i for i, *_ in done}):
        del out[texts[i][0]]


def _extract(
    todo: list[tuple[str, str]], extractor: Runnable[Any, Any], ctx: IngestContext, report: IndexReport,
    strict: bool, what: str,
) -> list[tuple[int, Any, dict[str, int], bool]]:  # fmt: skip
    """:func:`~.extract.extract_each` over ``(passage id, text)`` pairs; failures counted in ``report``."""

    def failed(_: int, problem: Problem) -> None:
        report.extraction_failures += 1
        report.problems.append(problem)

    texts, ids = [t for _, t in todo], [pid for pid, _ in todo]
    return extract_each(texts, extractor, ctx, strict=strict, what=what, failed=failed, ids=ids)


def _parse(pid: str, value: Any, report: IndexReport, strict: bool) -> list[Triplet]:
    problems: list[Problem] = []
    triplets = parse_triplets(value, pid, strict=strict, problems=problems)
    report.triplets_skipped += len(problems)
    report.problems += problems
    return triplets


def _unlink(ctx: IngestContext, planned: Mapping[str, set[str]], report: IndexReport) -> None:
    """Remove links from passages to relations they no longer state (changed passages)."""
    graph = ctx.parts.graph.current()
    keys: list[int] = []
    pids: list[str] = []
    for pid, idx in zip(planned, graph.passages.find(list(planned)).tolist()):
        if idx < 0:
            continue
        rows = graph.pas_rel.row(idx)
        for key, rid in zip(graph.relations.keys_at(rows).tolist(), graph.relations.ids_at(rows)):
            if rid not in planned[pid]:
                keys.append(key)
                pids.append(pid)
    if keys:
        after, removed = graph.remove_links(relation_keys=keys, passage_ids=pids)
        apply_graph_change(ctx.parts, after, removed, keys)
        report.links_removed += len(keys)


def _write(ctx: IngestContext, found: Mapping[str, list[Triplet]], report: IndexReport) -> None:
    parts = ctx.parts
    entities, relations = triplet_rows(found.items())
    old_entities = parts.reads.fetch("entities", list(entities))
    old_relations = parts.reads.fetch("relations", list(relations), RELATION_ROW_FIELDS)
    new_entities = {e: n for e, n in entities.items() if e not in old_entities}
    texts = list(
        dict.fromkeys([*new_entities.values(), *(r.text for k, r in relations.items() if k not in old_relations)])
    )
    vectors = dict(zip(texts, ctx.embedding.embed_documents(texts))) if texts else {}
    report.texts_embedded += len(texts)
    rows: list[dict[str, Any]] = []
    for rid, rel in relations.items():
        old = old_relations.get(rid)
        if old is None:
            rows.append({"pk": rid, **vars(rel), "vector": vectors[rel.text]})
            report.relations_added += 1
            continue
        stored = list(old.get("passage_ids") or [])
        extra = [p for p in rel.passage_ids if p not in stored]
        if extra:
            rows.append(relation_row(old, stored + extra))
            report.relations_linked += 1
    for row in rows:
        row["passage_ids"] = row["passage_ids"][:MAX_PASSAGES_PER_RELATION]
    entity_rows = [{"pk": e, "text": n, "vector": vectors[n], "synonym_ids": []} for e, n in new_entities.items()]
    write_rows(parts, "entities", entity_rows, ())
    write_rows(parts, "relations", rows, [r["pk"] for r in rows if r["pk"] in old_relations])
    report.entities_added += len(new_entities)
    parts.graph.apply(GraphDelta.from_relation_rows(rows, new_entities=new_entities))


def index_passages(
    ctx: IngestContext,
    *,
    triplets: Mapping[str, Sequence[Sequence[str]]] | None = None,
    extractor: Runnable[str, Any] | None = None,
    strict: bool = False,
    show_progress: bool | None = None,
) -> IndexReport:
    """Build or bring up to date the entity and relation collections of an existing collection.

    Args:
        ctx: The store's parts and settings (its write seam opens the existing collection and
            creates the graph's beside it; the passages are never written).
        triplets: Triplets by passage id (the collection's primary key, as a string);
            passages not in it go to the extractor.
        extractor: Triplet extractor (default: the store's ``extractor``); without one,
            only passages in ``triplets`` are indexed.
        strict: Raise on malformed triplets or failed extractions instead of skipping.
        show_progress: A progress bar (default: on a terminal).

    Raises:
        ValueError: Neither ``triplets`` nor an extractor was given.
    """
    extractor = extractor if extractor is not None else ctx.extractor
    if triplets is None and extractor is None:
        raise ValueError("give triplets={passage id: [[s, p, o], ...]} or an extractor (or store extractor=)")
    report = IndexReport()
    graph_cache = ctx.parts.graph
    writes = ctx.parts.writes
    if not writes.exists():
        writes.ensure_collections(len(ctx.embedding.embed_query("dimension")))  # checks the model's dimension
    writes.check_open()
    graph_cache.bump_generation()
    seen: set[str] = set()
    bar = tqdm(desc="indexing passages", unit="passage", disable=None if show_progress else True)
    with bar:
        for batch in _scan(ctx.parts.reads, max(ctx.batch_size, 64)):
            found = _triplets_of(batch, triplets, extractor, ctx, report, strict)
            planned = {pid: {relation_id(*t) for t in found.get(pid, [])} for pid, _ in batch if pid in found}
            _unlink(ctx, planned, report)
            _write(ctx, found, report)
            seen.update(pid for pid, _ in batch)
            report.passages_seen += len(batch)
            report.passages_with_triplets += sum(1 for ts in found.values() if ts)
            bar.update(len(batch))
    graph = graph_cache.current()
    vanished = [p for p in graph.passages.ids if p not in seen]
    if vanished:
        known = graph.passages.find(vanished).tolist()
        touched = sorted({k for i in known for k in graph.relations.keys_at(graph.pas_rel.row(i)).tolist()})
        after, removed = graph.remove_passages(vanished)
        apply_graph_change(ctx.parts, after, removed, touched)
        report.passages_removed = len(vanished)
    graph_cache.persist()
    return report
