"""Fault injection on a real Milvus server: kill -9 it in the middle of an ingest and of an upsert.

A private server (its own directory and ports, next to any other server on the machine) is
SIGKILLed at the store's middle Milvus write of the operation (counted on a clean run) -- so
some rows of the operation are written and others are not; the write then goes to the dead
server, nothing is faked -- and, in a third round, from a timer thread at a moment nobody
chose. (A kill inside the embedding call would be too early: the store embeds and validates
every vector of a chunk before it creates or writes anything.) It is restarted in the same
directory, a new store (as a restarted application would) re-runs the same operation, and
the result must equal a clean run of the same operations, row by row: passages, entities and
relations (ids and every field, vectors included), and the graph index.

The server runs with a 10 s session lease (``session_ttl``) so a restart in the same directory
does not wait the wheel's 30 s for the killed server's etcd sessions to expire (measured: a
restart after a kill takes 9-13 s, 58 s with the wheel's lease). Cost here: about 2.5 minutes
(a fresh server, three kills and restarts, and the ingests and upserts of 40 passages).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphStore

from ..conftest import DATA_DIR
from ..fakes import LexicalEmbeddings
from ..milvus_server import TEST_TUNING, MilvusServerHandle
from .test_ingest import graph_signature

pytestmark = [pytest.mark.server, pytest.mark.slow]

N_PASSAGES = 40
LEASE_TTL = 8.0
BATCH = 8
FIELDS = {
    "passages": ["text", "vector", "doc_hash", "source_id", "title"],
    "entities": ["text", "vector", "synonym_ids"],
    "relations": ["text", "vector", "subject_id", "object_id", "predicate", "passage_ids"],
}


class WriteKiller:
    """Counts the store's Milvus writes (insert, upsert, delete); kills the server at the ``kill_at``-th.

    The write itself then goes to the dead server, as it would in a crash: nothing is faked.
    """

    METHODS = ("insert", "upsert", "delete")

    def __init__(self, server: MilvusServerHandle | None = None, kill_at: int = 0) -> None:
        self.server, self.kill_at, self.writes = server, kill_at, 0

    def attach(self, store: MilvusGraphStore) -> MilvusGraphStore:
        client = store.client
        for name in self.METHODS:
            setattr(client, name, self._wrap(getattr(client, name)))
        return store

    def _wrap(self, method: Any) -> Any:
        def write(*args: Any, **kwargs: Any) -> Any:
            self.writes += 1
            if self.server is not None and self.writes == self.kill_at:
                self.server.kill()
            return method(*args, **kwargs)

        return write


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
    store.check_open()  # after a restart the server reloads collections lazily; the store loads them
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
    handle = MilvusServerHandle(tmp_path_factory.mktemp("fault-milvus"), session_ttl=10, tuned=True)
    try:
        handle.start()
    except Exception as exc:  # the wheel is part of the test extra; a server that cannot start is a failure
        pytest.fail(f"could not start a private Milvus server: {exc}")
    try:
        yield handle
    finally:
        handle.stop(grace=1.0)  # a throwaway directory: no need to wait the 10 s in which it ignores SIGTERM


def test_a_private_server_runs_beside_any_other(private_server: MilvusServerHandle) -> None:
    """Its own ports, etcd's included (the wheel's default etcd binds 127.0.0.1:2379/2380)."""
    ports = private_server.ports
    assert len(set(ports.values())) == len(ports)
    assert not {2379, 2380, 19530} & {ports["etcd_port"], ports["etcd_peer_port"], ports["proxy_port"]}
    with socket.create_connection(("127.0.0.1", ports["etcd_port"]), timeout=5):
        pass  # the embedded etcd listens where its configuration file says
    store = MilvusGraphStore(LexicalEmbeddings(64), uri=private_server.uri, collection_prefix="probe")
    assert store.exists() in (True, False)  # the server answers
    store.close()
    assert (private_server.base_dir / "server.pid").read_text().split() == [str(private_server.pid)]
    config = (private_server.base_dir / "configs" / "template.yaml").read_text()
    assert all(new in config for _, new in TEST_TUNING)  # the test tuning reached the server's configuration
    pid_dir = os.environ.get("MILVUS_SERVER_PID_DIR")
    if pid_dir:  # under .ci/run: the record CI uses to stop this server if the session dies
        record = (Path(pid_dir) / f"{private_server.pid}.pid").read_text().split()
        assert record == [str(private_server.pid), str(private_server.base_dir)]


def _open(server: MilvusServerHandle, prefix: str, embedding: LexicalEmbeddings) -> MilvusGraphStore:
    store = MilvusGraphStore(embedding, uri=server.uri, collection_prefix=prefix, batch_size=BATCH, timeout=15)
    # The killed writer's lease blocks the re-run until it expires: 8 s here instead of the default
    # 60 s (renewed every 2.7 s while the operation runs; the re-run's wait is logged and timed).
    store._connection.lease.ttl = LEASE_TTL
    return store


def _crash_and_rerun(
    server: MilvusServerHandle, prefix: str, operation: Any, kill: Any
) -> tuple[dict[str, float], dict[str, int]]:
    """Run ``operation(store)`` while ``kill`` ends the server; restart; re-run on a new store.

    Returns:
        Seconds of each phase, and the rows each collection held after the crash.
    """
    times: dict[str, float] = {}
    store = kill(_open(server, prefix, LexicalEmbeddings(64)))
    started = time.perf_counter()
    try:
        operation(store)
    except Exception:  # whatever pymilvus raises when its server dies
        pass
    else:
        store.close()
        raise FinishedFirst("the operation finished before the server was killed")
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


class FinishedFirst(AssertionError):
    """The operation under test ended before the kill meant to interrupt it."""


def _timer_crash_and_rerun(
    server: MilvusServerHandle, operation: Any, after: float, tries: int = 4
) -> tuple[dict[str, float], dict[str, int], str]:
    """:func:`_crash_and_rerun` with the server killed ``after`` seconds in (a moment nobody chose).

    The delay comes from a calibration run; if the machine got faster and the operation ends
    first, the timer is cancelled and the run repeated on a fresh prefix with half the delay.
    Returns the phases' seconds, the rows after the crash and the prefix used.
    """
    for _ in range(tries):
        timer = threading.Timer(after, server.kill)

        def start(store: MilvusGraphStore, timer: threading.Timer = timer) -> MilvusGraphStore:
            timer.start()
            return store

        prefix = f"timer{uuid.uuid4().hex[:8]}"
        try:
            times, partial = _crash_and_rerun(server, prefix, operation, start)
            return times, partial, prefix
        except FinishedFirst:
            timer.cancel()
            timer.join()
            if server.proc is None:
                server.start()  # it fired just after the operation ended
            after /= 2
    raise AssertionError(f"the operation always finished before the server was killed ({tries} tries)")


def test_killed_ingest_and_upsert_rerun_equal_a_clean_run(private_server: MilvusServerHandle) -> None:
    server = private_server
    v1, v2 = _documents(1), _documents(2)

    def ingest(store: MilvusGraphStore) -> None:
        store.add_documents(v1)

    def upsert(store: MilvusGraphStore) -> None:
        store.upsert_documents(v2)

    counter = WriteKiller()
    clean = counter.attach(_open(server, f"clean{uuid.uuid4().hex[:8]}", LexicalEmbeddings(64)))
    started = time.perf_counter()
    ingest(clean)
    ingest_writes = counter.writes
    want_v1, graph_v1 = snapshot(clean), graph_signature(clean.rebuild_graph())
    upsert(clean)
    upsert_writes = counter.writes - ingest_writes
    clean_seconds = time.perf_counter() - started
    want_v2, graph_v2 = snapshot(clean), graph_signature(clean.rebuild_graph())
    clean.close()
    assert want_v1 != want_v2 and len(want_v1["relations"]) > N_PASSAGES

    prefix = f"crash{uuid.uuid4().hex[:8]}"
    # 1. ingest, killed at its middle Milvus write (some rows written, others not)
    t1, partial = _crash_and_rerun(
        server, prefix, ingest, lambda store: WriteKiller(server, ingest_writes // 2 + 1).attach(store)
    )
    assert 0 < sum(partial.values()) < sum(len(v) for v in want_v1.values()), f"not mid-ingest: {partial}"
    store = _open(server, prefix, LexicalEmbeddings(64))
    got = snapshot(store)
    assert got == want_v1, _diff(got, want_v1)
    assert graph_signature(store.graph) == graph_v1
    store.close()

    # 2. upsert, killed at its middle Milvus write
    t2, partial2 = _crash_and_rerun(
        server, prefix, upsert, lambda store: WriteKiller(server, upsert_writes // 2 + 1).attach(store)
    )
    store = _open(server, prefix, LexicalEmbeddings(64))
    got = snapshot(store)
    assert got == want_v2, _diff(got, want_v2)
    assert graph_signature(store.graph) == graph_v2
    store.close()

    # 3. ingest again from scratch under another prefix, killed by a timer at a moment nobody chose
    t3, partial3, prefix = _timer_crash_and_rerun(server, lambda s: (ingest(s), upsert(s)), 0.4 * clean_seconds)
    store = _open(server, prefix, LexicalEmbeddings(64))
    got = snapshot(store)
    assert got == want_v2, _diff(got, want_v2)
    assert graph_signature(store.graph) == graph_v2
    store.close()
    print(
        f"\nfault injection (s): ingest {t1} (rows after the crash {partial}), "
        f"upsert {t2} (rows after the crash {partial2}), "
        f"timer {t3} (rows after the crash {partial3}); Milvus writes: ingest {ingest_writes}, upsert {upsert_writes}"
    )
