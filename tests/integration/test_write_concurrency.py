"""Writes side by side: threads of one store, two stores of one process, processes on a server.

Every document states the shared relation (Acme Corp, hired, Bob), so every write reads and
rewrites that relation's passage list: without the write guard
(``langchain_graphrag_milvus/milvus/write_guard.py``) links were lost silently (12 of 24 on
the server) or Milvus Lite raised a raw ``MilvusException`` after partial writes. Now no link
is lost, the graph in memory equals the graph rebuilt from Milvus, and a writer that cannot
get the lease gets a typed ``ConcurrentWriteError`` with nothing written. Counts are fixed
(no timing assertions); the stress test runs a fixed number of calls in three processes of
two threads each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.errors import ConcurrentWriteError
from langchain_graphrag_milvus.milvus.write_guard import WRITER_KEY

from ..concurrent_writer import PER_CALL, documents, run
from ..fakes import LexicalEmbeddings
from ..faults import snapshot
from ..graph_checks import graph_signature

ROOT = Path(__file__).resolve().parents[2]


def _shared_links(store: MilvusGraphStore) -> set[str]:
    rows = store.client.query(
        store.collection_name("relations"),
        filter='predicate == "hired"',
        output_fields=["passage_ids"],
        limit=10,
        consistency_level="Strong",
    )
    assert len(rows) == 1, rows
    return set(rows[0]["passage_ids"])


def _check(store: MilvusGraphStore, added: list[str]) -> None:
    assert _shared_links(store) == set(added), "a passage link of the shared relation was lost"
    passages = set(snapshot(store)["passages"])
    assert passages == set(added)
    assert graph_signature(store.graph) == graph_signature(store.rebuild_graph())


def test_threads_of_one_store_lose_no_link(make_store) -> None:
    store = make_store(LexicalEmbeddings(32), consistency_level="Strong")
    result = run(store, "w", calls=3, threads=3)
    assert result["errors"] == []
    assert len(result["added"]) == 3 * 3 * PER_CALL
    _check(store, result["added"])


def test_two_stores_on_one_prefix_lose_no_link(make_store) -> None:
    a = make_store(LexicalEmbeddings(32), consistency_level="Strong")
    b = make_store(LexicalEmbeddings(32), prefix=a.collection_prefix, consistency_level="Strong")
    results: list[dict[str, Any]] = []
    pairs = ((a, "a"), (b, "b"))
    threads = [threading.Thread(target=lambda s=s, w=w: results.append(run(s, w, 3, 1))) for s, w in pairs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    added = [pid for r in results for pid in r["added"]]
    assert [e for r in results for e in r["errors"]] == []
    assert len(added) == 2 * 3 * PER_CALL
    for store in (a, b):  # each graph follows the other's writes (checked before each write, and here)
        store.refresh()
        _check(store, added)


def _writers(uri: str, prefix: str, workers: int, calls: int, threads: int) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.concurrent_writer", uri, prefix, f"p{w}", str(calls), str(threads)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


@pytest.mark.server
@pytest.mark.slow
def test_processes_lose_no_link_stress(make_store) -> None:
    """Three processes of two threads, three calls each, on one prefix: every link kept, or a typed refusal."""
    if make_store.backend != "server":
        pytest.skip("one Milvus Lite directory is locked to one process")
    store = make_store(LexicalEmbeddings(32), consistency_level="Strong")
    results = _writers(make_store.uri, store.collection_prefix, workers=3, calls=3, threads=2)
    added = [pid for r in results for pid in r["added"]]
    errors = [e for r in results for e in r["errors"]]
    assert all(e.startswith("ConcurrentWriteError") for e in errors), errors
    assert len(added) == 3 * 2 * 3 * PER_CALL  # every refused call succeeded when re-run
    _check(store, added)


@pytest.mark.server
def test_a_first_load_overtaken_by_another_process_reads_what_it_wrote(make_store, monkeypatch) -> None:
    """The collections did not exist when this load began; another process created and filled them before its
    first chunk. The load decided "empty" without the lease (there was no collection to hold it on): it must take
    the lease before reading and plan from what is there, not overwrite the other writer's links."""
    if make_store.backend != "server":
        pytest.skip("one Milvus Lite directory is locked to one process")
    from langchain_graphrag_milvus.ingest import load

    store = make_store(LexicalEmbeddings(32), consistency_level="Strong")
    assert not store._connection.exists()
    original = load.starts_empty
    other: list[str] = []

    def overtaken(*args: Any, **kwargs: Any) -> bool:
        empty = original(*args, **kwargs)
        if not other:  # the other process runs its whole write between the decision and the first chunk
            (result,) = _writers(make_store.uri, store.collection_prefix, workers=1, calls=1, threads=1)
            assert result["errors"] == []
            other.extend(result["added"])
        return empty

    monkeypatch.setattr(load, "starts_empty", overtaken)
    report = store.add_documents(documents("late", 0, 0))
    assert report.passages_added == PER_CALL
    _check(store, [*other, *(d.id or "" for d in documents("late", 0, 0))])
    assert not report.bulk_load  # it read like any other ingest


@pytest.mark.server
def test_a_foreign_lease_is_waited_for_then_refused(make_store) -> None:
    """Another process's live lease: the write waits ``lease.wait`` seconds, then a typed error, nothing written."""
    if make_store.backend != "server":
        pytest.skip("leases are taken on a Milvus server only")
    store = make_store(LexicalEmbeddings(32), consistency_level="Strong")
    run(store, "setup", calls=1, threads=1)
    before = snapshot(store)
    name = store.collection_name("relations")
    store.client.alter_collection_properties(name, properties={WRITER_KEY: f"othertoken {time.time() + 300:.3f}"})
    store._connection.lease.wait = 1.0
    with pytest.raises(ConcurrentWriteError, match="othertoken"):
        store.add_documents(documents("late", 0, 0))
    assert snapshot(store) == before
    # an expired lease (a writer that crashed) is taken over
    store.client.alter_collection_properties(name, properties={WRITER_KEY: f"othertoken {time.time() - 1:.3f}"})
    report = store.add_documents(documents("late", 0, 0))
    assert report.passages_added == PER_CALL
    props = store.client.describe_collection(name).get("properties") or {}
    assert props.get(WRITER_KEY, "") == ""  # released at the end of the write
