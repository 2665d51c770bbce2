"""Milvus Lite URIs: the data directory's parent must exist; quiet gRPC keepalive.

Milvus Lite (``uri="./graph.db"``) keeps its data in a directory it creates at that path.
A typo in the path (``/nonexistent_dir/sub/g.db``) should not silently create a tree of
directories and then report an empty store, so the parent directory must already exist.

pymilvus' client pings its server every 10 s, even between calls; Milvus Lite's embedded
gRPC server allows one ping per 5 minutes without data and, after a long pause between
calls (embedding a large batch, an LLM extraction), answers ``GOAWAY ... too_many_pings``,
which gRPC prints to stderr. The connection recovers, but the lines look like errors:
clients of a Lite store therefore do not send keepalive pings (the server is in-process).
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.errors import LitePathError

__all__ = [
    "LITE_GRPC_OPTIONS",
    "check_lite_parent",
    "lite_connection_args",
    "is_lite",
    "acquire_lite",
    "release_lite",
    "lite_server_running",
    "lite_filter",
]

#: gRPC channel options of a Lite client: no keepalive pings (gRPC's "disabled" value).
LITE_GRPC_OPTIONS: dict[str, Any] = {
    "grpc.keepalive_time_ms": 2**31 - 1,
    "grpc.keepalive_permit_without_calls": False,
}


def check_lite_parent(uri: str) -> Path:
    """The absolute data path of a Lite URI, after checking that its parent directory exists.

    Raises:
        LitePathError: The parent directory does not exist (or is not a directory).
    """
    path = Path(uri).expanduser().absolute()
    if not path.parent.is_dir():
        raise LitePathError(
            f"Milvus Lite path {uri!r}: the directory {str(path.parent)!r} does not exist. Check the path for a "
            "typo, or create the directory first (Milvus Lite creates only the last part, the .db directory)"
        )
    return path


def lite_connection_args(args: dict[str, Any]) -> dict[str, Any]:
    """Connection arguments for a Lite URI: absolute path, checked parent, no keepalive pings."""
    out = dict(args)
    out["uri"] = str(check_lite_parent(str(args["uri"])))
    out["grpc_options"] = {**LITE_GRPC_OPTIONS, **dict(args.get("grpc_options") or {})}
    return out


_LITE_NOISE = ("failed to get mvccTs from milvus server", "Exception calling application: Method not implemented")


class _LiteNoiseFilter(logging.Filter):
    """Drops two harmless messages Milvus Lite 3.x triggers on every ``query_iterator``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(message.startswith(noise) for noise in _LITE_NOISE)


lite_filter = _LiteNoiseFilter()


def is_lite(uri: str) -> bool:
    """True for a Milvus Lite URI (a local path ending in ``.db``)."""
    return str(uri).endswith(".db")


# Milvus Lite runs one embedded server per data directory and process; stores share it.
_lite_users: dict[str, int] = {}
#: Per path: did a store of this package start the server (it was not running when the first one connected)?
_lite_started: dict[str, bool] = {}
_lite_lock = threading.Lock()


def _lite_port(path: str) -> int | None:
    """The port of the embedded server running for ``path`` in this process (None: none, or unknown)."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:  # pragma: no cover - milvus-lite is a dependency
        return None
    servers = getattr(server_manager_instance, "_servers", None)  # milvus-lite 3.x keeps path -> (server, db, port)
    entry = servers.get(os.path.abspath(path)) if isinstance(servers, dict) else None
    return int(entry[2]) if isinstance(entry, tuple) and len(entry) == 3 else None


def lite_server_running(path: str) -> bool:
    """True if Milvus Lite's embedded server for ``path`` runs in this process (or that cannot be told)."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:  # pragma: no cover
        return True
    servers = getattr(server_manager_instance, "_servers", None)
    return not isinstance(servers, dict) or os.path.abspath(path) in servers


def acquire_lite(path: str, *, started: bool) -> None:
    """Count one more store using Milvus Lite's embedded server for ``path``.

    Args:
        path: The absolute data path.
        started: The server was not running before this store connected (this store started it).
    """
    with _lite_lock:
        users = _lite_users.get(path, 0)
        if users == 0:
            _lite_started[path] = started
        _lite_users[path] = users + 1


def _other_clients(path: str, own: Sequence[object]) -> bool:
    """True if a pymilvus client other than ``own`` is connected to the server of ``path`` (or unknown)."""
    port = _lite_port(path)
    if port is None:
        return True
    try:
        from pymilvus.client.connection_manager import AsyncConnectionManager, ConnectionManager
    except ImportError:  # pragma: no cover - pymilvus < 3
        return True
    address = f"127.0.0.1:{port}"
    async_managers = getattr(AsyncConnectionManager, "_instances", {})
    managers: list[Any] = [ConnectionManager.get_instance(), *list(async_managers.values())]
    try:
        connections = [m for mgr in managers for reg in (mgr._registry, mgr._dedicated) for m in list(reg.values())]
        return any(c not in own for m in connections if m.config.address == address for c in list(m.clients))
    except AttributeError:  # another pymilvus: assume the server is in use
        return True


def release_lite(path: str, own: Sequence[object] = ()) -> None:
    """Count one store fewer; when none is left, stop the embedded server if nothing else uses it.

    The server is stopped only if a store of this package started it and no other pymilvus
    client of this process (e.g. the team's ``langchain_milvus.Milvus`` store on the same
    ``.db``) is connected to it; otherwise it keeps running (milvus-lite stops it at exit).

    Args:
        path: The absolute data path.
        own: The closing store's own clients (not counted as other users).
    """
    with _lite_lock:
        users = _lite_users.get(path, 0) - 1
        if users > 0:
            _lite_users[path] = users
            return
        _lite_users.pop(path, None)
        started = _lite_started.pop(path, False)
    if not started:
        return
    if _other_clients(path, own):
        gc.collect()  # a client dropped in a reference cycle is still registered until collected
        if _other_clients(path, own):
            return
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(path)
