"""The read seam without Milvus: its derived async forms, and no raw row read outside ``milvus/``."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.milvus.read_seam import Hit, StoreReads
from langchain_graphrag_milvus.milvus.reads import MilvusReads
from langchain_graphrag_milvus.milvus.schema import Kind

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_graphrag_milvus"
#: Calls that read rows straight from a Milvus client.
RAW_READ = re.compile(r"\.(query|query_iterator|search|get|search_iterator)\(")
#: Files outside milvus/ allowed a raw read, and why.
#: None: the browse page's neighbour list reads through ``store.reads.query`` (issue 27, the backend factory).
ALLOWED: dict[str, int] = {}


class Recording(StoreReads):
    """A backend that writes only the blocking reads; the async ones are the protocol's."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, str]] = []

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        self.calls.append(("search", (kind, vectors, limit, filter_expr, tuple(output_fields)), _thread()))
        return [[Hit("a", 1.0, {"text": "x"})] for _ in vectors]

    def fetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        if isinstance(ids, str):
            raise TypeError("ids must be a list")
        got = list(ids)
        self.calls.append(("fetch", (kind, got, output_fields, filter_expr), _thread()))
        return {i: {"pk": i} for i in got}

    def query(
        self, kind: Kind, filter_expr: str, output_fields: Sequence[str], *, limit: int = 1
    ) -> list[dict[str, Any]]:
        return []

    def iterate(
        self, kind: Kind, output_fields: Sequence[str], batch_size: int = 1, *, filter_expr: str | None = None
    ) -> Iterator[dict[str, Any]]:
        return iter(())

    def counts(self) -> dict[str, int]:
        return {}

    def matching_passage_values(
        self, ids: Sequence[str], filter_expr: str, field: str | None = None
    ) -> list[tuple[str, Any]]:
        return []


def _thread() -> str:
    return threading.current_thread().name


def test_async_forms_are_the_blocking_reads_in_a_worker_thread() -> None:
    reads = Recording()
    hits = asyncio.run(reads.asearch("entities", [[1.0, 0.0]], 3, filter_expr='pk != ""', output_fields=("text",)))
    rows = asyncio.run(reads.afetch("passages", (i for i in ["a", "b"]), ("text",), filter_expr="x == 1"))
    assert hits == [[Hit("a", 1.0, {"text": "x"})]] and rows == {"a": {"pk": "a"}, "b": {"pk": "b"}}
    (search, args, thread), (fetch, fetched, fetch_thread) = reads.calls
    assert (search, args) == ("search", ("entities", [[1.0, 0.0]], 3, 'pk != ""', ("text",)))
    assert (fetch, fetched) == ("fetch", ("passages", ["a", "b"], ("text",), "x == 1"))  # the generator consumed
    assert thread != threading.main_thread().name and fetch_thread != threading.main_thread().name


def test_async_fetch_still_refuses_a_single_string() -> None:
    reads = Recording()
    try:
        asyncio.run(reads.afetch("passages", "ab"))
    except TypeError:
        return
    raise AssertionError("afetch accepted a string as ids")


def test_milvus_reads_implement_the_seam_with_its_async_defaults() -> None:
    assert StoreReads in MilvusReads.__mro__  # an explicit subclass: mypy checks every member
    for name in ("asearch", "afetch"):  # one implementation per read: the blocking one, in a thread (issue 27)
        assert getattr(MilvusReads, name) is getattr(StoreReads, name)


def test_no_raw_row_read_outside_milvus() -> None:
    found: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("milvus/"):
            continue
        text = path.read_text(encoding="utf-8")
        calls = [m for m in RAW_READ.finditer(text) if "client" in text[max(0, m.start() - 40) : m.start()]]
        if calls:
            found[rel] = len(calls)
    assert found == ALLOWED, "read the rows through the read seam (milvus/read_seam.py), not a Milvus client"
