"""The browse page (``GET /``) and the reads it makes: find entities, their neighbours, a passage.

The page (``browse.html``, plain HTML and JavaScript, no build step, no CDN) searches entity
names, lists an entity's relations with the entity at the other end (click it to go on)
and the passages behind each relation (click one to read it with its source and page).
Every stored string is put into the page as text (``textContent``), never as HTML. On a
store with tenants, each read needs ``tenant`` and shows only what that tenant's passages
support.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from langchain_graphrag_milvus.errors import UnknownIdError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.server.state import ServerState

__all__ = ["add_routes", "page"]

_REL_FIELDS = ("subject_id", "object_id", "predicate", "text", "passage_ids")
_MAX_NEIGHBOURS = 200


def page() -> str:
    """The browse page's HTML."""
    return resources.files("langchain_graphrag_milvus.server").joinpath("browse.html").read_text(encoding="utf-8")


class _Reader:
    """Reads for one request, narrowed to a tenant's passages on a partitioned store."""

    def __init__(self, state: ServerState, tenant: str | None) -> None:
        self.store = state.store
        scoped = state.scoped_filter(None, tenant)
        self.filter_expr = expr.as_filter(scoped) if scoped else None
        self.view = self.store.graph_view(self.filter_expr) if self.filter_expr else None

    def allowed_entities(self) -> set[str] | None:
        if self.view is None:
            return None
        graph = self.store.graph
        return set(graph.entities.ids_at(self.view.entities))

    def passages(self, ids: list[str]) -> list[str]:
        return ids if self.view is None else [p for p in ids if p in self.view.passage_ids]

    def entities(self, q: str, limit: int) -> list[dict[str, Any]]:
        names = self.store.entity_names()
        allowed = self.allowed_entities()
        needle = q.casefold().strip()
        found = [
            (name, eid)
            for eid, name in names.items()
            if needle in name.casefold() and (allowed is None or eid in allowed)
        ]
        found.sort(key=lambda x: (not x[0].casefold().startswith(needle), len(x[0]), x[0]))
        return [{"id": eid, "name": name} for name, eid in found[:limit]]

    def neighbours(self, entity_id: str) -> dict[str, Any]:
        names = self.store.entity_names()
        allowed = self.allowed_entities()
        if entity_id not in names or (allowed is not None and entity_id not in allowed):
            raise UnknownIdError(f"no entity with id {entity_id!r}")
        where = expr.any_of(expr.eq_filter({"subject_id": entity_id}), expr.eq_filter({"object_id": entity_id}))
        rows = self.store.reads.query("relations", where or "", _REL_FIELDS, limit=_MAX_NEIGHBOURS)
        relations = []
        for row in rows:
            passage_ids = self.passages([str(p) for p in row.get("passage_ids") or []])
            if not passage_ids:
                continue
            subj, obj = str(row["subject_id"]), str(row["object_id"])
            relations.append(
                {
                    "id": str(row["pk"]),
                    "text": str(row.get("text", "")),
                    "predicate": str(row.get("predicate", "")),
                    "subject": {"id": subj, "name": names.get(subj, subj)},
                    "object": {"id": obj, "name": names.get(obj, obj)},
                    "passage_ids": passage_ids,
                }
            )
        relations.sort(key=lambda r: str(r["text"]))
        return {
            "entity": {"id": entity_id, "name": names[entity_id]},
            "relations": relations,
            "truncated": len(rows) >= _MAX_NEIGHBOURS,
        }

    def passage(self, passage_id: str) -> dict[str, Any]:
        rows = self.store.fetch("passages", [passage_id], None, filter_expr=self.filter_expr)
        row = rows.get(passage_id)
        if row is None:
            raise UnknownIdError(f"no passage with id {passage_id!r}")
        meta = {k: v for k, v in row.items() if k not in ("pk", "text", "vector") and not k.startswith("_")}
        metadata = meta.pop("metadata", None)
        if isinstance(metadata, dict):
            meta = {**metadata, **meta}
        return {
            "id": passage_id,
            "text": str(row.get("text", "")),
            "source": meta.get("source", meta.get("source_id")),
            "page": meta.get("page"),
            "metadata": {k: v for k, v in meta.items() if k != "triplets"},
        }


def add_routes(app: FastAPI, state: ServerState) -> None:
    """``GET /`` (the page) and ``GET /graph/entities``, ``/graph/entities/{id}``, ``/graph/passages/{id}``."""

    @app.get("/", response_class=HTMLResponse, summary="The browse page: entities, neighbours, passages")
    async def index() -> HTMLResponse:
        return HTMLResponse(page())

    @app.get("/graph/entities", summary="Entities whose name contains q")
    async def entities(q: str, limit: int = 20, tenant: str | None = None) -> dict[str, Any]:
        limit = max(1, min(limit, 100))
        found = await asyncio.to_thread(lambda: _Reader(state, tenant).entities(q, limit))
        return {"entities": found}

    @app.get("/graph/entities/{entity_id}", summary="An entity's relations and the entities at their other end")
    async def neighbours(entity_id: str, tenant: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(lambda: _Reader(state, tenant).neighbours(entity_id))

    @app.get("/graph/passages/{passage_id:path}", summary="A passage with its source, page and metadata")
    async def passage(passage_id: str, tenant: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(lambda: _Reader(state, tenant).passage(passage_id))
