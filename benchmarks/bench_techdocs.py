"""Benchmark: file-level Recall@2/@5 of graph vs naive retrieval on real technical documentation.

    nice -n 10 .venv/bin/python benchmarks/bench_techdocs.py                 # build, ingest, ask
    nice -n 10 .venv/bin/python benchmarks/bench_techdocs.py --fresh         # re-ingest from scratch
    nice -n 10 .venv/bin/python benchmarks/bench_techdocs.py --json out.json --show-entities

The corpus is ``../shared/data/techdocs`` (its README): READMEs, release notes, pip's
Markdown docs, ``pydoc -w`` pages and a few PDFs that other projects ship on this machine,
built by its ``make_corpus.sh`` into ``.cache/techdocs`` when missing. The corpus is
ingested as a user would: through the public CLI (``ingest DIR --extractor offline`` into a
Milvus Lite store under ``.cache/bench_techdocs``; exact FLAT search, the store's default).
The questions (``questions_dev.jsonl``: 15 one-file, 15 two-file) are then asked through
the public API on that store, with the graph retriever and the naive vector retriever (both
``k=5``, the offline linker for the graph). A question's Recall@k is the share of its gold
files among the files of its top-k passages (``source`` relative to the corpus folder);
the table reports the mean by hop count. ``--show-entities`` prints what the offline
linker found in each question.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the package of this checkout, not whichever one the environment installed (an editable install of another tree)
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "techdocs"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/techdocs")
KS = (2, 5)


def build_corpus(corpus: Path) -> None:
    """Run the data set's ``make_corpus.sh`` into ``corpus`` (only when it is missing)."""
    if corpus.is_dir() and any(corpus.iterdir()):
        return
    subprocess.run(["bash", str(DATA / "make_corpus.sh"), str(corpus)], check=True)


def ingest(corpus: Path, db: Path, prefix: str) -> dict[str, object]:
    """``python -m langchain_graphrag_milvus ingest CORPUS --extractor offline`` (the public CLI)."""
    command = [
        sys.executable, "-m", "langchain_graphrag_milvus", "ingest", str(corpus), "--extractor", "offline",
        "--uri", str(db), "--prefix", prefix, "--json", "--no-progress",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    summary: dict[str, object] = json.loads(done.stdout)
    summary["bench_seconds"] = round(time.perf_counter() - started, 1)
    return summary


def recall(files: list[str], gold: list[str], k: int) -> float:
    """Share of ``gold`` among the first ``k`` files."""
    return len(set(files[:k]) & set(gold)) / len(set(gold))


def ask(
    corpus: Path, db: Path, prefix: str, questions: list[dict], show: bool, variants: Sequence[str] = ()
) -> dict[str, list[list[str]]]:
    """Per method, the files of each question's top-5 passages (public API on the CLI's store).

    ``variants``: ``option=value[,option=value...]`` settings of ``MilvusGraphRetriever``, each one
    more method (``graph fuse_dense=0.5``); values are parsed as the retriever field's default type.
    """
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=str(db), collection_prefix=prefix)
    root = os.path.abspath(corpus)
    methods = {"naive": store.as_naive_retriever(k=max(KS)), "graph": MilvusGraphRetriever(store=store, k=max(KS))}
    for spec in variants:
        fields = dict(part.split("=", 1) for part in spec.split(","))
        typed = {key: type(MilvusGraphRetriever.model_fields[key].default)(value) for key, value in fields.items()}
        methods[f"graph {spec}"] = MilvusGraphRetriever(store=store, k=max(KS), **typed)
    out: dict[str, list[list[str]]] = {name: [] for name in methods}
    try:
        for q in questions:
            if show:
                print(f"{q['id']}: {store.entity_linker().find(q['question'])}")  # noqa: T201
            for name, retriever in methods.items():
                docs = retriever.invoke(q["question"])
                out[name].append([os.path.relpath(str(d.metadata.get("source", "")), root) for d in docs])
    finally:
        store.close()
    return out


def table(questions: list[dict], files: dict[str, list[list[str]]]) -> tuple[str, dict[str, dict[str, float]]]:
    """Markdown table of mean Recall@2/@5 by hop count (and all), graph vs naive."""
    groups = {"1-file": [i for i, q in enumerate(questions) if q["hops"] == 1]}
    groups["2-file"] = [i for i, q in enumerate(questions) if q["hops"] == 2]
    groups["all"] = list(range(len(questions)))
    rows = ["| method | " + " | ".join(f"{g} (n={len(ix)}) R@2 / R@5" for g, ix in groups.items()) + " |"]
    rows.append("|---" * (len(groups) + 1) + "|")
    numbers: dict[str, dict[str, float]] = {}
    for name, ranked in files.items():
        cells = []
        for group, ix in groups.items():
            for k in KS:
                value = 100 * sum(recall(ranked[i], questions[i]["gold_files"], k) for i in ix) / max(len(ix), 1)
                numbers.setdefault(name, {})[f"{group} R@{k}"] = round(value, 1)
            cells.append(f"{numbers[name][f'{group} R@2']:.1f} / {numbers[name][f'{group} R@5']:.1f}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows), numbers


def main() -> int:
    """Build the corpus if needed, ingest it through the CLI, ask the questions, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / ".cache" / "techdocs")
    parser.add_argument("--questions", type=Path, default=DATA / "questions_dev.jsonl")
    parser.add_argument("--db", type=Path, default=ROOT / ".cache" / "bench_techdocs" / "techdocs.db")
    parser.add_argument("--prefix", default="techdocs")
    parser.add_argument("--fresh", action="store_true", help="delete the benchmark's store first (re-ingest all)")
    parser.add_argument("--json", type=Path, help="write the numbers and the ranked files here")
    parser.add_argument(
        "--graph-setting",
        nargs="*",
        default=[],
        help="option=value[,option=value] settings of MilvusGraphRetriever, each one more row (e.g. fuse_dense=0.5)",
    )
    parser.add_argument("--show-entities", action="store_true", help="print the linked entities of each question")
    args = parser.parse_args()

    build_corpus(args.corpus)
    if args.fresh and args.db.exists():
        if not args.db.name.endswith(".db"):
            raise SystemExit(f"--fresh deletes only a Milvus Lite store ending in .db, not {args.db}")
        shutil.rmtree(args.db) if args.db.is_dir() else args.db.unlink()
    args.db.parent.mkdir(parents=True, exist_ok=True)
    summary = ingest(args.corpus, args.db, args.prefix)
    keys = ("files_found", "files_ingested", "files_unchanged", "files_skipped", "chunks", "bench_seconds")
    print("ingest:", {k: summary.get(k) for k in keys})  # noqa: T201
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    files = ask(args.corpus, args.db, args.prefix, questions, args.show_entities, args.graph_setting)
    text, numbers = table(questions, files)
    print(text)  # noqa: T201
    if args.json:
        ranked = {name: dict(zip((q["id"] for q in questions), per)) for name, per in files.items()}
        args.json.write_text(json.dumps({"numbers": numbers, "ingest": summary, "files": ranked}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
