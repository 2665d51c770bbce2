"""Shared fixtures. Store-backed tests run twice: on Milvus Lite and on a real Milvus server.

The server comes from the ``milvus`` wheel, started once per test session in a
temporary directory and stopped at the end (also when tests fail). ``--milvus-uri`` (or
``MILVUS_URI``) points the suite at an existing server instead. Without the wheel the
server half is skipped, unless ``REQUIRE_MILVUS_SERVER=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset

from .browser_pages import find_chromium
from .fakes import LexicalEmbeddings

# Property-based tests check what happens, never how fast: hypothesis' default 200 ms deadline per
# example (and its too-slow health check) is a timing assertion that fails on a loaded machine
# (two xdist workers and their Milvus servers on two cores). Tests may still set their own settings.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique100"
BACKENDS = ["lite", pytest.param("server", marks=pytest.mark.server)]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--milvus-uri",
        default=os.environ.get("MILVUS_URI"),
        help="run the server half of the suite against this Milvus instead of starting one",
    )


@pytest.fixture(scope="session")
def milvus_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URI of a real Milvus server for the whole session.

    The server gets its own free ports (etcd's too), so it starts beside any other Milvus on the
    machine, with the test tuning of ``milvus_server.TEST_TUNING`` (shorter polling periods); under
    ``.ci/run`` it records its pid in ``MILVUS_SERVER_PID_DIR`` so CI can stop it,
    and only it, if this session dies before its teardown.
    """
    uri = request.config.getoption("--milvus-uri")
    if uri:
        yield uri
        return
    try:
        from .milvus_server import MilvusServerHandle
    except ImportError as exc:  # pragma: no cover - the test extra installs the wheel
        if os.environ.get("REQUIRE_MILVUS_SERVER"):
            pytest.fail(f"the milvus server wheel is required: {exc}")
        pytest.skip("the 'milvus' wheel is not installed (pip install -e '.[test]')")
    handle = MilvusServerHandle(tmp_path_factory.mktemp("milvus-server"), tuned=True)
    try:
        uri = handle.start()
    except Exception as exc:
        if os.environ.get("REQUIRE_MILVUS_SERVER"):
            pytest.fail(f"could not start the Milvus server: {exc}")
        pytest.skip(f"could not start the Milvus server: {exc}")
    try:
        yield uri
    finally:
        # a throwaway directory: no need to wait the 10 s in which the server ignores SIGTERM
        handle.stop(grace=1.0)


@pytest.fixture(scope="session", autouse=True)
def _user_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``XDG_CACHE_HOME`` in a temporary folder: the CLI's extraction caches of server stores go there."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


def backend_uri(request: pytest.FixtureRequest, backend: str, directory: Path) -> str:
    if backend == "lite":
        return str(directory / "milvus.db")
    return str(request.getfixturevalue("milvus_server"))


def close_store(store: MilvusGraphStore, backend: str) -> None:
    if backend == "server":  # leave the shared server clean
        store.drop()
    store.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """'lite' or 'server': a test using it (or make_store) runs on both."""
    return str(request.param)


@pytest.fixture
def make_store(
    request: pytest.FixtureRequest, backend: str, tmp_path: Path
) -> Iterator[Callable[..., MilvusGraphStore]]:
    """Factory of stores with fresh collections on the test's backend."""
    uri = backend_uri(request, backend, tmp_path)
    made: list[MilvusGraphStore] = []

    def factory(embedding: Embeddings | None = None, *, prefix: str | None = None, **kwargs) -> MilvusGraphStore:
        store = MilvusGraphStore(
            embedding or DeterministicFakeEmbedding(size=16),
            uri=kwargs.pop("uri", uri),
            collection_prefix=prefix or f"t{uuid.uuid4().hex[:10]}",
            **kwargs,
        )
        made.append(store)
        return store

    factory.backend = backend  # type: ignore[attr-defined]
    factory.uri = uri  # type: ignore[attr-defined]
    yield factory
    for store in made:
        close_store(store, backend)


@pytest.fixture(scope="module", params=BACKENDS)
def module_stores(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., MilvusGraphStore]]:
    """Like ``make_store`` but module-scoped: for read-only tests sharing one ingest."""
    backend = str(request.param)
    uri = backend_uri(request, backend, tmp_path_factory.mktemp("module"))
    made: list[MilvusGraphStore] = []

    def factory(embedding: Embeddings, **kwargs) -> MilvusGraphStore:
        store = MilvusGraphStore(embedding, uri=uri, collection_prefix=f"m{uuid.uuid4().hex[:10]}", **kwargs)
        made.append(store)
        return store

    factory.backend = backend  # type: ignore[attr-defined]
    yield factory
    for store in made:
        close_store(store, backend)


@pytest.fixture(scope="module", params=BACKENDS)
def nano_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusGraphStore]:
    """The seed's nano dataset, ingested once per module and backend, lexical fake embeddings."""
    backend = str(request.param)
    uri = backend_uri(request, backend, tmp_path_factory.mktemp("nano"))
    store = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix=f"nano{uuid.uuid4().hex[:8]}")
    store.add_records(nano_dataset())
    yield store
    close_store(store, backend)


@pytest.fixture(params=["sync", "async"])
def retrieve(request: pytest.FixtureRequest) -> Callable:
    """Runs a retriever through invoke or ainvoke: each test using it runs both ways."""
    mode = request.param

    async def run(retriever, query: str, **kwargs):
        if mode == "sync":
            return retriever.invoke(query, **kwargs)
        return await retriever.ainvoke(query, **kwargs)

    run.mode = mode  # type: ignore[attr-defined]
    return run


@pytest.fixture(scope="module")
def chromium() -> str:
    """Path of Debian's headless chromium (the browser tests): skipped if absent, see ``find_chromium``."""
    return find_chromium()


@pytest.fixture(scope="module")
def minilm() -> Embeddings:
    """The real local model, all-MiniLM-L6-v2 (loaded once per module; tests marked ``model``)."""
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    return LocalMiniLMEmbeddings()
