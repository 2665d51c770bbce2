r"""Command line: ``python -m langchain_graphrag_milvus eval ...`` (also ``langchain-graphrag-milvus``).

Example:
    .. code-block:: bash

        python -m langchain_graphrag_milvus eval \
            --passages ../shared/data/musique100/passages.jsonl \
            --questions ../shared/data/musique100/questions_dev.jsonl --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus.milvus_schema import SCHEMA_VERSION

__all__ = ["main"]

DEFAULT_CACHE = Path(".cache") / "langchain-graphrag-milvus"


def _embeddings(name: str, cache_dir: Path) -> tuple[Embeddings, str]:
    from langchain_graphrag_milvus.embedding_cache import CachedEmbeddings

    if name == "local":
        from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

        base: Embeddings = LocalMiniLMEmbeddings()
        model = "all-MiniLM-L6-v2"
    elif name == "openai":
        from langchain_openai import OpenAIEmbeddings

        base, model = OpenAIEmbeddings(model="text-embedding-3-small"), "text-embedding-3-small"
    elif name == "fake":
        from langchain_core.embeddings import DeterministicFakeEmbedding

        base, model = DeterministicFakeEmbedding(size=64), "fake-64"
    else:  # pragma: no cover - argparse restricts the choices
        raise ValueError(name)
    return CachedEmbeddings(base, cache_dir / "embeddings.sqlite", namespace=model), model


def _file_tag(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=4).hexdigest()


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201


def cmd_eval(args: argparse.Namespace) -> int:
    """Ingest (idempotent), run the methods, print the tables, write JSON."""
    from langchain_graphrag_milvus.evaluation import evaluate, load_questions
    from langchain_graphrag_milvus.store import MilvusGraphStore

    args.cache_dir.mkdir(parents=True, exist_ok=True)
    embedding, model = _embeddings(args.embeddings, args.cache_dir)
    tag = f"v{SCHEMA_VERSION}_{model.replace('-', '_').lower()}_{_file_tag(args.passages)}"
    prefix = args.prefix or f"eval_{tag}"
    uri = args.uri or str(args.cache_dir / "eval_milvus.db")
    store = MilvusGraphStore(embedding, uri=uri, token=args.token, collection_prefix=prefix)
    started = time.perf_counter()
    _log(f"ingesting {args.passages} into {uri} (prefix {prefix}) ...")
    report = store.add_jsonl(args.passages, show_progress=args.progress)
    _log(f"  {report}")
    questions = load_questions(args.questions, limit=args.limit)
    _log(f"evaluating {len(questions)} questions with {model} embeddings ...")
    result = evaluate(store, questions, show_progress=args.progress, on_method=lambda n: _log(f"  {n}"))
    result.config = {
        "embeddings": model,
        "uri": uri,
        "prefix": prefix,
        "questions": len(questions),
        "passages": str(args.passages),
        "questions_file": str(args.questions),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(result.table())  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
        _log(f"wrote {args.json}")
    store.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommand ``eval``)."""
    parser = argparse.ArgumentParser(prog="python -m langchain_graphrag_milvus")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="Recall@2/@5 of naive vs graph retrieval, and LLM pool statistics")
    ev.add_argument("--passages", type=Path, required=True, help="passages JSONL ({id, title, text, triplets})")
    ev.add_argument("--questions", type=Path, required=True, help="questions JSONL ({id, question, gold_passage_ids})")
    ev.add_argument("--json", type=Path, help="write the results here")
    ev.add_argument("--limit", type=int, help="only the first N questions")
    ev.add_argument("--uri", help="Milvus URI (default: Milvus Lite under --cache-dir)")
    ev.add_argument("--token", help="Milvus token (user:password or API key)")
    ev.add_argument("--prefix", help="collection prefix (default: from the model and the passages file)")
    ev.add_argument(
        "--embeddings",
        choices=["local", "openai", "fake"],
        default="local",
        help="local all-MiniLM-L6-v2 (default), OpenAI, or a fake for smoke tests",
    )
    ev.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="embedding cache and Milvus Lite data")
    ev.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars (default: on a terminal)"
    )
    ev.set_defaults(func=cmd_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))
