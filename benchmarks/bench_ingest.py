"""Benchmark (issue 25, item 4): ingest wall time against a plain langchain-milvus load, same run.

    nice -n 10 .venv/bin/python benchmarks/bench_ingest.py                       # both data sets, 1 round
    nice -n 10 .venv/bin/python benchmarks/bench_ingest.py --sets musique100:given --rounds 2

For each ``SET:GRAPH`` (``musique100:given`` — the file's GPT-3.5 triplets; ``hotpotqa100:offline``
— spaCy's triplets, extracted during the ingest), in each round, alternating which goes first:

* **plain**: what a user of langchain-milvus alone does with the same passages — one
  ``langchain_milvus.Milvus.from_texts(texts, embedding, metadatas)`` call into a new Milvus Lite
  file (the passages embedded and inserted, nothing else);
* **graph**: ``MilvusGraphStore(...).add_records(rows)`` into a new Milvus Lite file (passages,
  entity names and relation texts embedded; entities, relations, passages and the graph index
  written; with ``offline`` the spaCy extraction runs inside the timed call).

Both use the same ``LocalMiniLMEmbeddings`` object (warmed up first), no embedding cache and no
extraction cache, so every text is embedded in the timed call. Every embedding call is recorded:
the texts it embedded are sorted into passages, entity names and relation texts (by what the
store holds afterwards), and after the graph load each kind's unique texts are embedded again
alone, one call per kind: the **embedding floor** of this design and each kind's share of it.

Printed: wall seconds of each load, graph ÷ plain (the issue's target is ≤ 2x), texts embedded
per passage by kind, the floor's share by kind, the embedding's share of the graph load's wall
time, and the extraction's seconds (spaCy, timed by a wrapper).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")


class RecordingEmbeddings(Embeddings):
    """Embeddings that forward to ``inner`` and record each call's texts and seconds."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls: list[tuple[list[str], float]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Forward and record."""
        started = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self.calls.append((list(texts), time.perf_counter() - started))
        return out

    def embed_query(self, text: str) -> list[float]:
        """Forward and record."""
        return self.embed_documents([text])[0]

    def reset(self) -> None:
        """Forget the recorded calls."""
        self.calls = []

    def seconds(self) -> float:
        """Seconds spent in recorded calls."""
        return sum(s for _, s in self.calls)


class TimedExtractor:
    """A wrapper that adds up the seconds of the extractor's calls (``extract_many``, ``invoke``, ``batch``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name not in ("invoke", "batch", "ainvoke", "abatch", "extract_many"):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


def read_rows(dataset: str, graph: str) -> list[dict[str, Any]]:
    """The data set's passage rows (with their triplets for ``given``, without for ``offline``)."""
    rows = [json.loads(line) for line in (DATA / dataset / "passages.jsonl").read_text().splitlines() if line]
    if graph == "offline":
        rows = [{k: v for k, v in row.items() if k != "triplets"} for row in rows]
    return rows


def passage_text(row: dict[str, Any]) -> str:
    """The text the store embeds for a record: ``title + "\n" + text`` (``ingest/records.py``)."""
    title = row.get("title")
    return f"{title}\n{row['text']}" if isinstance(title, str) and title.strip() else str(row["text"])


def plain_load(emb: Embeddings, rows: Sequence[dict[str, Any]], uri: str) -> float:
    """Seconds of ``Milvus.from_texts`` of the passages into a new Lite file (langchain-milvus alone).

    The same texts the graph store embeds for its passages (title and text), so both embed the same.
    """
    from langchain_milvus import Milvus

    texts = [passage_text(r) for r in rows]
    metadatas = [{"source": str(r["id"]), "title": str(r.get("title", ""))} for r in rows]
    started = time.perf_counter()
    store = Milvus.from_texts(
        texts, emb, metadatas=metadatas, ids=[str(r["id"]) for r in rows], collection_name="plain",
        connection_args={"uri": uri},
    )  # fmt: skip
    seconds = time.perf_counter() - started
    store.client.close()
    return seconds


def graph_load(emb: RecordingEmbeddings, rows: Sequence[dict[str, Any]], uri: str, graph: str) -> dict[str, Any]:
    """Seconds of ``add_records`` into a new store, and what its embedding calls embedded, by kind."""
    from langchain_graphrag_milvus import MilvusGraphStore

    extractor = None
    if graph == "offline":
        from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor

        extractor = TimedExtractor(create_offline_triplet_extractor())
    store = MilvusGraphStore(emb, uri=uri, collection_prefix="bench", extractor=extractor)
    emb.reset()
    started = time.perf_counter()
    report = store.add_records([dict(r) for r in rows])
    seconds = time.perf_counter() - started
    embed_seconds = emb.seconds()
    passages = {str(r["text"]) for r in store.reads.iterate("passages", ("text",))}  # as the store wrote them
    names = set(store.entity_names().values())
    counts = {"passages": 0, "entities": 0, "relations": 0}
    kinds: dict[str, set[str]] = {k: set() for k in counts}
    for texts, _ in emb.calls:
        for text in texts:
            kind = "passages" if text in passages else "entities" if text in names else "relations"
            counts[kind] += 1
            kinds[kind].add(text)
    store.close()
    floor = {}
    for kind, texts in kinds.items():  # each kind's unique texts alone, one call: the floor
        emb.reset()
        started_kind = time.perf_counter()
        if texts:
            emb.inner.embed_documents(sorted(texts))
        floor[kind] = time.perf_counter() - started_kind
    return {
        "seconds": seconds, "embed_seconds": embed_seconds, "texts": counts, "floor": floor,
        "extract_seconds": extractor.seconds if extractor is not None else 0.0,
        "texts_embedded": report.texts_embedded, "relations": report.relations_added,
        "entities": report.entities_added,
    }  # fmt: skip


def run_set(emb: RecordingEmbeddings, spec: str, rounds: int, work: Path, limit: int | None = None) -> dict[str, Any]:
    """Rounds of plain and graph loads of one set, alternating which goes first (``limit``: the first passages)."""
    dataset, _, graph = spec.partition(":")
    rows = read_rows(dataset, graph or "given")[:limit]
    plain: list[float] = []
    graphs: list[dict[str, Any]] = []
    for i in range(rounds):
        order = ("plain", "graph") if i % 2 == 0 else ("graph", "plain")
        for what in order:
            uri = str(work / f"{dataset}_{graph}_{what}_{i}.db")
            if what == "plain":
                plain.append(plain_load(emb.inner, rows, uri))
            else:
                graphs.append(graph_load(emb, rows, uri, graph or "given"))
            print(f"  {spec} round {i + 1} {what}: done", flush=True)  # noqa: T201
    return {"set": spec, "passages": len(rows), "plain": plain, "graph": graphs}


def report(results: Sequence[dict[str, Any]]) -> str:
    """The markdown table of the runs (medians over rounds)."""
    head = (
        "| set | passages | plain load s | graph ingest s | graph ÷ plain | texts embedded per passage "
        "(passages / entities / relations) | floor share (passages / entities / relations) | embedding share of "
        "graph wall | extraction s | graph ÷ plain floor |"
    )
    lines = [head, "|---" * 10 + "|"]
    for r in results:
        plain = statistics.median(r["plain"])
        g = r["graph"]
        wall = statistics.median(x["seconds"] for x in g)
        last = g[-1]
        n = r["passages"]
        per = " / ".join(f"{last['texts'][k] / n:.1f}" for k in ("passages", "entities", "relations"))
        floor_total = sum(last["floor"].values())
        kinds = ("passages", "entities", "relations")
        share = " / ".join(f"{100 * last['floor'][k] / floor_total:.0f}%" for k in kinds)
        embed_share = 100 * statistics.median(x["embed_seconds"] / x["seconds"] for x in g)
        extract = statistics.median(x["extract_seconds"] for x in g)
        lines.append(
            f"| {r['set']} | {n:,} | {plain:.1f} | {wall:.1f} | **{wall / plain:.2f}x** | {per} | {share} | "
            f"{embed_share:.0f}% | {extract:.1f} | {floor_total / plain:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the sets, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["musique100:given", "hotpotqa100:offline"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--limit", type=int, help="smoke runs: only the first N passages of each set")
    args = parser.parse_args(argv)
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    emb = RecordingEmbeddings(LocalMiniLMEmbeddings())
    emb.inner.embed_documents(["warm-up text"] * 64)  # the model's load is not an ingest's cost
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as tmp:
        for spec in args.sets:
            results.append(run_set(emb, spec, args.rounds, Path(tmp), args.limit))
            print(report(results), flush=True)  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
