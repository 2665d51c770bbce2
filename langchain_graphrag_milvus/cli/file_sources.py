"""What the store holds of ingested files: sources under given folders, and their fingerprints.

Used by the CLI's ``ingest`` to skip unchanged files and, with ``--sync``, to delete the
files that vanished. The passages are read through the store's read seam (``store.reads.query``).
Every value enters Milvus expressions through :mod:`.expr`; a folder
prefix becomes a string range (``source_id >= "/docs/" and source_id < "/docs0"``), which
matches exactly the paths below it with no pattern syntax to escape.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import MAX_TOP_K

if TYPE_CHECKING:
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["StoredFile", "under_roots_filter", "stored_sources", "stored_files"]

_SOURCES_PER_QUERY = 64


@dataclass
class StoredFile:
    """The chunks of one source in the store."""

    chunks: int = 0
    fingerprints: set[str] = field(default_factory=set)
    expected: set[int] = field(default_factory=set)
    complete_read: bool = True

    def matches(self, fingerprint: str) -> bool:
        """True if every stored chunk carries ``fingerprint`` and all chunks are there."""
        return (
            self.complete_read
            and self.fingerprints == {fingerprint}
            and len(self.expected) == 1
            and self.chunks == next(iter(self.expected))
        )


def under_roots_filter(roots: Sequence[str]) -> str | None:
    """A filter for sources equal to one of ``roots`` or below one of them (as folders)."""
    parts = []
    for root in dict.fromkeys(roots):
        prefix = root.rstrip("/") + "/"
        upper = prefix[:-1] + "0"  # "0" follows "/": the range holds exactly the paths under the prefix
        parts.append(
            f"(source_id == {expr.literal(root)}) or "
            f"(source_id >= {expr.literal(prefix)} and source_id < {expr.literal(upper)})"
        )
    return " or ".join(f"({p})" for p in parts) or None


def _query(store: MilvusGraphStore, filter_expr: str, fields: Sequence[str]) -> list[dict[str, Any]]:
    return store.reads.query("passages", filter_expr, fields, limit=MAX_TOP_K)


def _scope(tenant: tuple[str, str] | None) -> str | None:
    return expr.eq_filter({tenant[0]: tenant[1]}) if tenant is not None else None


def stored_sources(
    store: MilvusGraphStore, roots: Sequence[str] | None = None, tenant: tuple[str, str] | None = None
) -> set[str]:
    """Distinct ``source_id`` values in the store, optionally only those under ``roots``.

    Each round asks for sources not seen yet, so a source with many chunks costs one round
    and the answer is complete whatever the collection's size. ``tenant`` (partition key
    field, value) restricts the answer to that tenant's passages.
    """
    if not store.exists():
        return set()
    store.check_open()
    base = under_roots_filter(roots) if roots is not None else 'source_id != ""'
    if base is None:
        return set()
    base = expr.and_all(base, _scope(tenant)) or base
    seen: set[str] = set()
    while True:  # each round excludes what it has seen, so it ends after at most one empty round
        exclude = f"not ({expr.in_list('source_id', sorted(seen))})" if seen else None
        rows = _query(store, expr.and_all(base, exclude) or base, ["source_id"])
        new = {str(r["source_id"]) for r in rows} - seen
        if not new:
            return seen
        seen |= new


def stored_files(
    store: MilvusGraphStore, sources: Iterable[str], tenant: tuple[str, str] | None = None
) -> dict[str, StoredFile]:
    """For each source that has passages (of ``tenant``): chunk count, fingerprints, expected chunk counts."""
    wanted = list(dict.fromkeys(sources))
    out: dict[str, StoredFile] = {}
    if not wanted or not store.exists():
        return out
    store.check_open()
    for i in range(0, len(wanted), _SOURCES_PER_QUERY):
        batch = wanted[i : i + _SOURCES_PER_QUERY]
        where = expr.and_all(expr.in_list("source_id", batch), _scope(tenant)) or ""
        rows = _query(store, where, ["source_id", "file_fingerprint", "file_chunks"])
        for row in rows:
            info = out.setdefault(str(row["source_id"]), StoredFile())
            info.chunks += 1
            info.fingerprints.add(str(row.get("file_fingerprint")))
            chunks = row.get("file_chunks")
            info.expected.add(chunks if isinstance(chunks, int) else -1)
        if len(rows) >= MAX_TOP_K:  # the window was full: counts may be short, so re-load these files
            for source in batch:
                if source in out:
                    out[source].complete_read = False
    return out
