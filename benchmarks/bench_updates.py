"""Benchmark: updating 1% of the documents of a ~100k-relation graph vs rebuilding.

    python benchmarks/bench_updates.py                        # Milvus Lite in a temp dir
    python benchmarks/bench_updates.py --uri http://127.0.0.1:19530 --relations 100000
    python benchmarks/bench_updates.py --server               # start a server from the wheel

The corpus comes from ``synthetic.generate`` (Zipf-like entities, ~9 relations per
passage). 1% of the documents get a new version (half of their triplets replaced), and
we time, in the same run:

* ``upsert_documents`` of the new versions (unlink the stale facts, delete what only
  they supported, embed and write the new ones, update the graph index in place);
* rebuilding the graph index from Milvus alone (what a store without in-place updates
  must do after a change);
* re-ingesting the whole corpus under a new prefix (what retrievers without upsert/delete
  force on their users), skipped with ``--no-reingest``.

Embeddings are deterministic fakes (64 dims): the cost measured is the store's, not a
model's. The result is checked: counts and graph after the update equal a rebuild.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import generate  # noqa: E402

from langchain_graphrag_milvus import MilvusGraphStore  # noqa: E402


def corpus(n_relations: int, seed: int = 5) -> list[Document]:
    syn = generate(n_relations, seed=seed)
    docs: dict[str, list[list[str]]] = {}
    for i, (s, o, pids) in enumerate(zip(syn.subject_keys.tolist(), syn.object_keys.tolist(), syn.passage_ids)):
        docs.setdefault(pids[0], []).append([f"entity {s:x}", f"relation kind {i % 97}", f"entity {o:x}"])
    return [
        Document(id=pid, page_content=f"Passage {pid} with {len(t)} facts.", metadata={"triplets": t})
        for pid, t in docs.items()
    ]


def new_versions(docs: list[Document], share: float, seed: int = 9) -> list[Document]:
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(docs), max(1, int(len(docs) * share)), replace=False)
    out = []
    for i in picked.tolist():
        old = docs[i]
        triplets = old.metadata["triplets"]
        keep = triplets[: len(triplets) // 2]
        fresh = [[t[0], f"new relation {j}", f"new entity {old.id}-{j}"] for j, t in enumerate(triplets[len(keep) :])]
        out.append(
            Document(id=old.id, page_content=old.page_content + " (revised)", metadata={"triplets": keep + fresh})
        )
    return out


def signature(graph) -> set[tuple]:
    ents, rels = graph.entities.keys, graph.relations.keys
    return {
        (
            int(rels[r]),
            int(ents[graph.rel_subject[r]]),
            int(ents[graph.rel_object[r]]),
            tuple(sorted(graph.passages.ids[p] for p in graph.rel_pas.row(r))),
        )
        for r in range(graph.n_relations)
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--relations", type=int, default=100_000)
    parser.add_argument("--share", type=float, default=0.01, help="fraction of documents updated")
    parser.add_argument("--uri", help="Milvus URI (default: Milvus Lite in a temporary directory)")
    parser.add_argument("--server", action="store_true", help="start a Milvus server from the wheel")
    parser.add_argument("--no-reingest", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    server = None
    uri = args.uri or str(Path(tempfile.mkdtemp(prefix="bench-updates-")) / "milvus.db")
    if args.server:
        sys.path.insert(0, str(ROOT / "tests"))
        from milvus_server import MilvusServerHandle

        server = MilvusServerHandle(Path(tempfile.mkdtemp(prefix="bench-milvus-")))
        uri = server.start()
    try:
        docs = corpus(args.relations)
        embedding = DeterministicFakeEmbedding(size=64)
        store = MilvusGraphStore(embedding, uri=uri, collection_prefix="bench_updates", batch_size=2048)
        store.drop()
        started = time.perf_counter()
        report = store.add_documents(docs)
        ingest_s = time.perf_counter() - started
        print(f"corpus: {report}", file=sys.stderr)
        _ = store.graph
        updates = new_versions(docs, args.share)

        started = time.perf_counter()
        up = store.upsert_documents(updates)
        update_s = time.perf_counter() - started
        print(f"update: {up}", file=sys.stderr)
        incremental = signature(store.graph)

        started = time.perf_counter()
        rebuilt = store.rebuild_graph()
        rebuild_s = time.perf_counter() - started
        assert signature(rebuilt) == incremental, "the in-place update differs from a rebuild"
        counts = store.counts()
        assert counts["relations"] == rebuilt.n_relations

        rows = [
            {"operation": f"upsert {len(updates)} documents ({100 * args.share:g}%)", "seconds": update_s},
            {"operation": "rebuild the graph index from Milvus", "seconds": rebuild_s},
        ]
        if not args.no_reingest:
            fresh = MilvusGraphStore(embedding, uri=uri, collection_prefix="bench_updates_full", batch_size=2048)
            fresh.drop()
            by_id = {u.id: u for u in updates}
            final = [by_id.get(d.id, d) for d in docs]
            started = time.perf_counter()
            fresh.add_documents(final)
            reingest_s = time.perf_counter() - started
            assert fresh.counts() == counts, (fresh.counts(), counts)
            assert signature(fresh.graph) == incremental
            rows.append({"operation": "re-ingest the whole corpus", "seconds": reingest_s})
            fresh.drop()
            fresh.close()
        for row in rows:
            row["vs_update"] = row["seconds"] / update_s
        print(
            f"\n{counts['relations']:,} relations, {counts['entities']:,} entities, {counts['passages']:,} passages "
            f"on {uri} (first ingest {ingest_s:.1f}s)\n"
        )
        print("| operation | seconds | × the update |")
        print("|---|---|---|")
        for row in rows:
            print(f"| {row['operation']} | {row['seconds']:.2f} | {row['vs_update']:.1f}x |")
        if args.json:
            args.json.write_text(json.dumps({"counts": counts, "rows": rows}, indent=1))
        store.drop()
        store.close()
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
