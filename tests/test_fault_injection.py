"""Fault injection on a real Milvus server: kill -9 it in the middle of an ingest and of an upsert.

A private server (its own directory and ports, next to any other server on the machine) is
SIGKILLed from inside the embedding call after a number of batches -- so some rows of the
operation are written and others are not -- and, in a second round, from a timer thread at a
moment nobody chose. It is restarted in the same directory, a new store (as a restarted
application would) re-runs the same operation, and the result must equal a clean run of the
same operations, row by row: passages, entities and relations (ids and every field, vectors
included), and the graph index.

The server runs with a 10 s session lease (``session_ttl``) so a restart in the same directory
does not wait the wheel's 30 s for the killed server's etcd sessions to expire. Cost here:
about 1.5-2 minutes (three kills and restarts of ~10-15 s each, a fresh server start, and the
ingests of 40 passages).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphStore

from .conftest import DATA_DIR
from .fakes import LexicalEmbeddings
from .milvus_server import MilvusServerHandle
from .test_ingest import graph_signature

pytestmark = [pytest.mark.server, pytest.mark.slow]

N_PASSAGES = 40
BATCH = 8
FIELDS = {
    "passages": ["text", "vector", "doc_hash", "source_id", "title"],
    "entities": ["text", "vector", "synonym_ids"],
    "relations": ["text", "vector", "subject_id", "object_id", "predicate", "passage_ids"],
}


class KillingEmbeddings(LexicalEmbeddings):
    """Lexical embeddings that kill the server on the ``kill_at``-th call of ``embed_documents``."""

    def __init__(self, server: MilvusServerHandle | None = None, kill_at: int = 0) -> None:
        super().__init__(64)
        self.server, self.kill_at = server, kill_at

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.server is not None and len(self.calls) + 1 == self.kill_at:
            self.server.kill()
        return super().embed_documents(texts)


def _documents(version: int) -> list[Document]:
    rows = [json.loads(line) for line in (DATA_DIR / "passages.jsonl").read_text().splitlines()[:N_PASSAGES]]
    docs = []
    for i, r in enumerate(rows):
        text, triplets = r["text"], [list(t) for t in r["triplets"]]
        if version == 2 and i % 3 == 0:  # a third of the documents change: new text, one fact less, one more
            text += " (revised)"
            triplets = triplets[1:] + [[r["title"], "was revised in", "version 2"]]
        docs.append(Document(id=r["id"], page_content=text, metadata={"title": r["title"], "triplets": triplets}))
    return docs


def snapshot(store: MilvusGraphStore) -> dict[str, dict[str, tuple]]:
    """Every row of the three collections: pk → fields (relation passage ids as a set)."""
    out: dict[str, dict[str, tuple]] = {}
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
                tuple(round(float(x), 6) for x in r[f])
                if f == "vector"
                else tuple(sorted(r[f]))
                if f in ("passage_ids", "synonym_ids")
                else r.get(f)
                for f in fields
            )
            for r in rows
        }
    return out


def _diff(got: dict[str, dict[str, tuple]], want: dict[str, dict[str, tuple]]) -> str:
    lines = []
    for kind in FIELDS:
        g, w = got[kind], want[kind]
        extra, missing = sorted(set(g) - set(w)), sorted(set(w) - set(g))
        changed = sorted(k for k in set(g) & set(w) if g[k] != w[k])
        if extra or missing or changed:
            lines.append(
                f"{kind}: {len(extra)} extra {extra[:3]}, {len(missing)} missing {missing[:3]}, "
                f"{len(changed)} differ {changed[:3]}"
            )
    return "; ".join(lines)


@pytest.fixture(scope="module")
def private_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusServerHandle]:
    handle = MilvusServerHandle(tmp_path_factory.mktemp("fault-milvus"), session_ttl=10)
    try:
        handle.start()
    except Exception as exc:  # the wheel is part of the test extra; a server that cannot start is a failure
        pytest.fail(f"could not start a private Milvus server: {exc}")
    try:
        yield handle
    finally:
        handle.stop()


def _open(server: MilvusServerHandle, prefix: str, embedding: LexicalEmbeddings) -> MilvusGraphStore:
    return MilvusGraphStore(embedding, uri=server.uri, collection_prefix=prefix, batch_size=BATCH, timeout=15)


def _crash_and_rerun(
    server: MilvusServerHandle, prefix: str, operation: Any, kill: Any
) -> tuple[dict[str, float], dict[str, int]]:
    """Run ``operation(store)`` while ``kill`` ends the server; restart; re-run on a new store.

    Returns:
        Seconds of each phase, and the rows each collection held after the crash.
    """
    times: dict[str, float] = {}
    store = _open(server, prefix, kill())
    started = time.perf_counter()
    with pytest.raises(Exception):  # noqa: B017 - whatever pymilvus raises when its server dies
        operation(store)
    assert server.proc is None or server.proc.poll() is not None, "the server was not killed"
    times["until crash"] = time.perf_counter() - started
    store.close()
    started = time.perf_counter()
    server.start()
    times["restart"] = time.perf_counter() - started
    store = _open(server, prefix, LexicalEmbeddings(64))
    partial = {k: len(v) for k, v in snapshot(store).items()} if store.exists() else {}
    started = time.perf_counter()
    operation(store)
    times["re-run"] = time.perf_counter() - started
    return {k: round(v, 1) for k, v in times.items()}, partial


def _timer_kill(server: MilvusServerHandle, after: float) -> LexicalEmbeddings:
    threading.Timer(after, server.kill).start()
    return LexicalEmbeddings(64)


def test_killed_ingest_and_upsert_rerun_equal_a_clean_run(private_server: MilvusServerHandle) -> None:
    server = private_server
    v1, v2 = _documents(1), _documents(2)

    def ingest(store: MilvusGraphStore) -> None:
        store.add_documents(v1)

    def upsert(store: MilvusGraphStore) -> None:
        store.upsert_documents(v2)

    clean = _open(server, f"clean{uuid.uuid4().hex[:8]}", LexicalEmbeddings(64))
    started = time.perf_counter()
    ingest(clean)
    ingest_calls = len(clean.embedding.calls)
    want_v1, graph_v1 = snapshot(clean), graph_signature(clean.rebuild_graph())
    upsert(clean)
    upsert_calls = len(clean.embedding.calls) - ingest_calls
    clean_seconds = time.perf_counter() - started
    want_v2, graph_v2 = snapshot(clean), graph_signature(clean.rebuild_graph())
    clean.close()
    assert want_v1 != want_v2 and len(want_v1["relations"]) > N_PASSAGES

    prefix = f"crash{uuid.uuid4().hex[:8]}"
    # 1. ingest, killed inside its middle embedding call (some rows written, others not)
    t1, partial = _crash_and_rerun(server, prefix, ingest, lambda: KillingEmbeddings(server, ingest_calls // 2 + 1))
    assert 0 < sum(partial.values()) < sum(len(v) for v in want_v1.values()), f"not mid-ingest: {partial}"
    store = _open(server, prefix, LexicalEmbeddings(64))
    got = snapshot(store)
    assert got == want_v1, _diff(got, want_v1)
    assert graph_signature(store.graph) == graph_v1
    store.close()

    # 2. upsert, killed inside its middle embedding call
    t2, _ = _crash_and_rerun(server, prefix, upsert, lambda: KillingEmbeddings(server, upsert_calls // 2 + 1))
    store = _open(server, prefix, LexicalEmbeddings(64))
    got = snapshot(store)
    assert got == want_v2, _diff(got, want_v2)
    assert graph_signature(store.graph) == graph_v2
    store.close()

    # 3. ingest again from scratch under another prefix, killed by a timer at a moment nobody chose
    prefix = f"timer{uuid.uuid4().hex[:8]}"
    t3, partial3 = _crash_and_rerun(
        server, prefix, lambda s: (ingest(s), upsert(s)), lambda: _timer_kill(server, 0.4 * clean_seconds)
    )
    store = _open(server, prefix, LexicalEmbeddings(64))
    got = snapshot(store)
    assert got == want_v2, _diff(got, want_v2)
    assert graph_signature(store.graph) == graph_v2
    store.close()
    print(
        f"\nfault injection (s): ingest {t1} (rows after the crash {partial}), upsert {t2}, "
        f"timer {t3} (rows after the crash {partial3}); embedding calls: ingest {ingest_calls}, upsert {upsert_calls}"
    )
