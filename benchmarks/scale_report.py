"""The tables of ``bench_scale.py`` from its raw results (and the statistics behind them)."""

from __future__ import annotations

from typing import Any

from scale_corpus import percentile
from synthetic import print_table

GIB = 1 << 30
MEMORY_LIMIT = 24 * GIB
TARGET_PASSAGES = 1_000_000


def summarize(splits: list[dict[str, Any]]) -> dict[str, float]:
    """p50/p99 (ms) of each timed part of a list of per-query splits, mean calls and recall."""
    out: dict[str, float] = {"n": float(len(splits))}
    for part in ("total", "library", "milvus", "embed"):
        values = [s[part] * 1000 for s in splits]
        out[f"{part}_p50"], out[f"{part}_p99"] = percentile(values, 50), percentile(values, 99)
    out["calls_p50"] = percentile([s["calls"] for s in splits], 50)
    out["waves_p50"] = percentile([s.get("waves", float("nan")) for s in splits], 50)
    out["waves_max"] = max((s.get("waves", 0) for s in splits), default=0)
    recalls = [s["recall"] for s in splits if "recall" in s]
    out["recall"] = sum(recalls) / len(recalls) if recalls else float("nan")
    return out


def share(split: dict[str, Any], part: str) -> float:
    """``split[part]`` as a share of its total (0 when the total is 0)."""
    return split[part] / split["total"] if split.get("total") else 0.0


def memory_estimate(rows: int, passages: int, rss_delta: int, target: int = TARGET_PASSAGES) -> dict[str, float]:
    """Server memory per row, and the rows and memory at ``target`` passages (linear in rows)."""
    per_row = rss_delta / rows if rows else float("nan")
    target_rows = rows / passages * target if passages else float("nan")
    return {"per_row": per_row, "target_rows": target_rows, "target_bytes": per_row * target_rows}


def _waves(split: dict[str, Any]) -> str:
    return f"{split['waves_p50']:.0f} / {split['waves_max']:.0f}"


def _ms(value: float) -> str:
    return "n/a" if value != value else f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _pair(stats: dict[str, float], part: str) -> str:
    return f"{_ms(stats[part + '_p50'])} / {_ms(stats[part + '_p99'])}"


def query_rows(results: dict[str, Any], ref: str) -> list[dict[str, Any]]:
    rows = []
    for entry in results["sizes"]:
        relations = entry["new"].get("counts", {}).get("relations", 0)
        for label, data in (("working tree", entry["new"]), (f"today's ({ref})", entry["baseline"])):
            if "queries" not in data:
                rows.append({"label": f"{entry['size']:,} ({relations:,})", "who": label, "error": data.get("error")})
                continue
            graph, naive = summarize(data["queries"]["graph"]), summarize(data["queries"]["naive"])
            who = label + (" (own ingest)" if data.get("fallback") else "")
            rows.append({"label": f"{entry['size']:,} ({relations:,})", "who": who, "graph": graph, "naive": naive})
    return rows


def _cell(fn: Any, *, error: bool = False) -> Any:
    """``fn(row)``, or for a failed row the error (``error=True``) or nothing."""
    return lambda r: fn(r) if "graph" in r else ("error: " + str(r.get("error"))[:60] if error else "")


def print_queries(results: dict[str, Any], ref: str) -> None:
    print("\n### Per query (k=5, default graph retriever, no LLM; naive = vector search over passages)\n")
    cols = [
        ("passages (relations)", lambda r: r["label"]),
        ("code", lambda r: r["who"]),
        ("graph p50 / p99 ms", _cell(lambda r: _pair(r["graph"], "total"), error=True)),
        ("naive p50 / p99 ms", _cell(lambda r: _pair(r["naive"], "total"))),
        ("graph ÷ naive (p50)", _cell(lambda r: f"{r['graph']['total_p50'] / r['naive']['total_p50']:.1f}×")),
        ("graph library p50 / p99 ms", _cell(lambda r: _pair(r["graph"], "library"))),
        ("graph Milvus p50 ms", _cell(lambda r: _ms(r["graph"]["milvus_p50"]))),
        ("graph Milvus calls p50", _cell(lambda r: f"{r['graph']['calls_p50']:.0f}")),
        ("graph Milvus waves p50 / max", _cell(lambda r: _waves(r["graph"]))),
        ("R@5 graph / naive", _cell(lambda r: f"{100 * r['graph']['recall']:.1f} / {100 * r['naive']['recall']:.1f}")),
    ]
    print_table(query_rows(results, ref), cols)


def print_ingest(results: dict[str, Any], ref: str) -> None:
    print("\n### Bulk ingest, free embedding: the same slice into fresh prefixes\n")
    rows = []
    new_rate = None
    for label in ("new", "baseline"):
        data = results["slice"].get(label, {"error": "not measured yet"})
        if "ingest" not in data:
            rows.append({"who": label, "err": data.get("error", "?")})
            continue
        split = data["ingest"]
        rate = data["passages"] / split["total"]
        new_rate = rate if label == "new" else new_rate
        rows.append(
            {
                "who": "working tree" if label == "new" else f"today's ({ref})",
                "n": data["passages"],
                "split": split,
                "rate": rate,
            }
        )
    base_rate = rows[-1].get("rate")
    cols = [
        ("code", lambda r: r["who"]),
        ("passages", lambda r: f"{r['n']:,}" if "n" in r else "error: " + r["err"][:60]),
        ("seconds", lambda r: f"{r['split']['total']:.1f}" if "split" in r else ""),
        ("passages/s", lambda r: f"{r['rate']:.0f}" if "rate" in r else ""),
        ("÷ today's", lambda r: f"{r['rate'] / base_rate:.2f}×" if "rate" in r and base_rate else ""),
        ("library share", lambda r: f"{100 * share(r['split'], 'library'):.0f}%" if "split" in r else ""),
        ("Milvus share", lambda r: f"{100 * share(r['split'], 'milvus'):.0f}%" if "split" in r else ""),
        ("embedding share", lambda r: f"{100 * share(r['split'], 'embed'):.0f}%" if "split" in r else ""),
    ]
    print_table(rows, cols)


def print_loads(results: dict[str, Any]) -> None:
    print("\n### Each size's load (working tree, one add_records call) and its first query\n")
    rows = [e for e in results["sizes"] if "ingest" in e["new"]]
    cols = [
        ("passages", lambda e: f"{e['size']:,}"),
        ("rows (entities+relations+passages)", lambda e: f"{sum(e['new']['counts'].values()):,}"),
        ("index", lambda e: e["index"]),
        ("load s", lambda e: f"{e['new']['ingest']['total']:.0f}"),
        ("passages/s", lambda e: f"{e['size'] / e['new']['ingest']['total']:.0f}"),
        ("library share", lambda e: f"{100 * share(e['new']['ingest'], 'library'):.0f}%"),
        ("graph in memory after load", lambda e: str(e["new"].get("in_memory_after_load"))),
        ("first query ms", lambda e: _ms(1000 * e["new"].get("first_query", {}).get("total", float("nan")))),
        ("its iterator pages (rebuild reads)", lambda e: str(e["new"].get("first_query", {}).get("iterator_pages"))),
    ]
    print_table(rows, cols)


def top_calls(*splits: dict[str, Any] | None, n: int = 4) -> str:
    """The ``n`` client methods that took the most time over ``splits``: "count× name (seconds)"."""
    merged: dict[str, list[float]] = {}
    for split in splits:
        for name, (count, seconds) in (split or {}).get("by_name", {}).items():
            entry = merged.setdefault(name, [0, 0.0])
            entry[0] += count
            entry[1] += seconds
    ranked = sorted(merged.items(), key=lambda kv: -kv[1][1])[:n]
    return ", ".join(f"{int(c)}× {name} ({s:.2f})" for name, (c, s) in ranked)


def print_cold(results: dict[str, Any], ref: str) -> None:
    last = results["sizes"][-1]
    if "cold" not in last:
        return
    print(f"\n### Cold start at {last['size']:,} passages (a new process each)\n")
    rows = []
    for label, data in (
        ("empty graph_path: rebuild from Milvus + save", last["rebuild"]),
        ("saved graph_path", last["cold"]),
    ):
        if "graph_ready" in data:
            rows.append(
                {
                    "label": label,
                    "graph": data["graph_ready"],
                    "first": data["first_answer"],
                    "process": data["process_to_first_answer"],
                    "import": data["import"],
                }
            )
    base = last["baseline"].get("graph_build")
    if base:
        rows.append({"label": f"today's ({ref}): rebuild from Milvus", "graph": base})
    cols = [
        ("open", lambda r: r["label"]),
        ("graph ready s", lambda r: f"{r['graph']['total']:.2f}"),
        ("its Milvus s", lambda r: f"{r['graph']['milvus']:.2f}"),
        ("first answer s", lambda r: f"{r['first']['total']:.2f}" if "first" in r else ""),
        ("its Milvus s ", lambda r: f"{r['first']['milvus']:.2f}" if "first" in r else ""),
        (
            "graph work to first answer s (graph ready + first answer's library)",
            lambda r: f"{r['graph']['total'] + r['first']['library']:.2f}" if "first" in r else "",
        ),
        (
            "process start → first answer s (import)",
            lambda r: f"{r['process']:.1f} ({r['import']:.1f})" if "process" in r else "",
        ),
        ("Milvus calls: count × name (s)", lambda r: top_calls(r["graph"], r.get("first"))),
    ]
    print_table(rows, cols)


def print_memory(results: dict[str, Any]) -> None:
    print("\n### Server memory (RSS of the server process; rows of earlier sizes were dropped)\n")
    rows = []
    for e in results["sizes"]:
        start = e.get("rss_server_start")
        if start is None or e.get("rss_after") is None or "counts" not in e["new"]:
            continue
        n_rows = sum(e["new"]["counts"].values())
        held = max(e["rss_after"], e.get("rss_end") or 0) - start
        rows.append({"e": e, "rows": n_rows, "est": memory_estimate(n_rows, e["size"], held)})
    if not rows:
        print("(unknown: the server's pid is not known; pass --server-pid with --uri)")
        return
    cols = [
        ("passages", lambda r: f"{r['e']['size']:,}"),
        ("rows", lambda r: f"{r['rows']:,}"),
        ("RSS: idle server / before load / after load / after queries GiB", _rss_cell),
        ("bytes per row (max after − idle) / rows", lambda r: f"{r['est']['per_row']:,.0f}"),
        ("client process max RSS GiB", lambda r: f"{r['e']['new'].get('client_max_rss_kib', 0) / (1 << 20):.2f}"),
    ]
    print_table(rows, cols)
    last = rows[-1]
    est = last["est"]
    client = client_estimate([(r["e"]["size"], r["e"]["new"].get("client_max_rss_kib", 0) * 1024) for r in rows])
    total = est["target_bytes"] + client
    verdict = "fits" if total < 0.8 * MEMORY_LIMIT else "does NOT fit"
    print(
        f"\n1M passages (linear from {last['e']['size']:,}): ≈{est['target_rows'] / 1e6:.1f}M rows × "
        f"{est['per_row']:,.0f} B ≈ {est['target_bytes'] / GIB:.1f} GiB on the server + ≈{client / GIB:.1f} GiB "
        f"in the client process ≈ {total / GIB:.1f} GiB: {verdict} in 24 GiB (keeping 20% for the OS and the "
        f"other processes). Not run: its load alone would take ≈{load_minutes(last['e']):.0f} min at the rate "
        "measured above."
    )


def load_minutes(entry: dict[str, Any], target: int = TARGET_PASSAGES) -> float:
    """Minutes to load ``target`` passages at the rate of ``entry``'s load."""
    seconds = entry["new"].get("ingest", {}).get("total")
    return target / (entry["size"] / seconds) / 60 if seconds else float("nan")


def _rss_cell(row: dict[str, Any]) -> str:
    e = row["e"]
    values = [e.get("rss_server_start"), e.get("rss_before"), e.get("rss_after"), e.get("rss_end")]
    return " / ".join("?" if v is None else f"{v / GIB:.2f}" for v in values)


def client_estimate(points: list[tuple[int, float]], target: int = TARGET_PASSAGES) -> float:
    """The client's memory at ``target`` passages: a line through the smallest and largest measured sizes.

    With one size, proportional to it (an overestimate: the interpreter's fixed part scales too).
    """
    points = sorted(points)
    (n0, m0), (n1, m1) = points[0], points[-1]
    if n1 == n0:
        return m1 * target / n1 if n1 else float("nan")
    slope = max(0.0, (m1 - m0) / (n1 - n0))
    return m1 + slope * (target - n1)


def print_report(results: dict[str, Any], ref: str) -> None:
    """All tables."""
    print(f"\n## bench_scale: {results['args']['sizes']} passages, {results['seconds'] / 60:.1f} min\n")
    print_queries(results, ref)
    print_loads(results)
    if "slice" in results:
        print_ingest(results, ref)
    print_cold(results, ref)
    print_memory(results)
