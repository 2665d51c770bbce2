"""The write seam's compliance suite on every backend the read seam's runs on, and a partitioned store.

The default store, a partitioned one (passages replaced by delete + insert: Milvus 2.3 servers
misroute upserts on a partition key) and the existing-collection store (string and integer keys;
its passages are the team's, never written), each on Milvus Lite and on the real server. The
suite creates the collections itself through the seam; one store per backend serves every case
(each writes under ids of its own).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_milvus import Milvus

from langchain_graphrag_milvus import ExistingCollectionGraphStore, MilvusGraphStore
from langchain_graphrag_milvus.milvus.milvus_writes import MilvusWrites
from langchain_graphrag_milvus.milvus.schema import Kind

from ..compliance.write_seam import DIM, WriteCase, WriteSeamCompliance
from ..conftest import backend_uri, close_store
from ..fakes import LexicalEmbeddings

_SERVER = pytest.mark.server
CASES = [
    pytest.param(("lite", "default"), id="lite-default"),
    pytest.param(("server", "default"), id="server-default", marks=_SERVER),
    pytest.param(("lite", "partitioned"), id="lite-partitioned"),
    pytest.param(("server", "partitioned"), id="server-partitioned", marks=_SERVER),
    pytest.param(("lite", "existing"), id="lite-existing"),
    pytest.param(("server", "existing"), id="server-existing", marks=_SERVER),
    pytest.param(("lite", "existing-int"), id="lite-existing-int-keys"),
]


def _existing(uri: str, auto_id: bool) -> tuple[Milvus, ExistingCollectionGraphStore]:
    name = f"team_{uuid.uuid4().hex[:8]}"
    embedding = LexicalEmbeddings(DIM)
    docs = [Document(page_content="A team's own passage.", metadata={"year": 2020})]
    vs = Milvus.from_documents(
        docs, embedding, ids=None if auto_id else ['team"1'], auto_id=auto_id, collection_name=name,
        connection_args={"uri": uri},
    )  # fmt: skip
    store = ExistingCollectionGraphStore(embedding, collection_name=name, uri=uri, consistency_level="Strong")
    return vs, store


@pytest.fixture(scope="module", params=CASES)
def wseam(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WriteCase]:
    backend, kind = request.param
    uri = backend_uri(request, backend, tmp_path_factory.mktemp("wseam"))
    if kind in ("default", "partitioned"):
        key = "tenant" if kind == "partitioned" else None
        store = MilvusGraphStore(
            LexicalEmbeddings(DIM), uri=uri, collection_prefix=f"w{uuid.uuid4().hex[:8]}", partition_key_field=key
        )
        assert not store.writes.exists()
        store.writes.ensure_collections(DIM)
        yield WriteCase(store.writes, store.reads, store._graph_cache, partition_key=key)
        close_store(store, backend)
        return
    vs, existing = _existing(uri, auto_id=kind == "existing-int")
    assert not existing.writes.exists()
    existing.writes.ensure_collections(DIM)
    yield WriteCase(existing.writes, existing.reads, existing._graph_cache, kinds=("entities", "relations"))
    existing.drop()
    vs.client.drop_collection(vs.collection_name)  # before close(): the last close stops Lite's server
    existing.close()


class TestWriteSeam(WriteSeamCompliance):
    """Every case of the suite, on each backend of ``wseam``."""


class _RawIdsDelete(MilvusWrites):
    """The bug the seam rules out: pymilvus' ``delete(ids=...)`` pastes raw ids into its expression."""

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        conn = self.connection
        conn.client.delete(conn.collection_name(kind), ids=list(ids), timeout=conn.timeout)
        conn.deleted(kind)


class _InsertOnly(MilvusWrites):
    """Inserts every row, replacing none (``existing`` ignored)."""

    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        super().write(kind, rows, existing=(), batch_size=batch_size)


@pytest.mark.parametrize(
    ("broken", "case"),
    [
        (_RawIdsDelete, "test_hostile_ids_are_written_and_deleted_exactly"),
        (_InsertOnly, "test_an_upsert_replaces_and_never_duplicates"),
    ],
)
def test_the_suite_fails_a_broken_milvus_writer(make_store, broken: type[MilvusWrites], case: str) -> None:
    """On a real Milvus (Lite and server), a writer that breaks a rule fails the case for it."""
    if broken is _InsertOnly and make_store.backend == "lite":
        pytest.skip("Milvus Lite 3 replaces a row inserted under a stored id (measured): only the server duplicates")
    store = make_store(LexicalEmbeddings(DIM))
    store.writes.ensure_collections(DIM)
    writes = broken(store._connection, store.reads)
    with pytest.raises(Exception) as failed:  # an assertion, or Milvus refusing the raw expression
        getattr(WriteSeamCompliance(), case)(WriteCase(writes, store.reads, store._graph_cache))
    assert not isinstance(failed.value, pytest.skip.Exception)
