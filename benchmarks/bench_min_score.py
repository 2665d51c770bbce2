"""Is there a safe default relevance cut-off (``min_score``)? Similarity of gold vs other passages.

For each dev question of a data set, the MiniLM cosine similarity of its gold passages to the
question, against the passages naive search puts in its top 5 that are not gold. A cut-off is
safe only if gold passages sit above the others; in multi-hop questions the second hop is
often the least similar passage of all, so a cut-off removes gold before junk.

    .venv/bin/python benchmarks/bench_min_score.py musique100 hotpotqa100   # GRAPHRAG_DATA: another data folder
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

DATA = Path(os.environ.get("GRAPHRAG_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main(names: list[str]) -> None:
    emb = LocalMiniLMEmbeddings()
    for name in names:
        ps = [json.loads(line) for line in open(DATA / name / "passages.jsonl", encoding="utf-8")]
        qs = [json.loads(line) for line in open(DATA / name / "questions_dev.jsonl", encoding="utf-8")]
        texts = [f"{p['title']}\n{p['text']}" if p.get("title") else p["text"] for p in ps]
        passages = np.asarray(emb.embed_documents(texts), np.float32)
        questions = np.asarray(emb.embed_documents([q["question"] for q in qs]), np.float32)
        passages /= np.linalg.norm(passages, axis=1, keepdims=True)
        questions /= np.linalg.norm(questions, axis=1, keepdims=True)
        sims = questions @ passages.T
        index = {p["id"]: i for i, p in enumerate(ps)}
        gold, least, other = [], [], []
        for qi, q in enumerate(qs):
            golds = sorted((float(sims[qi, index[g]]) for g in q["gold_passage_ids"] if g in index), reverse=True)
            gold += golds
            least.append(golds[-1])
            other += [float(sims[qi, i]) for i in np.argsort(-sims[qi])[:5] if ps[i]["id"] not in q["gold_passage_ids"]]
        g, lst, o = np.asarray(gold), np.asarray(least), np.asarray(other)
        print(
            f"{name}: gold median {np.median(g):.3f} (p10 {np.percentile(g, 10):.3f}); least similar gold per "
            f"question median {np.median(lst):.3f}; non-gold in the naive top 5 median {np.median(o):.3f}"
        )
        for cut in (0.2, 0.3, 0.4):
            print(
                f"  min_score={cut}: drops {100 * np.mean(g < cut):.1f}% of gold passages "
                f"({100 * np.mean(lst < cut):.1f}% of questions lose one), {100 * np.mean(o < cut):.1f}% of the others"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["musique100", "hotpotqa100"])
