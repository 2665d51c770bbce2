"""What the CLI's store-backed commands share: store options, embeddings, extractors, output.

Imported only when a command runs (``--help`` stays fast); heavy modules are imported
inside the functions that need them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.retrieval.defaults import PASSAGES_K, PATHS_K

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.runnables import Runnable

    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = [
    "cli_graph_path",
    "explicit_graph_path",
    "DEFAULT_URI",
    "add_store_arguments",
    "EMBEDDING_MODELS",
    "make_embeddings",
    "make_extractor",
    "open_store",
    "parse_filter",
    "require_openai_key",
    "log",
    "show_progress",
    "given_k",
    "K_HELP",
]

DEFAULT_URI = "./graphrag_milvus.db"
DEFAULT_PREFIX = "graphrag"
DEFAULT_LLM = "gpt-4o-mini"
#: The ``-k`` help's defaults: the retrievers' own (retrieval/defaults.py, their one home).
K_HELP = f"{PASSAGES_K} passages, {PATHS_K} paths"


def given_k(args: argparse.Namespace) -> dict[str, Any]:
    """``{"k": -k}`` when ``-k`` was given, else ``{}``: the retriever's own default applies."""
    return {} if args.k is None else {"k": args.k}


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """``--uri``, ``--token``, ``--prefix``, ``--embeddings``, ``--graph-path``."""
    group = parser.add_argument_group("store")
    group.add_argument(
        "--uri",
        default=os.environ.get("GRAPHRAG_MILVUS_URI", DEFAULT_URI),
        help="Milvus Lite path ending in .db, or a server URI such as http://localhost:19530 "
        f"(default: $GRAPHRAG_MILVUS_URI, else {DEFAULT_URI})",
    )
    group.add_argument("--token", default=os.environ.get("MILVUS_TOKEN"), help="user:password or API key")
    group.add_argument("--prefix", default=DEFAULT_PREFIX, help=f"collection prefix (default: {DEFAULT_PREFIX})")
    group.add_argument(
        "--embeddings",
        choices=["local", "openai", "fake"],
        metavar="{local,openai}",
        default="local",
        help="local all-MiniLM-L6-v2 (default, offline) or OpenAI text-embedding-3-small; "
        "use the same one for ingest and query",
    )
    group.add_argument(
        "--graph-path",
        help="save the graph index in this folder, loaded on the next run (default: beside a Milvus Lite store, "
        "in NAME.db.graphs/PREFIX; 'none': not saved)",
    )


def cli_graph_path(value: str | None) -> str | None:
    """What ``--graph-path`` gives the store: the folder, ``"auto"`` when not given, None for ``none``."""
    if value is None:
        return "auto"
    return None if value.strip().lower() == "none" else value


def explicit_graph_path(value: str | None) -> str | None:
    """The folder ``--graph-path`` names (None: not given, or ``none``)."""
    path = cli_graph_path(value)
    return None if path == "auto" else path


#: ``--embeddings`` choice → the model's name (the embedding cache's namespace, the eval's prefixes).
EMBEDDING_MODELS = {"local": "all-MiniLM-L6-v2", "openai": "text-embedding-3-small", "fake": "fake-64"}


def make_embeddings(name: str, cache_dir: Path | None = None) -> Embeddings:
    """The embedding model named on the command line (``--embeddings``), the one factory of the CLI.

    ``cache_dir``: wrap it in an on-disk cache (``cache_dir/embeddings.sqlite``, one namespace per
    model; the ``eval`` command's), so a re-run embeds nothing it embedded before.
    """
    if name not in EMBEDDING_MODELS:
        raise ValueError(f"unknown embeddings {name!r}; one of {', '.join(EMBEDDING_MODELS)}")
    base: Embeddings
    if name == "local":
        from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

        base = LocalMiniLMEmbeddings()
    elif name == "openai":
        require_openai_key("--embeddings openai")
        from langchain_openai import OpenAIEmbeddings

        base = OpenAIEmbeddings(model=EMBEDDING_MODELS["openai"])
    else:  # "fake", hidden: random but deterministic vectors, for smoke tests of the plumbing
        from langchain_core.embeddings import DeterministicFakeEmbedding

        base = DeterministicFakeEmbedding(size=64)
    if cache_dir is None:
        return base
    from langchain_graphrag_milvus.embedding_cache import CachedEmbeddings

    return CachedEmbeddings(base, cache_dir / "embeddings.sqlite", namespace=EMBEDDING_MODELS[name])


def make_extractor(
    name: str | None, llm_model: str = DEFAULT_LLM, *, spacy_model: str | None = None
) -> Runnable[Any, Any] | None:
    """The triplet extractor, the one factory of the CLI: ``llm``, ``offline`` (spaCy), ``none``.

    ``None``: ``llm`` if ``OPENAI_API_KEY`` is set, else ``offline``. ``spacy_model``: the spaCy
    pipeline of ``offline`` (default: the package's choice).
    """
    if name is None:
        name = "llm" if os.environ.get("OPENAI_API_KEY") else "offline"
    if name == "none":
        return None
    if name == "offline":
        from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor

        return create_offline_triplet_extractor(spacy_model)
    if name == "llm":
        require_openai_key("--extractor llm")
        from langchain_openai import ChatOpenAI

        from langchain_graphrag_milvus.ingest.triplets import create_llm_triplet_extractor

        return create_llm_triplet_extractor(ChatOpenAI(model=llm_model, temperature=0))
    raise ValueError(f"unknown extractor {name!r}")


def require_openai_key(option: str) -> None:
    """Refuse an OpenAI option early, with what to do: no ``OPENAI_API_KEY``, or no ``openai`` extra."""
    if not os.environ.get("OPENAI_API_KEY"):
        raise ValueError(f"{option} needs OPENAI_API_KEY in the environment")
    try:
        import langchain_openai  # noqa: F401
    except ImportError:
        raise ValueError(f"{option} needs the openai extra: pip install 'langchain-graphrag-milvus[openai]'") from None


def open_store(
    args: argparse.Namespace,
    *,
    extractor: Runnable[Any, Any] | None = None,
    reader: bool = False,
    partition_key_field: str | None = None,
    extraction_cache: str | os.PathLike[str] | None = None,
) -> MilvusGraphStore:
    """A store from the command-line options (nothing is contacted yet).

    ``reader=True`` (query, export, stats): reads are ``"Strong"``, so a command sees what
    the previous command (another process) wrote, also on a server; ingest keeps the
    store's default for the collections it creates. ``extraction_cache``: the sqlite file
    of extracted triplets (:mod:`.triplet_cache`; None: in memory).

    Raises:
        ValueError: ``--graph-path`` is the working folder or contains it.
    """
    from langchain_graphrag_milvus.cli.discovery import check_graph_path
    from langchain_graphrag_milvus.store import MilvusGraphStore

    check_graph_path(explicit_graph_path(args.graph_path))
    supplement: Any = getattr(args, "supplement", "auto")  # ingest's option; serve's ingests: the default
    return MilvusGraphStore(
        make_embeddings(args.embeddings),
        uri=args.uri,
        token=args.token,
        collection_prefix=args.prefix,
        graph_path=cli_graph_path(args.graph_path),
        extractor=extractor,
        consistency_level="Strong" if reader else "Session",
        partition_key_field=partition_key_field,
        extraction_cache=extraction_cache,
        supplement=None if supplement == "none" else supplement,
    )


def parse_filter(text: str | None) -> str | dict[str, Any] | None:
    """``--filter``: a JSON object ``{"field": value}`` (values escaped) or a Milvus expression."""
    if text is None or not text.strip():
        return None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--filter looks like JSON but does not parse: {exc}") from None
        if not isinstance(value, dict):
            raise ValueError("--filter JSON must be an object of field: value")
        return value
    return stripped


def show_progress(flag: bool | None) -> bool:
    """Progress bars: as asked, else on a terminal outside CI."""
    if flag is not None:
        return flag
    return sys.stderr.isatty() and not os.environ.get("CI")


def log(message: str) -> None:
    """A line for the user on stderr (stdout is for results), control characters escaped."""
    from langchain_graphrag_milvus.cli.output import emit_error

    emit_error(message)


FAKE_ANSWER = "The passages answer this [1]."


def make_chat_model(name: str | None, *, required: str | None = None) -> Any:
    """The chat model of ``ask`` and ``serve``: an OpenAI model by name (needs ``OPENAI_API_KEY``).

    ``"fake"`` (hidden, for smoke tests of the plumbing) answers ``FAKE_ANSWER``. Without a
    key: raises ``ValueError`` naming ``required`` if given, else returns None.
    """
    if name == "fake":
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        return FakeListChatModel(responses=[FAKE_ANSWER])
    if not name:
        return None
    if not os.environ.get("OPENAI_API_KEY"):
        if required:
            require_openai_key(required)
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=name, temperature=0)
