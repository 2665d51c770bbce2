"""Failure injection at a store's Milvus writes, and a row-by-row snapshot of a store.

``FailAt(store, at=n)`` makes the ``n``-th Milvus write call of the store's client fail with
:class:`InjectedFailure` -- before the call reaches Milvus (``after=False``: the write never
happened) or after it returned (``after=True``: the write happened, its answer was lost).
``at=0`` only counts the writes. Nothing else is faked: every other call, and every write
before the ``n``-th, goes to the real Milvus (Lite or server).
"""

from __future__ import annotations

from typing import Any

from langchain_graphrag_milvus import MilvusGraphStore

#: The client calls that change Milvus (rows, indexes, loading); collection properties are not
#: counted (the generation counter and the write lease are bookkeeping, covered elsewhere).
WRITE_METHODS = (
    "insert",
    "upsert",
    "delete",
    "create_index",
    "drop_index",
    "release_collection",
    "load_collection",
)

FIELDS = {
    "passages": ["text", "vector", "doc_hash", "source_id"],
    "entities": ["text", "vector", "synonym_ids"],
    "relations": ["text", "vector", "subject_id", "object_id", "predicate", "passage_ids"],
}


class InjectedFailure(RuntimeError):
    """The failure :class:`FailAt` injects (not a GraphRAGError: nothing typed it)."""


class FailAt:
    """Count a store's Milvus writes; fail the ``at``-th (1-based; 0: never)."""

    def __init__(self, store: MilvusGraphStore, at: int = 0, *, after: bool = False) -> None:
        self.at, self.after, self.writes = at, after, 0
        self.calls: list[str] = []
        self._client = store.client
        self._saved = {name: getattr(self._client, name) for name in WRITE_METHODS}
        for name, method in self._saved.items():
            setattr(self._client, name, self._wrap(name, method))

    def _wrap(self, name: str, method: Any) -> Any:
        def write(*args: Any, **kwargs: Any) -> Any:
            self.writes += 1
            self.calls.append(name)
            if self.writes == self.at and not self.after:
                raise InjectedFailure(f"injected before write {self.at} ({name})")
            result = method(*args, **kwargs)
            if self.writes == self.at:
                raise InjectedFailure(f"injected after write {self.at} ({name})")
            return result

        return write

    def detach(self) -> None:
        """Restore the client's methods."""
        for name, method in self._saved.items():
            setattr(self._client, name, method)


def snapshot(store: MilvusGraphStore) -> dict[str, dict[str, tuple[Any, ...]]]:
    """Every row of the three collections: pk → fields (relation passage ids as a sorted tuple)."""
    out: dict[str, dict[str, tuple[Any, ...]]] = {}
    store.check_open()
    for kind, fields in FIELDS.items():
        rows = store.client.query(
            store.collection_name(kind),
            filter='pk != ""',
            output_fields=fields,
            limit=16_384,
            consistency_level="Strong",
        )
        out[kind] = {
            r["pk"]: tuple(
                tuple(round(float(x), 5) for x in r[f])
                if f == "vector"
                else tuple(sorted(r[f]))
                if f in ("passage_ids", "synonym_ids")
                else r.get(f)
                for f in fields
            )
            for r in rows
        }
    return out


def diff(got: dict[str, dict[str, tuple[Any, ...]]], want: dict[str, dict[str, tuple[Any, ...]]]) -> str:
    """A short description of how two snapshots differ ("" when equal)."""
    lines = []
    for kind in FIELDS:
        g, w = got.get(kind, {}), want.get(kind, {})
        extra, missing = sorted(set(g) - set(w)), sorted(set(w) - set(g))
        changed = sorted(k for k in set(g) & set(w) if g[k] != w[k])
        if extra or missing or changed:
            lines.append(
                f"{kind}: {len(extra)} extra {extra[:3]}, {len(missing)} missing {missing[:3]}, "
                f"{len(changed)} differ {[(k, g[k][-1], w[k][-1]) for k in changed[:2]]}"
            )
    return "; ".join(lines)
