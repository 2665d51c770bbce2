"""Clear, typed failures within bounded time: bad URI, no server, missing data, wrong model."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import (
    MilvusGraphStore,
)


def test_lite_clients_send_no_keepalive_pings(tmp_path) -> None:
    # pymilvus pings every 10 s; Milvus Lite's server answers GOAWAY too_many_pings after long pauses
    lite = MilvusGraphStore(DeterministicFakeEmbedding(size=8), uri=str(tmp_path / "g.db"))
    options = lite._resolved_args()["grpc_options"]
    assert options["grpc.keepalive_time_ms"] == 2**31 - 1 and options["grpc.keepalive_permit_without_calls"] is False
    server = MilvusGraphStore(DeterministicFakeEmbedding(size=8), uri="http://127.0.0.1:19530")
    assert "grpc_options" not in server._resolved_args()  # servers keep pymilvus' keepalive
