"""Client memory of a store's graph state per million relations: the memory report vs tracemalloc vs RSS.

Builds, without Milvus, what a store keeps in memory after a load and a first query: the
graph index of a synthetic graph (:func:`synthetic.generate`: 16.75 relations per entity by
default; ``--mean-degree 2.1`` gives musique100's ~1 entity per relation), the
entity names (multi-word capitalised names, :func:`scale_corpus.make_names`), the name
table, the linker's choices with their fuzzy and word indexes, and the store's linker
(:func:`~langchain_graphrag_milvus.retrieval.graph_linker.graph_linker`) after one query.
Each size prints three figures per million relations:

* ``report``: :func:`~langchain_graphrag_milvus.milvus.graph_memory.report_of` (what
  ``store.memory_report()`` and ``stats`` say), item by item;
* ``tracemalloc``: bytes allocated by the build and still held (Python and numpy allocations);
* ``RSS``: growth of the process's resident memory (``/proc/self/status``; includes allocator
  slack and freed-but-kept arenas, so it is the upper figure);
* ``RSS released``: the same after :func:`~langchain_graphrag_milvus.milvus.graph_memory.release_free_memory`
  (glibc ``malloc_trim``), which the store calls after it builds the graph from Milvus and after
  it warms the linker: what a store's process keeps resident after these builds.
* ``RSS from rows``: the store's own rebuild path (:func:`~langchain_graphrag_milvus.milvus.graph_read.read_graph`:
  the rows, the graph and the names; then the name table and the linker after one query), fed by
  rows decoded from serialized pages as a client decodes them off the wire (new objects on
  every page; the pages themselves stand for Milvus and are allocated before the baseline),
  then released as the store releases: what a process that rebuilds its graph from Milvus keeps
  resident. (The ``RSS`` columns above include what the synthetic generator's own inputs leave
  behind.)
* ``RSS reopened``: a new process opens the same state saved as a store saves it beside a Lite
  database (``graph_path``, :func:`~langchain_graphrag_milvus.milvus.graph_saved.save_index`:
  graph, name table, fuzzy index), makes the linker and answers one query, then releases freed
  memory: what a process that opens an existing store keeps resident (the arrays are
  memory-mapped, so only the pages it touched count).

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
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from scale_corpus import make_names  # noqa: E402
from synthetic import generate  # noqa: E402

from langchain_graphrag_milvus.graph import GraphIndex  # noqa: E402
from langchain_graphrag_milvus.graph.ids import key_to_id  # noqa: E402
from langchain_graphrag_milvus.milvus.graph_memory import MemoryReport, release_free_memory, report_of  # noqa: E402
from langchain_graphrag_milvus.milvus.graph_read import read_graph  # noqa: E402
from langchain_graphrag_milvus.milvus.graph_saved import save_index, saved_names  # noqa: E402
from langchain_graphrag_milvus.retrieval.graph_linker import graph_linker  # noqa: E402
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


class PagedRows:
    """Rows kept as serialized pages, decoded page by page into new dicts (a ``StoreReads.iterate`` stand-in)."""

    def __init__(self, rows: Any, names: list[str], page: int = 4096) -> None:
        rel = [
            {"pk": key_to_id(int(r)), "subject_id": key_to_id(int(s)), "object_id": key_to_id(int(o)), "passage_ids": p}
            for r, s, o, p in zip(rows.relation_keys, rows.subject_keys, rows.object_keys, rows.passage_ids)
        ]
        keys = np.unique(np.concatenate([np.asarray(rows.subject_keys), np.asarray(rows.object_keys)]))
        ent = [{"pk": key_to_id(int(k)), "text": names[i % len(names)], "synonym_ids": []} for i, k in enumerate(keys)]
        self.pages = {
            kind: [json.dumps(items[i : i + page]).encode() for i in range(0, len(items), page)]
            for kind, items in (("relations", rel), ("entities", ent))
        }

    def iterate(self, kind: str, output_fields: Any, batch_size: int = 4096, *, filter_expr: str | None = None) -> Any:
        """Every row of ``kind``, decoded from its page when reached (``filter_expr`` must be None)."""
        assert filter_expr is None
        for page in self.pages[kind]:
            yield from json.loads(page)


def from_rows(paged: PagedRows) -> float:
    """RSS growth (bytes, after the store's release) of the store's rebuild from ``paged`` and one query."""
    gc.collect()
    release_free_memory()
    before = rss_bytes()
    graph, names = read_graph(paged)  # type: ignore[arg-type]  # the store's rebuild (GraphCache._read_graph)
    table = NameTable.for_names(names)
    linker_names = table.linker_names()
    linker = graph_linker(lambda: graph)(linker_names)
    linker.find(f"Where was {linker_names.names[0]} born, and who knew {linker_names.names[-1]}?")
    gc.collect()
    release_free_memory()
    grown = rss_bytes() - before
    return grown


def reopened(directory: str) -> float:
    """RSS growth (bytes, after a release) of opening the state saved in ``directory`` and answering one query."""
    gc.collect()
    release_free_memory()
    before = rss_bytes()
    path = Path(directory)
    graph = GraphIndex.load(path)
    table = saved_names(path)
    assert table is not None
    names = table.names()
    linker_names = table.linker_names()
    linker = graph_linker(lambda: graph)(linker_names)
    first, last = names[key_to_id(int(graph.entities.keys[0]))], names[key_to_id(int(graph.entities.keys[-1]))]
    linker.find(f"Where was {first} born, and who knew {last}?")
    gc.collect()
    release_free_memory()
    return rss_bytes() - before


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
    parser.add_argument("--save", help=argparse.SUPPRESS)  # with --one: save the state there
    parser.add_argument("--reopen", help=argparse.SUPPRESS)  # open a saved state, print its RSS growth
    parser.add_argument("--rows", type=int, help=argparse.SUPPRESS)  # the rebuild from rows, print its RSS growth
    args = parser.parse_args(argv)
    if args.rows:
        from_rows(PagedRows(*build_inputs(5_000, 0, args.mean_degree)))  # imports and first-use caches
        paged = PagedRows(*build_inputs(args.rows, 0, args.mean_degree))
        gc.collect()
        print(json.dumps({"rss_rows": from_rows(paged)}))
        return
    if args.reopen:
        warm = Path(args.reopen) / "warm"
        reopened(str(warm))  # imports and first-use caches, so that the measured open pays for none
        print(json.dumps({"rss_reopened": reopened(str(Path(args.reopen) / "state"))}))
        return
    if args.one:
        fresh_build(5_000)  # imports and first-use caches, so that no size pays for them
        gc.collect()
        r = measure(args.one, args.mean_degree)
        rep = r.pop("report")
        if args.save:
            for name, n in (("warm", 5_000), ("state", args.one)):
                state = fresh_build(n, mean_degree=args.mean_degree)
                save_index(state["graph"], Path(args.save) / name, {"bench": name}, state["table"])
                del state
        print(json.dumps({**r, "items": rep.items, "array_bytes": rep.array_bytes}))
        return
    results = []
    for n in args.sizes:  # each size in a fresh process: RSS growth depends on what the heap did before
        with tempfile.TemporaryDirectory(prefix="bench_memory_") as saved:
            cmd = [sys.executable, __file__, "--one", str(n), "--mean-degree", str(args.mean_degree), "--save", saved]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            r = json.loads(out.stdout)
            cmd = [sys.executable, __file__, "--reopen", saved]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            r.update(json.loads(out.stdout))
        cmd = [sys.executable, __file__, "--rows", str(n), "--mean-degree", str(args.mean_degree)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        r.update(json.loads(out.stdout))
        r["report"] = MemoryReport(r.pop("items"), 0, n, r.pop("array_bytes"))
        results.append(r)
    mib = 2**20
    print(
        "| relations | entities | report MiB/M | tracemalloc MiB/M | RSS MiB/M | RSS released MiB/M "
        "| RSS from rows MiB/M | RSS reopened MiB/M | report/traced | nbytes MiB/M |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        rep, m = r["report"], r["n"] / 1e6
        print(
            f"| {r['n']} | {r['entities']} | {rep.total / mib / m:.0f} | {r['traced'] / mib / m:.0f} | "
            f"{r['rss'] / mib / m:.0f} | {r['rss_released'] / mib / m:.0f} | {r['rss_rows'] / mib / m:.0f} | "
            f"{r['rss_reopened'] / mib / m:.0f} | "
            f"{rep.total / r['traced']:.2f} | "
            f"{rep.array_bytes / mib / m:.0f} |"
        )
    last = results[-1]["report"]
    print(f"\nitems at {results[-1]['n']} relations (MiB per million relations):")
    m = results[-1]["n"] / 1e6
    for name, size in sorted(last.items.items(), key=lambda i: -i[1]):
        print(f"  {name:16s} {size / mib / m:7.1f}")


if __name__ == "__main__":
    main()
