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

from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.errors import LitePathError

__all__ = ["LITE_GRPC_OPTIONS", "check_lite_parent", "lite_connection_args"]

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
