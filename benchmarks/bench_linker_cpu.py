"""The store's linker (``graph_linker``) over musique100's given triplets: a digest of its answers and CPU per question.

Builds the graph and the name table of musique100's given triplets (16,245 entities), makes the
store's linker and runs ``find`` on the 51 dev questions (7 rounds after a warm one; CPU time,
``time.process_time``). Compare two checkouts by running it in each, interleaved::

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_linker_cpu.py

Prints one JSON line: ``answers`` (SHA-1 of every question's linked names: equal means the same
answers), ``ms_per_q_min`` / ``ms_per_q_median`` over the rounds.
"""

import gc
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ids import id_to_key
from langchain_graphrag_milvus.retrieval.graph_linker import graph_linker
from langchain_graphrag_milvus.text.name_map import NameMap
from langchain_graphrag_milvus.text.name_table import NameTable
from langchain_graphrag_milvus.text.names import entity_id, relation_id

data = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique100"
rk, sk, ok, pids, names = [], [], [], [], {}
for line in (data / "passages.jsonl").read_text().splitlines():
    p = json.loads(line)
    for t in p.get("triplets") or []:
        if len(t) != 3 or not all(isinstance(x, str) and x.strip() for x in t):
            continue
        s, r, o = t
        es, eo = entity_id(s), entity_id(o)
        names.setdefault(es, s)
        names.setdefault(eo, o)
        rk.append(id_to_key(relation_id(s, r, o)))
        sk.append(id_to_key(es))
        ok.append(id_to_key(eo))
        pids.append([p["id"]])
graph = GraphIndex.from_relations(
    relation_keys=np.array(rk, np.uint64),
    subject_keys=np.array(sk, np.uint64),
    object_keys=np.array(ok, np.uint64),
    passage_ids=pids,
)
table = NameTable.for_names(NameMap.from_items(names.items()))
linker = graph_linker(lambda: graph)(table.linker_names())
qs = [json.loads(line)["question"] for line in (data / "questions_dev.jsonl").read_text().splitlines()]
answers = [linker.find(q) for q in qs]  # warm
gc.collect()
best = []
for _ in range(7):
    t0 = time.process_time()
    for q in qs:
        linker.find(q)
    best.append((time.process_time() - t0) / len(qs) * 1000)
print(
    json.dumps(
        {
            "answers": hashlib.sha1(json.dumps(answers).encode()).hexdigest(),
            "n_linked": sum(map(len, answers)),
            "ms_per_q_min": round(min(best), 3),
            "ms_per_q_median": round(sorted(best)[3], 3),
            "entities": graph.n_entities,
        }
    )
)
