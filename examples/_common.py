"""Model choice shared by the examples: OpenAI when OPENAI_API_KEY is set, offline otherwise."""

from __future__ import annotations

import os
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

HERE = Path(__file__).resolve().parent
# Milvus Lite, created on first run (EXAMPLES_MILVUS_URI points elsewhere, e.g. a server)
DB_URI = os.environ.get("EXAMPLES_MILVUS_URI", str(HERE / "data" / "examples_milvus.db"))
if "EXAMPLES_MILVUS_URI" not in os.environ:
    (HERE / "data").mkdir(exist_ok=True)  # Milvus Lite creates the .db directory, not its parent
# pages the examples write: beside a local store, else under examples/data/
OUT_DIR = Path(DB_URI).parent if "://" not in DB_URI else HERE / "data"


def use_openai() -> bool:
    if not os.environ.get("OPENAI_API_KEY"):
        return False
    try:
        import langchain_openai  # noqa: F401
    except ImportError:
        raise SystemExit(
            "OPENAI_API_KEY is set but langchain-openai is not installed: "
            "pip install 'langchain-graphrag-milvus[openai]' (or unset the key to run offline)"
        ) from None
    return True


def embeddings() -> tuple[Embeddings, str]:
    """The embedding model and a collection prefix naming it (dimensions differ per model)."""
    if use_openai():
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(model="text-embedding-3-small"), "openai"
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    return LocalMiniLMEmbeddings(), "minilm"


def chat_model() -> BaseChatModel | None:
    if not use_openai():
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="gpt-4o", temperature=0)


def banner() -> None:
    if use_openai():
        print("OPENAI_API_KEY is set: OpenAI embeddings (text-embedding-3-small) and gpt-4o are used.\n")
    else:
        print(
            "No OPENAI_API_KEY: embeddings come from the local all-MiniLM-L6-v2 model and NO LLM runs.\n"
            "  - query entities: offline linker (known entity names found in the question)\n"
            "  - rerank: no LLM; relations are ordered by the retriever's no-LLM scoring\n"
        )
