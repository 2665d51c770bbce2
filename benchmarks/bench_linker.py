"""Benchmark: the offline entity linker, full scan (before) vs q-gram index (now), 16k–1M names.

    nice -n 10 .venv/bin/python benchmarks/bench_linker.py                  # 16k, 100k, 1M names
    nice -n 10 .venv/bin/python benchmarks/bench_linker.py --sizes 100000 --queries 40

Names: musique100's entity names (subjects and objects of its triplets, ≈16k), scaled up
by recombining their words: each synthetic name copies a real one's shape (word count),
replaces words by words drawn by their frequency in the real names (Zipf-like) or alters
one letter (new rare surnames). Queries: musique100's questions (real mentions and common
nouns) and "Who founded <name>?" / "When did <near miss> win?" for names of the set, a
near miss having one or two letters changed, so both the exact and the fuzzy paths work.
``require_capital=True`` and the cutoff 90, as the store's linker.

Per size, in the same run: construction (before: tokens per name into a dict; now: keys
per name, dict and the q-gram index), ``find()`` p50/p99 (before: rapidfuzz ``extractOne``
over every name per unmatched span; now: the index's candidates only; the scan runs on a
subset of the queries at 1M, it takes seconds), whether every answer is identical, and
the cold start of a store opened with ``graph_path``: names, keys and index loaded from the
saved arrays (``graph/persist.py``) vs keys computed and the index built from the names.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from langchain_graphrag_milvus import EntityLinker, GraphIndex
from langchain_graphrag_milvus.graph import persist
from langchain_graphrag_milvus.text.name_table import NameTable
from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS, name_spans, name_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import print_table  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique100"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


class ScanLinker:
    """The linker as it was: tuple keys, and a rapidfuzz scan of every name per unmatched span."""

    def __init__(self, names: list[str]) -> None:
        self.by_tokens: dict[tuple[str, ...], str] = {}
        self.longest = 1
        for name in names:
            tokens = name_tokens(name)
            if not tokens or all(t in NAME_STOPWORDS for t in tokens) or len(tokens) > 12:
                continue
            self.by_tokens.setdefault(tokens, clean_text(name))
            self.longest = max(self.longest, len(tokens))
        self.choices = [" ".join(t) for t in self.by_tokens]
        self.names = list(self.by_tokens.values())
        self.rules = EntityLinker([], require_capital=True)

    def find(self, query: str) -> list[str]:
        spans = name_spans(query)
        keys = [t for t, _ in spans]
        check = any(c.isupper() for c in query)
        taken = [False] * len(keys)
        found: list[tuple[int, str]] = []
        for size in range(min(self.longest, len(keys)), 0, -1):
            for start in range(len(keys) - size + 1):
                name = self.by_tokens.get(tuple(keys[start : start + size]))
                if not any(taken[start : start + size]) and name and self.rules._allowed(spans, start, size, check):
                    taken[start : start + size] = [True] * size
                    found.append((start, name))
        for size in range(min(4, self.longest, len(keys)), 0, -1):
            for start in range(len(keys) - size + 1):
                window = keys[start : start + size]
                if any(taken[start : start + size]) or window[0] in NAME_STOPWORDS or window[-1] in NAME_STOPWORDS:
                    continue
                text = " ".join(window)
                if len(text) < 5 or not self.rules._allowed(spans, start, size, check):
                    continue
                best = process.extractOne(text, self.choices, scorer=fuzz.ratio, score_cutoff=90.0)
                if best is not None:
                    taken[start : start + size] = [True] * size
                    found.append((start, self.names[best[2]]))
        return list(dict.fromkeys(name for _, name in sorted(found)))


def real_names() -> list[str]:
    names: dict[str, None] = {}
    with (DATA / "passages.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            for triplet in json.loads(line).get("triplets", []):
                if len(triplet) == 3:
                    names.setdefault(triplet[0])
                    names.setdefault(triplet[2])
    return list(names)


def synthetic_names(real: list[str], n: int, seed: int = 0) -> list[str]:
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    counts = Counter(w for name in real for w in name.split())
    vocab, cum = list(counts), np.cumsum(list(counts.values()))
    shapes = [name.split() for name in real]
    out = dict.fromkeys(real[:n])
    while len(out) < n:
        batch = rng.choices(shapes, k=n - len(out))
        uniform = nrng.random(sum(len(s) for s in batch)) * cum[-1]
        draws = iter(np.searchsorted(cum, uniform, "right").tolist())
        for shape in batch:
            words = []
            for word in shape:
                draw, r = next(draws), rng.random()
                if r < 0.4:
                    word = vocab[min(draw, len(vocab) - 1)]
                elif r < 0.65 and len(word) > 3:
                    i = rng.randrange(1, len(word))
                    word = word[:i] + rng.choice(LETTERS) + word[i + 1 :]
                words.append(word)
            out.setdefault(" ".join(words))
    return list(out)[:n]


def near_miss(name: str, rng: random.Random) -> str:
    for _ in range(rng.choice((1, 1, 2))):
        if len(name) > 6:
            i = rng.randrange(1, len(name) - 1)
            name = name[:i] + rng.choice(LETTERS) + name[i + 1 :]
    return name


def queries(names: list[str], count: int, seed: int = 1) -> tuple[list[str], list[str]]:
    """(musique100 questions, synthetic questions: half exact mentions, half near misses)."""
    rng = random.Random(seed)
    with (DATA / "questions_dev.jsonl").open(encoding="utf-8") as fh:
        real = [json.loads(line)["question"] for line in fh]
    picked = rng.sample(real, min(len(real), count // 2))
    long = [n for n in names if len(n) >= 8]
    made = []
    for i in range(count - len(picked)):
        name = rng.choice(long)
        made.append(f"Who founded {name}?" if i % 2 else f"When did {near_miss(name, rng)} win the award?")
    return picked, made


def timed(fn, items):
    times, out = [], []
    for item in items:
        t = time.perf_counter()
        out.append(fn(item))
        times.append((time.perf_counter() - t) * 1e3)
    return np.array(times), out


def measure(real: list[str], size: int, n_queries: int, scan_queries: int) -> dict:
    t = time.perf_counter()
    names = synthetic_names(real, size)
    gen = time.perf_counter() - t
    real_qs, made_qs = queries(names, n_queries)
    qs = real_qs + made_qs
    t = time.perf_counter()
    before = ScanLinker(names)
    build_before = time.perf_counter() - t
    t = time.perf_counter()
    table = NameTable.for_names({f"{i:016x}": n for i, n in enumerate(names)})
    linker = EntityLinker(table.linker_names(), require_capital=True)
    keys_s = time.perf_counter() - t
    t = time.perf_counter()
    table.linker_names().index()
    index_s = time.perf_counter() - t
    now_ms, now_out = timed(linker.find, qs)
    half = scan_queries // 2
    subset = list(range(half)) + list(range(len(real_qs), len(real_qs) + half))
    scan_ms, scan_out = timed(before.find, [qs[i] for i in subset])
    same = all(now_out[i] == b for i, b in zip(subset, scan_out))
    sub_ms = now_ms[subset]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph"
        arrays = {f"names_{k}": v for k, v in table.arrays().items()}
        persist.save(GraphIndex.empty(), path, extra=arrays)
        t = time.perf_counter()
        persist.verify(path)
        saved = {k[6:]: v for k, v in persist.load_extra(path, check=False).items()}
        loaded = NameTable.from_arrays(saved)
        names_map = loaded.names()
        cold = EntityLinker(loaded.linker_names(), require_capital=True)
        cold.find(qs[-1])  # a fuzzy search: the index is there, not built
        load_s = time.perf_counter() - t
        disk = sum(f.stat().st_size for f in path.iterdir() if f.name.startswith("extra_names_"))
    assert len(names_map) == len(names) and [cold.find(q) for q in qs[:10]] == now_out[:10]
    return {
        "names": size,
        "gen_s": gen,
        "build_before_s": build_before,
        "keys_s": keys_s,
        "index_s": index_s,
        "scan_p50": float(np.percentile(scan_ms, 50)),
        "scan_p99": float(np.percentile(scan_ms, 99)),
        "scan_n": len(scan_ms),
        "now_p50": float(np.percentile(now_ms, 50)),
        "now_p99": float(np.percentile(now_ms, 99)),
        "now_n": len(now_ms),
        "sub_p50": float(np.percentile(sub_ms, 50)),
        "sub_p99": float(np.percentile(sub_ms, 99)),
        "scan_mean": float(scan_ms.mean()),
        "sub_mean": float(sub_ms.mean()),
        "made_p50": float(np.percentile(now_ms[len(real_qs) :], 50)),
        "made_p99": float(np.percentile(now_ms[len(real_qs) :], 99)),
        "same": same,
        "load_s": load_s,
        "disk_mb": disk / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--scan-queries", type=int, default=20, help="queries the full scan runs (same queries)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    real = real_names()
    rows = []
    for size in args.sizes:
        rows.append(measure(real, size, args.queries, args.scan_queries))
        print(f"{size:,} names done", file=sys.stderr)
    print_table(
        rows,
        [
            ("names", lambda r: f"{r['names']:,}"),
            ("scan p50/p99/mean ms", lambda r: f"{r['scan_p50']:.1f} / {r['scan_p99']:.0f} / {r['scan_mean']:.0f}"),
            ("index, same queries", lambda r: f"{r['sub_p50']:.2f} / {r['sub_p99']:.1f} / {r['sub_mean']:.1f}"),
            ("mean speed-up", lambda r: f"{r['scan_mean'] / max(r['sub_mean'], 1e-9):.0f}x"),
            ("index, all p50/p99", lambda r: f"{r['now_p50']:.2f} / {r['now_p99']:.1f} (n={r['now_n']})"),
            ("index, synthetic p50/p99", lambda r: f"{r['made_p50']:.2f} / {r['made_p99']:.1f}"),
            ("same answers", lambda r: "yes" if r["same"] else "NO"),
            ("build before s", lambda r: f"{r['build_before_s']:.1f}"),
            ("build now s (keys + index)", lambda r: f"{r['keys_s']:.1f} + {r['index_s']:.1f}"),
            ("cold load s (saved)", lambda r: f"{r['load_s']:.2f}"),
            ("saved MiB", lambda r: f"{r['disk_mb']:.0f}"),
        ],
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
