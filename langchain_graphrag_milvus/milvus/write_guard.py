"""Writes that cannot lose each other: one writer per collection prefix at a time.

Relations keep their passage links in one row (``passage_ids``), so a write reads the row,
adds or removes links and writes it back. Two writers doing that at once on the same row
would lose links silently; Milvus Lite would also race on its own schema files. So every
write operation of a store (ingest, upsert, delete, merge) runs under a :func:`write_guard`:

* **Threads of one process** take a process-wide lock per data location: per Milvus Lite
  data directory (every prefix: Lite's own files are shared), per server URI, database and
  collection prefix otherwise. Two store objects on the same prefix share it. A second
  writer waits for the first (up to ``wait`` seconds, then :class:`ConcurrentWriteError`).
* **Processes** (a Milvus server; a Lite directory is locked to one process by Lite itself)
  take a *lease*: a collection property ``graphrag.writer`` on the relation collection,
  ``"<token> <expiry>"``. A writer reads it; if another live token holds it, it waits (and
  raises :class:`ConcurrentWriteError` after ``wait`` seconds, naming the holder); else it
  writes its own token, waits :data:`SETTLE` seconds (or four times its own read-and-write
  round trip, if longer: measured 5 ms p50, 27 ms max on an idle 2.3.5 server here) and reads
  it back -- if another writer wrote after it, that one holds the lease and this one waits
  again. The settle time covers the gap between another writer's read and its write, so two
  writers never both read their own token back. The lease is renewed at the writes of a long operation and expires
  :data:`LEASE_TTL` seconds after the last renewal (a crashed writer blocks others that
  long). A writer whose lease expired and was taken over finds another token at its next
  write and raises :class:`ConcurrentWriteError` before writing (never silently).
* After taking the lock (and lease) the graph cache checks the generation counter, so a
  write plans from what other writers left, not from a stale graph.
* A write that fails after it started changing Milvus drops the in-memory graph: the next
  use rebuilds it from Milvus, and re-running the operation completes it (every write is
  ordered so that a re-run finds what is left; see :mod:`~langchain_graphrag_milvus.ingest.updates`).

Clocks: the expiry is wall-clock time of the writer, compared with the reader's clock; hosts
that write into one server need clocks within a few seconds of each other.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, Protocol

from langchain_graphrag_milvus.errors import ConcurrentWriteError
from langchain_graphrag_milvus.milvus.lite import is_lite

__all__ = ["WRITER_KEY", "LEASE_TTL", "SETTLE", "WriteLease", "write_guard", "process_lock"]

logger = logging.getLogger(__name__)

#: The collection property (on the relation collection) holding the write lease.
WRITER_KEY = "graphrag.writer"
#: Seconds a lease lives after its last renewal.
LEASE_TTL = 60.0
#: Seconds between writing one's token and reading it back (at least; see :data:`SETTLE_ROUND_TRIPS`).
SETTLE = 0.15
#: The settle time is also at least this many times the writer's own read-and-claim round trip.
SETTLE_ROUND_TRIPS = 4.0

class LeaseConnection(Protocol):
    """What the guard needs of a :class:`~.connection.MilvusConnection` (which holds the lease)."""

    uri: str
    collection_prefix: str
    timeout: float | None

    @property
    def client(self) -> Any:
        """The synchronous client."""

    def resolved_args(self) -> dict[str, Any]:
        """The client's arguments."""

    def collection_name(self, kind: Any) -> str:
        """The collection of a kind."""


class GuardedGraph(Protocol):
    """What the guard needs of a :class:`~.graph_cache.GraphCache`."""

    bumps: int

    @property
    def loaded(self) -> Any:
        """The graph in memory, or None."""

    def refresh(self) -> bool:
        """Reload if another writer changed the data."""

    def forget(self) -> None:
        """Drop the graph (rebuilt on next use)."""


_locks: dict[tuple[str, ...], threading.RLock] = {}
_depth: dict[tuple[str, ...], int] = {}
_locks_guard = threading.Lock()


def _lock_key(conn: LeaseConnection) -> tuple[str, ...]:
    args = conn.resolved_args()
    if is_lite(conn.uri):  # Lite's schema files are shared by every collection of the directory
        return ("lite", str(args["uri"]))
    return ("server", str(args["uri"]), str(args.get("db_name") or ""), conn.collection_prefix)


def process_lock(conn: LeaseConnection) -> threading.RLock:
    """The lock every store of this process writing where ``conn`` writes shares."""
    key = _lock_key(conn)
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.RLock()
        return lock


class WriteLease:
    """The cross-process write lease of one connection (see the module docstring).

    Args:
        conn: The connection (a Milvus server; on Lite the lease is never taken).
        wait: Seconds to wait for another writer's lease before :class:`ConcurrentWriteError`.
        ttl: Seconds the lease lives after its last renewal (renewed every ``ttl / 3``).
    """

    def __init__(self, conn: LeaseConnection, wait: float, ttl: float = LEASE_TTL) -> None:
        self.conn = conn
        self.wait = wait
        self.ttl = ttl
        self.token = uuid.uuid4().hex
        self._held_until = 0.0
        self._renewed_at = 0.0
        #: True inside :func:`write_guard`: only then do writes take the lease.
        self.active = False

    @property
    def held(self) -> bool:
        """True while this connection holds the lease (as far as it knows)."""
        return self._held_until > 0.0

    def _read(self) -> tuple[str, float]:
        name = self.conn.collection_name("relations")
        props = self.conn.client.describe_collection(name, timeout=self.conn.timeout).get("properties") or {}
        token, _, expiry = str(props.get(WRITER_KEY, "")).partition(" ")
        try:
            return token, float(expiry or 0.0)
        except ValueError:  # not ours to interpret: treat as free
            return "", 0.0

    def _write(self, value: str) -> None:
        self.conn.client.alter_collection_properties(
            self.conn.collection_name("relations"), properties={WRITER_KEY: value}, timeout=self.conn.timeout
        )

    def _claim(self) -> None:
        now = time.time()
        self._write(f"{self.token} {now + self.ttl:.3f}")
        self._held_until, self._renewed_at = now + self.ttl, time.monotonic()

    def ensure(self) -> None:
        """Hold the lease before a write: take it, renew it, or raise if another writer took it over.

        A no-op outside :func:`write_guard` and on Milvus Lite, and until the collections exist.
        """
        if not self.active or is_lite(self.conn.uri):
            return
        if self.held:
            if time.monotonic() - self._renewed_at < self.ttl / 3:
                return
            token, _ = self._read()
            if token != self.token:
                self._held_until = 0.0
                raise ConcurrentWriteError(self._message(token, "took over this write's expired lease"))
            self._claim()
            return
        if self.conn.client.has_collection(self.conn.collection_name("relations")):
            self._acquire()

    def _acquire(self) -> None:
        deadline = time.monotonic() + self.wait
        logged = False
        while True:
            started = time.monotonic()
            token, expiry = self._read()
            if token and token != self.token and expiry > time.time():
                if time.monotonic() >= deadline:
                    raise ConcurrentWriteError(self._message(token, f"still holds the write lease after {self.wait}s"))
                if not logged:
                    left = expiry - time.time()
                    logger.info("%s: waiting for writer %s (lease ends in %.0fs)", self._where(), token, left)
                    logged = True
                time.sleep(min(0.2 + random.random() * 0.3, max(0.0, deadline - time.monotonic())))
                continue
            self._claim()
            # another writer's gap between its read and its write is about one read and one write
            # round trip: wait several of ours (a loaded server is slow for everyone alike)
            time.sleep(max(SETTLE, SETTLE_ROUND_TRIPS * (time.monotonic() - started)))
            token, _ = self._read()
            if token == self.token:
                return
            self._held_until = 0.0  # another writer claimed after us: it holds the lease

    def release(self) -> None:
        """Give the lease back (if still ours)."""
        if not self.held:
            return
        self._held_until = 0.0
        try:
            token, _ = self._read()
            if token == self.token:
                self._write("")
        except Exception as exc:  # the lease expires by itself
            logger.warning("%s: cannot release the write lease (%s); it expires in %ss", self._where(), exc, self.ttl)

    def _where(self) -> str:
        return f"collection prefix {self.conn.collection_prefix!r} at {self.conn.uri!r}"

    def _message(self, token: str, what: str) -> str:
        return (
            f"another writer (lease {token}) {what} on {self._where()}: writes into one prefix are serialized. "
            "Re-run this operation when the other writer is done (every write can be re-run)"
        )


@contextlib.contextmanager
def write_guard(conn: LeaseConnection, graph: GuardedGraph, lease: WriteLease) -> Iterator[None]:
    """Run one write operation alone (threads and processes) and keep the graph honest if it fails.

    Re-entrant: an operation that calls another (an upsert deletes, then ingests) holds it once.

    Raises:
        ConcurrentWriteError: Another writer did not finish within ``lease.wait`` seconds.
    """
    lock = process_lock(conn)
    if not lock.acquire(timeout=lease.wait):
        raise ConcurrentWriteError(
            f"another thread of this process is still writing into collection prefix {conn.collection_prefix!r} "
            f"at {conn.uri!r} after {lease.wait}s; re-run this operation when it is done"
        )
    key = _lock_key(conn)
    depth = _depth.get(key, 0)
    _depth[key] = depth + 1
    bumps = graph.bumps
    try:
        if depth == 0:
            lease.active = True
            lease.ensure()
            if graph.loaded is not None:
                graph.refresh()  # plan from what other writers left
        yield
    except BaseException:
        if depth == 0 and graph.bumps != bumps:  # Milvus changed: the graph in memory may not match it
            graph.forget()
        raise
    finally:
        try:
            if depth == 0:
                lease.active = False
                lease.release()
        finally:
            _depth[key] = depth
            lock.release()
