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

import logging
import threading
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
_lite_lock = threading.Lock()


def acquire_lite(path: str) -> None:
    """Count one more store using Milvus Lite's embedded server for ``path``."""
    with _lite_lock:
        _lite_users[path] = _lite_users.get(path, 0) + 1


def release_lite(path: str) -> None:
    """Count one store fewer; stop the embedded server when none is left."""
    with _lite_lock:
        users = _lite_users.get(path, 0) - 1
        if users > 0:
            _lite_users[path] = users
            return
        _lite_users.pop(path, None)
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:  # pragma: no cover - milvus-lite is a dependency
        return
    server_manager_instance.release_server(path)
