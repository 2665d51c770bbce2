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
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import MalformedRecordError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION
from langchain_graphrag_milvus.milvus.writes import RELATION_ROW_FIELDS, delete_rows, write_rows
from langchain_graphrag_milvus.text.names import clean_text, entity_id, id_to_key, relation_id, relation_text

if TYPE_CHECKING:
    from langchain_graphrag_milvus.store import MilvusGraphStore

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
    store: MilvusGraphStore, sources: dict[str, str], target: str
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The relations naming a source, and what they become (by new id)."""
    ids = list(sources)
    where = f"({expr.in_list('subject_id', ids)}) or ({expr.in_list('object_id', ids)})"
    old = list(store.iterate("relations", ("subject_id", "object_id", "predicate", "passage_ids"), filter_expr=where))
    others = {r[k] for r in old for k in ("subject_id", "object_id")} - set(ids)
    names = {pk: str(row["text"]) for pk, row in store.fetch("entities", list(others), ("text",)).items()}
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


def merge_entities(store: MilvusGraphStore, names: Iterable[str], into: str) -> MergeReport:
    """Merge the entities ``names`` into the entity ``into`` (created if missing).

    Args:
        store: The store.
        names: Entity names to merge away (matched after normalisation, like ingestion:
            case and whitespace do not matter); unknown names are ignored.
        into: The entity that remains.

    Raises:
        MalformedRecordError: A name is empty or not a string.
    """
    target = _name(into, "into")
    if isinstance(names, str):
        raise TypeError("names must be a list of entity names, not a string")
    tid = entity_id(target)
    wanted = {entity_id(n): n for n in (_name(n, "each name") for n in names) if entity_id(n) != tid}
    report = MergeReport()
    if not wanted or not store.exists():
        return report
    store.check_open()
    present = store.fetch("entities", [*wanted, tid], ("text",))
    sources = {eid: name for eid, name in wanted.items() if eid in present}
    if not sources:
        return report
    old, new = _plan(store, sources, target)
    store.bump_generation()
    if tid not in present:
        write_rows(store, "entities", [_entity_row(store, tid, target)], ())
    stored = store.fetch("relations", list(new), RELATION_ROW_FIELDS)
    texts = [rel["text"] for rid, rel in new.items() if rid not in stored]
    vectors = dict(zip(texts, store.embedding.embed_documents(texts))) if texts else {}
    rows = []
    for rid, rel in new.items():
        if rid in stored:
            links = list(stored[rid].get("passage_ids") or [])
            rel = {**{k: stored[rid][k] for k in RELATION_ROW_FIELDS}, "passage_ids": links}
            rel["passage_ids"] += [p for p in new[rid]["passage_ids"] if p not in links]
            report.relations_joined += 1
        rows.append({"pk": rid, **rel, "vector": rel.get("vector") or vectors[rel["text"]]})
        rows[-1]["passage_ids"] = rows[-1]["passage_ids"][:MAX_PASSAGES_PER_RELATION]
    write_rows(store, "relations", rows, stored)
    delete_rows(store, "relations", [r["pk"] for r in old if r["pk"] not in new])
    delete_rows(store, "entities", list(sources))
    _update_graph(store, old, rows, sources, {tid: target})
    report.entities_merged = len(sources)
    report.relations_rewritten = len(old)
    return report


def _entity_row(store: MilvusGraphStore, eid: str, name: str) -> dict[str, Any]:
    return {"pk": eid, "text": name, "vector": store.embedding.embed_documents([name])[0], "synonym_ids": []}


def _update_graph(
    store: MilvusGraphStore,
    old: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    sources: dict[str, str],
    target: dict[str, str],
) -> None:
    """Drop the old relations from the in-memory graph, add the rewritten ones, save."""
    with store._lock:
        if store._graph is not None:
            keys = [id_to_key(r["pk"]) for r in old for _ in r["passage_ids"]]
            pids = [pid for r in old for pid in r["passage_ids"]]
            after, _ = store._graph.remove_links(relation_keys=keys, passage_ids=pids)
            store._set_graph(after, removed_entities=list(sources))
        elif store._entity_names is not None:
            store._entity_names = {k: v for k, v in store._entity_names.items() if k not in sources}
    store._after_ingest(
        {
            "relation_keys": [id_to_key(r["pk"]) for r in rows],
            "subject_keys": [id_to_key(r["subject_id"]) for r in rows],
            "object_keys": [id_to_key(r["object_id"]) for r in rows],
            "passage_ids": [r["passage_ids"] for r in rows],
        },
        target,
    )
    store._after_change()
