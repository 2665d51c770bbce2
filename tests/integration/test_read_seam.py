"""The read seam's compliance suite on every backend: the default store and the existing-collection store.

Each runs on Milvus Lite and on the real server; the existing collection is made by
``langchain_milvus.Milvus.from_documents`` twice: under the given string ids (quotes and
backslashes included) and under Milvus' own integer keys (``auto_id=True``, Lite only: the
key codec is the client's, the same on both). One store per backend, built once per module,
serves every case (the cases only read).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_milvus import Milvus

from langchain_graphrag_milvus import ExistingCollectionGraphStore, MilvusGraphStore

from ..compliance.read_seam import PASSAGES, ReadSeamCompliance, SeamCase
from ..conftest import backend_uri, close_store
from ..fakes import LexicalEmbeddings

_SERVER = pytest.mark.server
CASES = [
    pytest.param(("lite", "default"), id="lite-default"),
    pytest.param(("server", "default"), id="server-default", marks=_SERVER),
    pytest.param(("lite", "existing"), id="lite-existing"),
    pytest.param(("server", "existing"), id="server-existing", marks=_SERVER),
    pytest.param(("lite", "existing-int"), id="lite-existing-int-keys"),
]


def _default(uri: str, embedding: LexicalEmbeddings) -> tuple[MilvusGraphStore, list[str]]:
    store = MilvusGraphStore(embedding, uri=uri, collection_prefix=f"seam{uuid.uuid4().hex[:8]}")
    docs = [Document(id=pid, page_content=text, metadata={**meta, "triplets": t}) for pid, text, meta, t in PASSAGES]
    store.add_documents(docs)
    return store, [p[0] for p in PASSAGES]


def _existing(uri: str, embedding: LexicalEmbeddings, auto_id: bool) -> tuple[Milvus, MilvusGraphStore, list[str]]:
    name = f"team_{uuid.uuid4().hex[:8]}"
    docs = [Document(page_content=text, metadata=meta) for _, text, meta, _ in PASSAGES]
    ids = None if auto_id else [p[0] for p in PASSAGES]
    vs = Milvus.from_documents(
        docs, embedding, ids=ids, auto_id=auto_id, collection_name=name, connection_args={"uri": uri}
    )
    # Milvus' own keys, read from the collection (not through the seam under test): by year, in PASSAGES' order
    rows = vs.client.query(name, filter="", output_fields=["pk", "year"], limit=10, consistency_level="Strong")
    key_of_year = {r["year"]: str(r["pk"]) for r in rows}
    keys = ids or [key_of_year[meta["year"]] for _, _, meta, _ in PASSAGES]
    store = ExistingCollectionGraphStore(embedding, collection_name=name, uri=uri, consistency_level="Strong")
    store.index_passages(triplets={key: t for key, (*_, t) in zip(keys, PASSAGES)})
    return vs, store, keys


@pytest.fixture(scope="module", params=CASES)
def seam(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeamCase]:
    backend, kind = request.param
    uri = backend_uri(request, backend, tmp_path_factory.mktemp("seam"))
    embedding = LexicalEmbeddings()
    if kind == "default":
        store, ids = _default(uri, embedding)
        yield SeamCase(store.reads, embedding, ids)
        close_store(store, backend)
        return
    vs, store, ids = _existing(uri, embedding, auto_id=kind == "existing-int")
    yield SeamCase(store.reads, embedding, ids)
    store.drop()
    vs.client.drop_collection(vs.collection_name)  # before close(): the last close stops Lite's server
    store.close()


class TestReadSeam(ReadSeamCompliance):
    """Every case of the suite, on each backend of ``seam``."""
