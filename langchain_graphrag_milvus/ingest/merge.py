"""Merge duplicate entities by hand: ``store.merge_entities(["Euler"], into="Leonhard Euler")``.

Every relation naming a merged entity is rewritten to name the target instead (new id and
text, embedded once; a relation that then equals an existing one only adds its passage
links to it); the old relations and the merged entity rows are deleted; the graph index
is updated in place (and saved, with ``graph_path``).

Write order (crash-safe, re-runnable): bump the generation; target entity; rewritten
relations (upserts that union passage links); delete the old relations; delete the merged
entities. A run interrupted anywhere leaves the old relations or the entity rows behind,
and running the same merge again recomputes the same rows and finishes the job. Entity
names are data: they are hashed to ids and stored in rows, never put in an expression;
the relation lookup filters on those hex ids through :mod:`langchain_graphrag_milvus.milvus.expr`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from langchain_graphrag_milvus.errors import MalformedRecordError
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.records import check_entity_name
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.graph_cache import GraphDelta
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION
from langchain_graphrag_milvus.milvus.writes import RELATION_ROW_FIELDS, delete_rows, relation_row, write_rows
from langchain_graphrag_milvus.text.names import clean_text, entity_id, id_to_key, relation_id, relation_text

__all__ = ["MergeReport", "merge_entities"]


@dataclass
class MergeReport:
    """What a merge changed."""

    entities_merged: int = 0
    relations_rewritten: int = 0
    relations_joined: int = 0

    def __str__(self) -> str:
        return (
            f"{self.entities_merged} entities merged; {self.relations_rewritten} relations rewritten, "
            f"{self.relations_joined} of them joined an existing relation"
        )


def _name(value: Any, what: str) -> str:
    name = clean_text(value) if isinstance(value, str) else ""
    if not name:
        raise MalformedRecordError(f"{what} must be a non-empty entity name, not {value!r}")
    return name


def _plan(
    ctx: IngestContext, sources: dict[str, str], target: str
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The relations naming a source, and what they become (by new id)."""
    ids = list(sources)
    where = f"({expr.in_list('subject_id', ids)}) or ({expr.in_list('object_id', ids)})"
    reads = ctx.parts.reads
    old = list(reads.iterate("relations", ("subject_id", "object_id", "predicate", "passage_ids"), filter_expr=where))
    others = {r[k] for r in old for k in ("subject_id", "object_id")} - set(ids)
    names = {pk: str(row["text"]) for pk, row in reads.fetch("entities", list(others), ("text",)).items()}
    names.update(dict.fromkeys(ids, target))
    new: dict[str, dict[str, Any]] = {}
    for row in old:
        s, o, p = names.get(row["subject_id"]), names.get(row["object_id"]), str(row["predicate"])
        if s is None or o is None:  # an entity row already gone: keep the relation's own text
            continue
        rel = new.setdefault(
            relation_id(s, p, o),
            {"text": relation_text(s, p, o), "subject_id": entity_id(s), "object_id": entity_id(o),
             "predicate": p, "passage_ids": []},
        )  # fmt: skip
        rel["passage_ids"] += [pid for pid in row["passage_ids"] if pid not in rel["passage_ids"]]
    return old, new


def merge_entities(ctx: IngestContext, names: Iterable[str], into: str) -> MergeReport:
    """Merge the entities ``names`` into the entity ``into`` (created if missing).

    Args:
        ctx: The store's parts and settings.
        names: Entity names to merge away (matched after normalisation, like ingestion:
            case and whitespace do not matter); unknown names are ignored.
        into: The entity that remains.

    Raises:
        MalformedRecordError: A name is empty or not a string; ``into`` is too long.
    """
    check_entity_name(into, "into")  # before any read or write
    target = _name(into, "into")
    if isinstance(names, str):
        raise TypeError("names must be a list of entity names, not a string")
    tid = entity_id(target)
    wanted = {entity_id(n): n for n in (_name(n, "each name") for n in names) if entity_id(n) != tid}
    report = MergeReport()
    parts = ctx.parts
    if not wanted or not parts.connection.exists():
        return report
    parts.connection.check_open()
    present = parts.reads.fetch("entities", [*wanted, tid], ("text",))
    sources = {eid: name for eid, name in wanted.items() if eid in present}
    if not sources:
        return report
    old, new = _plan(ctx, sources, target)
    parts.graph.bump_generation()
    if tid not in present:
        write_rows(parts, "entities", [_entity_row(ctx, tid, target)], ())
    stored = parts.reads.fetch("relations", list(new), RELATION_ROW_FIELDS)
    rows = _rewritten_rows(ctx, new, stored, report)
    write_rows(parts, "relations", rows, stored)
    delete_rows(parts, "relations", [r["pk"] for r in old if r["pk"] not in new])
    delete_rows(parts, "entities", list(sources))
    # the old relations leave the in-memory graph, the rewritten ones join it
    parts.graph.apply(
        GraphDelta.from_relation_rows(
            rows,
            new_entities={tid: target},
            unlinked_relation_keys=[id_to_key(r["pk"]) for r in old for _ in r["passage_ids"]],
            unlinked_passage_ids=[pid for r in old for pid in r["passage_ids"]],
            removed_entities=list(sources),
        )
    )
    parts.graph.persist()
    report.entities_merged = len(sources)
    report.relations_rewritten = len(old)
    return report


def _rewritten_rows(
    ctx: IngestContext, new: dict[str, dict[str, Any]], stored: dict[str, dict[str, Any]], report: MergeReport
) -> list[dict[str, Any]]:
    """Rows of the rewritten relations: new ones embedded, equal stored ones joined (links unioned)."""
    texts = [rel["text"] for rid, rel in new.items() if rid not in stored]
    vectors = dict(zip(texts, ctx.embedding.embed_documents(texts))) if texts else {}
    rows = []
    for rid, rel in new.items():
        if rid in stored:
            links = list(stored[rid].get("passage_ids") or [])
            row = relation_row(stored[rid], links + [p for p in rel["passage_ids"] if p not in links])
            report.relations_joined += 1
        else:
            row = {"pk": rid, **rel, "vector": vectors[rel["text"]]}
        row["passage_ids"] = row["passage_ids"][:MAX_PASSAGES_PER_RELATION]
        rows.append(row)
    return rows


def _entity_row(ctx: IngestContext, eid: str, name: str) -> dict[str, Any]:
    return {"pk": eid, "text": name, "vector": ctx.embedding.embed_documents([name])[0], "synonym_ids": []}
