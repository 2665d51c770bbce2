"""The ``eval`` command's work: per data set, build the graph with the chosen extractor, evaluate.

``--extractor given`` uses the triplets in the passages file (musique100 has GPT-3.5 ones;
hotpotqa100 has none, which is an error); ``offline`` strips them and extracts from the raw
text with spaCy (:mod:`langchain_graphrag_milvus.ingest.offline`); ``llm`` does the same
with an OpenAI chat model (needs ``OPENAI_API_KEY``). ``--supplement offline_links`` adds
spaCy's title ↔ mention links to those triplets (``offline``: all spaCy triplets; see
:mod:`langchain_graphrag_milvus.ingest.supplement`). Extractions are cached on disk
(``<cache-dir>/triplets.sqlite``), so a re-run parses nothing; each (model, file,
extractor) gets its own collection prefix, so a re-run also ingests nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.ingest.records import iter_jsonl
from langchain_graphrag_milvus.milvus.schema import SCHEMA_VERSION

__all__ = ["DataSet", "EvalConfigError", "data_sets", "run_data_set", "EXTRACTORS"]

EXTRACTORS = ("given", "offline", "llm")


class EvalConfigError(GraphRAGError, ValueError):
    """The evaluation was asked for something the data or the environment cannot give."""


@dataclass(frozen=True)
class DataSet:
    """A passages file and a questions file, with a short name for tables and prefixes."""

    name: str
    passages: Path
    questions: Path


def data_sets(dirs: list[Path] | None, passages: Path | None, questions: Path | None) -> list[DataSet]:
    """The data sets named on the command line (``--dataset DIR`` ... and/or ``--passages/--questions``).

    A data set directory holds ``passages.jsonl`` and ``questions_dev.jsonl``.
    """
    sets = []
    for d in dirs or []:
        sets.append(DataSet(d.resolve().name, d / "passages.jsonl", d / "questions_dev.jsonl"))
    if passages is not None or questions is not None:
        if passages is None or questions is None:
            raise EvalConfigError("--passages and --questions go together")
        sets.append(DataSet(passages.resolve().parent.name or passages.stem, passages, questions))
    if not sets:
        raise EvalConfigError("name a data set: --dataset DIR, or --passages FILE --questions FILE")
    for s in sets:
        for f in (s.passages, s.questions):
            if not f.is_file():
                raise EvalConfigError(f"{s.name}: no file {f}")
    return sets


def has_triplets(path: Path) -> bool:
    """Whether the first record of a passages file carries a ``triplets`` key."""
    for _, row in iter_jsonl(path):
        return isinstance(row, dict) and "triplets" in row
    return False


def make_extractor(kind: str, *, spacy_model: str | None, llm_model: str) -> Runnable[Any, Any] | None:
    """The extractor for ``--extractor`` (None for ``given``): the CLI's one factory, its errors as usage errors."""
    if kind not in EXTRACTORS:
        raise EvalConfigError(f"unknown extractor {kind!r}; one of {', '.join(EXTRACTORS)}")
    if kind == "given":
        return None
    from langchain_graphrag_milvus.cli.common import make_extractor as make

    try:
        return make(kind, llm_model, spacy_model=spacy_model)
    except ValueError as exc:  # no OPENAI_API_KEY, no openai extra
        raise EvalConfigError(f"{exc} (or use --extractor offline: no LLM)") from None


def _raw_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a passages file without their triplets (so the extractor reads the text)."""
    for _, row in iter_jsonl(path):
        if isinstance(row, dict):
            yield {k: v for k, v in row.items() if k != "triplets"}
        else:
            yield row


def _passage_subset(path: Path, limit: int, questions: list[Any], *, raw: bool) -> list[dict[str, Any]]:
    """The first ``limit`` passages and every gold passage of ``questions`` (file order)."""
    if limit < 0:
        raise EvalConfigError(f"--passage-limit must be 0 or more, got {limit}")
    gold = {g for q in questions for g in q.gold_passage_ids}
    rows = _raw_records(path) if raw else (row for _, row in iter_jsonl(path))
    return [r for i, r in enumerate(rows) if i < limit or (isinstance(r, dict) and str(r.get("id")) in gold)]


def _passage_ids(path: Path, only: list[Any] | None = None) -> list[str]:
    """The ids of a passages file's records, or of the ``only`` ones (the hybrid baseline's corpus)."""
    rows = only if only is not None else (row for _, row in iter_jsonl(path))
    return [str(row["id"]) for row in rows if isinstance(row, dict) and row.get("id") is not None]


def _tag(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=4).hexdigest()


def run_data_set(
    data: DataSet,
    *,
    embedding: Embeddings,
    model: str,
    extractor_kind: str,
    extractor: Runnable[Any, Any] | None,
    cache_dir: Path,
    supplement: str | None = None,
    uri: str,
    token: str | None,
    prefix: str | None,
    limit: int | None,
    progress: bool | None,
    log: Callable[[str], None],
    index_mode: Literal["flat", "auto", "hnsw"] = "flat",
    passage_limit: int | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Build (or reopen) the graph of one data set with one extractor, and evaluate it.

    ``supplement`` (``"offline_links"``, ``"offline"``): the store's
    :mod:`~langchain_graphrag_milvus.ingest.supplement`, added to the triplets of every passage.
    With ``index_mode`` other than ``"flat"``, the store's vector index may be approximate:
    recall@10 of its relation and passage searches against exact search, over the
    questions, goes into the statistics (``vector_index``) and the printed index line.

    Returns:
        The :class:`~langchain_graphrag_milvus.cli.evaluation.EvalReport` and the index
        statistics (seconds, triplets, extraction cost) that went into its ``config``.
    """
    from langchain_graphrag_milvus.cli.evaluation import KS, default_methods, evaluate, load_questions
    from langchain_graphrag_milvus.cli.hybrid import SKIPPED, hybrid_retriever
    from langchain_graphrag_milvus.ingest.triplets import extractor_name
    from langchain_graphrag_milvus.store import MilvusGraphStore

    if extractor_kind == "given" and not has_triplets(data.passages):
        raise EvalConfigError(f"{data.name}: {data.passages} has no triplets; use --extractor offline (no LLM) or llm")
    file_tag = hashlib.blake2b(data.passages.read_bytes(), digest_size=4).hexdigest()
    name = extractor_name(extractor) if extractor is not None else "given"
    tag = f"v{SCHEMA_VERSION}_{model.replace('-', '_').lower()}_{file_tag}"
    if extractor_kind != "given":
        tag += f"_{extractor_kind}_{_tag(name)}"
    if supplement:
        tag += f"_{supplement}"
    if index_mode != "flat":
        tag += f"_{index_mode}"
    questions = load_questions(data.questions, limit=limit)
    subset = None
    if passage_limit is not None:
        subset = _passage_subset(data.passages, passage_limit, questions, raw=extractor is not None)
        tag += f"_p{passage_limit}_{_tag(*sorted(str(r.get('id')) for r in subset))}"
    prefix = prefix or f"eval_{tag}"
    store = MilvusGraphStore(
        embedding,
        uri=uri,
        token=token,
        collection_prefix=prefix,
        extractor=extractor,
        extraction_cache=cache_dir / "triplets.sqlite",
        index=index_mode,
        supplement=supplement,  # type: ignore[arg-type]
    )
    try:
        kind = extractor_kind + (f"+{supplement}" if supplement else "")
        log(f"[{data.name}] ingesting {data.passages} ({kind} triplets) into {uri}, prefix {prefix} ...")
        records = _raw_records(data.passages) if extractor is not None else None
        if subset is not None:
            report = store.add_records(subset, show_progress=progress)
        elif records is not None:
            report = store.add_records(list(records), show_progress=progress)
        else:
            report = store.add_jsonl(data.passages, show_progress=progress)
        log(f"  {report}")
        index = _index_stats(report, extractor, kind, name)
        if index_mode != "flat":
            index["vector_index"] = store.index_recall([q.question for q in questions], k=10)
        log(f"[{data.name}] evaluating {len(questions)} questions with {model} embeddings ...")
        started = time.perf_counter()
        methods = default_methods(store)
        ids = _passage_ids(data.passages, only=subset)
        hybrid = hybrid_retriever(store, ids, k=max(KS))
        if hybrid is None:
            log(f"  {SKIPPED}")
        else:  # the baselines first: naive, hybrid, then the graph's methods
            methods = {"naive": methods.pop("naive"), "hybrid": hybrid, **methods}
        result = evaluate(store, questions, methods=methods, show_progress=progress, on_method=lambda n: log(f"  {n}"))
        result.config = {
            "dataset": data.name,
            "embeddings": model,
            "extractor": extractor_kind,
            "supplement": supplement,
            "uri": uri,
            "prefix": prefix,
            "questions": len(questions),
            "passages": str(data.passages),
            "questions_file": str(data.questions),
            "index": index,
            "seconds": round(time.perf_counter() - started + report.seconds, 1),
        }
        return result, index
    finally:
        store.close()


def _index_stats(report: Any, extractor: Any, kind: str, name: str) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "extractor": kind,
        "extractor_name": name,
        "passages_added": report.passages_added,
        "index_seconds": round(report.seconds, 1),
        "texts_embedded": report.texts_embedded,
        "relations_added": report.relations_added,
        "entities_added": report.entities_added,
        "extraction_calls": report.extraction_calls,
        "extraction_cached": report.extraction_cached,
        "extraction_failures": report.extraction_failures,
        "triplets_supplemented": report.triplets_supplemented,
        "input_tokens": report.input_tokens,
        "output_tokens": report.output_tokens,
    }
    parsed = int(getattr(extractor, "passages", 0) or 0)
    seconds = float(getattr(extractor, "seconds", 0.0) or 0.0)
    if parsed:
        stats["extraction_seconds"] = round(seconds, 1)
        stats["extraction_passages_per_s"] = round(parsed / seconds, 1) if seconds else None
    return stats


def index_line(index: dict[str, Any]) -> str:
    """One line describing how the graph was built and what it cost."""
    text = (
        f"index: {index['extractor']} triplets ({index['extractor_name']}); {index['passages_added']} passages "
        f"added in {index['index_seconds']}s, {index['relations_added']} relations, "
        f"{index['entities_added']} entities"
    )
    if index.get("triplets_supplemented"):
        text += f" ({index['triplets_supplemented']} triplets added by the supplement)"
    for kind, measured in index.get("vector_index", {}).items():
        text += f"; {kind} index {measured['index']}: recall@{measured['k']} {measured['recall']:.3f} vs exact"
    if index["extractor"].partition("+")[0] == "given":
        return text
    text += f"; extraction: {index['extraction_calls']} passages extracted, {index['extraction_cached']} from cache"
    if "extraction_passages_per_s" in index:
        text += f", {index['extraction_seconds']}s ({index['extraction_passages_per_s']} passages/s)"
    if index["input_tokens"] or index["output_tokens"]:
        text += f", {index['input_tokens']} input + {index['output_tokens']} output tokens"
    return text


def write_json(path: Path, results: list[tuple[str, dict[str, Any]]]) -> None:
    """One data set: the report's own shape; several: ``{"datasets": {name: report}}``."""
    data = results[0][1] if len(results) == 1 else {"datasets": dict(results)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
