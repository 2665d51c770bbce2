"""Client memory of a store's graph state per million relations: the memory report vs tracemalloc vs RSS.

Builds, without Milvus, what a store keeps in memory after a load and a first query: the
graph index of a synthetic graph (:func:`synthetic.generate`: 16.75 relations per entity by
default; ``--mean-degree 2.1`` gives musique100's ~1 entity per relation), the
entity names (multi-word capitalised names, :func:`scale_corpus.make_names`), the name
table, the linker's choices with their fuzzy and word indexes, and the store's linker
(:func:`~langchain_graphrag_milvus.retrieval.query_entities.graph_linker`) after one query.
Each size prints three figures per million relations:

* ``report``: :func:`~langchain_graphrag_milvus.milvus.graph_memory.report_of` (what
  ``store.memory_report()`` and ``stats`` say), item by item;
* ``tracemalloc``: bytes allocated by the build and still held (Python and numpy allocations);
* ``RSS``: growth of the process's resident memory (``/proc/self/status``; includes allocator
  slack and freed-but-kept arenas, so it is the upper figure);
* ``RSS released``: the same after :func:`~langchain_graphrag_milvus.milvus.graph_memory.release_free_memory`
  (glibc ``malloc_trim``), which the store calls after it builds the graph from Milvus and after
  it warms the linker: what a store's process keeps resident after these builds.

Each size runs in a fresh process (RSS growth depends on what the heap did before). Run from the
repository root: ``PYTHONPATH=. python benchmarks/bench_memory.py [--sizes 100000 300000]
[--mean-degree 2.1]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_corpus import make_names  # noqa: E402
from synthetic import generate  # noqa: E402

from langchain_graphrag_milvus.graph import GraphIndex  # noqa: E402
from langchain_graphrag_milvus.graph.ids import key_to_id  # noqa: E402
from langchain_graphrag_milvus.milvus.graph_memory import MemoryReport, release_free_memory, report_of  # noqa: E402
from langchain_graphrag_milvus.retrieval.query_entities import graph_linker  # noqa: E402
from langchain_graphrag_milvus.text.name_map import NameMap  # noqa: E402
from langchain_graphrag_milvus.text.name_table import NameTable  # noqa: E402


def build_inputs(n_relations: int, seed: int = 0, mean_degree: float = 16.75) -> tuple[Any, list[str]]:
    """The synthetic graph's rows and one name per entity (``mean_degree``: relations per entity, x2)."""
    g = generate(n_relations, seed=seed, mean_degree=mean_degree)
    names = make_names(g.n_entities_drawn_from, seed=seed + 1)
    return g, names


def build_state(rows: Any, names: list[str]) -> dict[str, Any]:
    """Graph, names, name table (with fuzzy and word index) and a linker that has answered one query."""
    graph = GraphIndex.from_relations(
        relation_keys=rows.relation_keys,
        subject_keys=rows.subject_keys,
        object_keys=rows.object_keys,
        passage_ids=rows.passage_ids,
    )
    keys = graph.entities.keys.tolist()
    entity_names = NameMap.from_items((key_to_id(k), names[i % len(names)]) for i, k in enumerate(keys))
    table = NameTable.for_names(entity_names)
    linker_names = table.linker_names()
    linker_names.index()
    linker_names.token_index()
    linker = graph_linker(lambda: graph)(linker_names)
    linker.find(f"Where was {linker_names.names[0]} born, and who knew {linker_names.names[-1]}?")
    return {"graph": graph, "names": entity_names, "table": table, "linker": linker}


def report(state: dict[str, Any]) -> MemoryReport:
    """The memory report of a :func:`build_state` result."""
    return report_of(state["graph"], names=state["names"], table=state["table"], linker=state["linker"])


def fresh_build(n_relations: int, seed: int = 0, mean_degree: float = 16.75) -> dict[str, Any]:
    """Inputs and :func:`build_state`, keeping only the state.

    The names and passage id strings are then the state's own (as when read from Milvus), and
    the input arrays are freed: what is still allocated afterwards is the state alone.
    """
    rows, names = build_inputs(n_relations, seed, mean_degree)
    state = build_state(rows, names)
    del rows, names
    gc.collect()
    return state


def traced_build(n_relations: int, seed: int = 0, mean_degree: float = 16.75) -> tuple[dict[str, Any], int]:
    """:func:`fresh_build` and the bytes tracemalloc sees it still holding (after a collection)."""
    gc.collect()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        state = fresh_build(n_relations, seed, mean_degree)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        if started:
            tracemalloc.stop()
    return state, held


def rss_bytes() -> int:
    """Resident memory of this process (``VmRSS``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def measure(n_relations: int, mean_degree: float = 16.75) -> dict[str, Any]:
    """Report, tracemalloc and RSS figures for one size (RSS from a first build, without tracing)."""
    gc.collect()
    rss_before = rss_bytes()
    state = fresh_build(n_relations, mean_degree=mean_degree)
    rss = rss_bytes() - rss_before
    release_free_memory()
    rss_released = rss_bytes() - rss_before
    rep = report(state)
    entities = state["graph"].n_entities
    del state
    gc.collect()
    _, traced = traced_build(n_relations, mean_degree=mean_degree)
    return {
        "n": n_relations, "entities": entities, "report": rep, "traced": traced,
        "rss": rss, "rss_released": rss_released,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Print the figures of each size, then the report's items of the largest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000])
    parser.add_argument(
        "--mean-degree",
        type=float,
        default=16.75,
        help="2 x relations per entity: 16.75 as synthetic.py (0.12 entities per relation); "
        "2.1 for musique100's given triplets (16,245 entities for 17,037 relations)",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one size, in this process, as JSON
    args = parser.parse_args(argv)
    if args.one:
        fresh_build(5_000)  # imports and first-use caches, so that no size pays for them
        gc.collect()
        r = measure(args.one, args.mean_degree)
        rep = r.pop("report")
        print(json.dumps({**r, "items": rep.items, "array_bytes": rep.array_bytes}))
        return
    results = []
    for n in args.sizes:  # each size in a fresh process: RSS growth depends on what the heap did before
        cmd = [sys.executable, __file__, "--one", str(n), "--mean-degree", str(args.mean_degree)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        r["report"] = MemoryReport(r.pop("items"), 0, n, r.pop("array_bytes"))
        results.append(r)
    mib = 2**20
    print(
        "| relations | entities | report MiB/M | tracemalloc MiB/M | RSS MiB/M | RSS released MiB/M | report/traced "
        "| nbytes MiB/M |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        rep, m = r["report"], r["n"] / 1e6
        print(
            f"| {r['n']} | {r['entities']} | {rep.total / mib / m:.0f} | {r['traced'] / mib / m:.0f} | "
            f"{r['rss'] / mib / m:.0f} | {r['rss_released'] / mib / m:.0f} | {rep.total / r['traced']:.2f} | "
            f"{rep.array_bytes / mib / m:.0f} |"
        )
    last = results[-1]["report"]
    print(f"\nitems at {results[-1]['n']} relations (MiB per million relations):")
    m = results[-1]["n"] / 1e6
    for name, size in sorted(last.items.items(), key=lambda i: -i[1]):
        print(f"  {name:16s} {size / mib / m:7.1f}")


if __name__ == "__main__":
    main()
