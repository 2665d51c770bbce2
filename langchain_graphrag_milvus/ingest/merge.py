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

**Tenants.** A store with ``partition_key_field`` needs ``tenant="a"`` (merge tenant
``a``'s entities: its rows are its own, ids hash the tenant, so no other tenant's view
changes) or ``all_tenants=True`` (the same merge in every tenant whose passages name one
of the entities); a store without a partition key refuses ``tenant=``. A partitioned store
created by an earlier version shares its rows between tenants: there only
``all_tenants=True`` can merge (the rows are everyone's), and ``tenant=`` raises.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from langchain_graphrag_milvus.errors import MalformedRecordError
from langchain_graphrag_milvus.graph.ids import ids_to_keys
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.records import check_entity_name
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.graph_cache import GraphDelta
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION
from langchain_graphrag_milvus.milvus.writes import RELATION_ROW_FIELDS, delete_rows, relation_row, write_rows
from langchain_graphrag_milvus.text.names import (
    clean_text,
    entity_id,
    entity_key,
    relation_id,
    relation_text,
)

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
    ctx: IngestContext, sources: dict[str, str], target: str, tenant: str | None
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
            relation_id(s, p, o, tenant),
            {"text": relation_text(s, p, o), "subject_id": entity_id(s, tenant), "object_id": entity_id(o, tenant),
             "predicate": p, "passage_ids": {}},
        )  # fmt: skip
        rel["passage_ids"].update(dict.fromkeys(row["passage_ids"]))  # an ordered set: linear in the links
    for rel in new.values():
        rel["passage_ids"] = list(rel["passage_ids"])
    return old, new


def merge_entities(
    ctx: IngestContext, names: Iterable[str], into: str, *, tenant: str | None = None, all_tenants: bool = False
) -> MergeReport:
    """Merge the entities ``names`` into the entity ``into`` (created if missing).

    Args:
        ctx: The store's parts and settings.
        names: Entity names to merge away (matched after normalisation, like ingestion:
            case and whitespace do not matter); unknown names are ignored.
        into: The entity that remains.
        tenant: In a store with ``partition_key_field``: merge only this tenant's entities.
        all_tenants: In a store with ``partition_key_field``: merge in every tenant.

    Raises:
        MalformedRecordError: A name is empty or not a string; ``into`` is too long.
        ValueError: A partitioned store got neither ``tenant`` nor ``all_tenants=True``
            (or both); a store without a partition key got ``tenant``; a partitioned store
            whose rows are shared between tenants (created by an earlier version) got ``tenant``.
    """
    check_entity_name(into, "into")  # before any read or write
    target = _name(into, "into")
    if isinstance(names, str):
        raise TypeError("names must be a list of entity names, not a string")
    cleaned = [_name(n, "each name") for n in names]
    _check_scope(ctx, tenant, all_tenants)
    parts = ctx.parts
    if not cleaned or not parts.writes.exists():
        return MergeReport()
    parts.writes.check_open()
    if not parts.writes.tenant_rows():
        if tenant is not None:
            raise ValueError(
                f"this store ({parts.writes.location}) was created by an earlier version and "
                "shares entity and relation rows between tenants: a merge cannot be limited to one tenant. Pass "
                "all_tenants=True to merge in every tenant, or re-ingest into a new collection_prefix"
            )
        return _merge(ctx, cleaned, target, None)
    report = MergeReport()
    for scope in [tenant] if tenant is not None else _tenants_naming(ctx, cleaned):
        done = _merge(ctx, cleaned, target, scope)
        report.entities_merged += done.entities_merged
        report.relations_rewritten += done.relations_rewritten
        report.relations_joined += done.relations_joined
    return report


def _check_scope(ctx: IngestContext, tenant: str | None, all_tenants: bool) -> None:
    """The ``tenant=`` / ``all_tenants=`` rules of deletes, for merges."""
    if tenant is not None and all_tenants:
        raise ValueError("pass tenant= or all_tenants=True, not both")
    key = ctx.partition_key_field
    if key is None:
        if tenant is not None:
            raise ValueError("tenant= needs a store with partition_key_field; this store has no tenants")
        return
    if tenant is None and not all_tenants:
        raise ValueError(
            f"this store keeps entities per {key!r}: pass tenant=<value> to merge one tenant's entities, "
            "or all_tenants=True to merge them in every tenant"
        )
    if tenant is not None and (not isinstance(tenant, str) or not tenant):
        raise TypeError(f"tenant must be a non-empty string, got {type(tenant).__name__} {tenant!r:.60}")


def _tenants_naming(ctx: IngestContext, names: list[str]) -> list[str]:
    """The tenants with an entity of one of ``names`` (the tenants of its relations' passages), sorted."""
    keys = {entity_key(n) for n in names}
    cache = ctx.parts.graph
    ids = [eid for eid, text in cache.entity_names().items() if entity_key(text) in keys]
    graph = cache.current()
    found = [int(i) for i in graph.entities.find_ids(ids).tolist() if i >= 0]
    relations = sorted({int(r) for e in found for r in graph.ent_rel.row(e).tolist()})
    passages = sorted({graph.passages.ids[int(p)] for r in relations for p in graph.rel_pas.row(r).tolist()})
    key = str(ctx.partition_key_field)
    rows = ctx.parts.reads.fetch("passages", passages, (key,)) if passages else {}
    return sorted({str(row[key]) for row in rows.values() if isinstance(row.get(key), str)})


def _merge(ctx: IngestContext, names: list[str], target: str, tenant: str | None) -> MergeReport:
    """Merge ``names`` into ``target`` among ``tenant``'s rows (all rows: None)."""
    tid = entity_id(target, tenant)
    wanted = {entity_id(n, tenant): n for n in names if entity_id(n, tenant) != tid}
    report = MergeReport()
    parts = ctx.parts
    if not wanted:
        return report
    present = parts.reads.fetch("entities", [*wanted, tid], ("text",))
    sources = {eid: name for eid, name in wanted.items() if eid in present}
    if not sources:
        return report
    old, new = _plan(ctx, sources, target, tenant)
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
            unlinked_relation_keys=ids_to_keys([r["pk"] for r in old for _ in r["passage_ids"]]).tolist(),
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
            row = relation_row(stored[rid], list(dict.fromkeys([*links, *rel["passage_ids"]])))
            report.relations_joined += 1
        else:
            row = {"pk": rid, **rel, "vector": vectors[rel["text"]]}
        row["passage_ids"] = row["passage_ids"][:MAX_PASSAGES_PER_RELATION]
        rows.append(row)
    return rows


def _entity_row(ctx: IngestContext, eid: str, name: str) -> dict[str, Any]:
    return {"pk": eid, "text": name, "vector": ctx.embedding.embed_documents([name])[0], "synonym_ids": []}
