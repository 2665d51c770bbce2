"""Why do given (LLM) triplets rank worse than offline (spaCy) ones?  Numbers on musique100 dev.

Compares, per graph source, the passages' triplets (no Milvus needed: the given triplets
come from the file, the offline ones from the extraction cache, parsing only on a miss):

* passages with no triplet, and passages whose title is no entity of their own triplets
  (no title link: a question naming the passage's subject cannot reach it through the graph);
* how many of a passage's named entities (spaCy NER: the offline rules' ``mentions``) are
  entities of its triplets;
* per dev question, the names the offline linker finds in it (over each graph's entity
  names) and how many gold passages hold one of them.

    .venv/bin/python benchmarks/diag_llm_graph.py [--cache-dir .cache/langchain-graphrag-milvus]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_graphrag_milvus.cli.evaluation import load_questions  # noqa: E402
from langchain_graphrag_milvus.cli.main import DEFAULT_CACHE  # noqa: E402
from langchain_graphrag_milvus.ingest.extract import TripletCache, extract_texts  # noqa: E402
from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor  # noqa: E402
from langchain_graphrag_milvus.ingest.records import Triplet, iter_jsonl  # noqa: E402
from langchain_graphrag_milvus.ingest.supplement import merge_supplement  # noqa: E402
from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker  # noqa: E402
from langchain_graphrag_milvus.text.names import clean_text, entity_key  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "musique100"


def _ents(triplets: Sequence[Sequence[str]]) -> set[str]:
    return {entity_key(str(t[i])) for t in triplets if len(t) == 3 for i in (0, 2) if clean_text(str(t[i]))}


def _pct(n: int, d: int) -> str:
    return f"{n} ({100 * n / d:.1f}%)" if d else "0"


def main(argv: list[str] | None = None) -> int:
    """Print the diagnosis as a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=ROOT / DEFAULT_CACHE)
    args = parser.parse_args(argv)
    rows = [row for _, row in iter_jsonl(DATA / "passages.jsonl")]
    cache = TripletCache(args.cache_dir / "triplets.sqlite")
    texts = [f"{r['title']}\n{r['text']}" for r in rows]
    titles_ = [r["title"] for r in rows]
    offline = extract_texts(texts, create_offline_triplet_extractor(), cache, max_concurrency=1, titles=titles_)
    links = extract_texts(
        texts, create_offline_triplet_extractor(links_only=True), cache, max_concurrency=1, titles=titles_
    )
    given = [[Triplet(*map(clean_text, map(str, t))) for t in r["triplets"] if len(t) == 3] for r in rows]
    graphs = {
        "given (GPT-3.5)": given,
        "offline (spaCy)": [list(o[0] or []) for o in offline],
        "given+offline_links": [
            merge_supplement(g, [Triplet(*t) for t in (lk[0] or [])]) for g, lk in zip(given, links)
        ],
    }
    titles = [entity_key(t) for t in titles_]
    mentions = [{entity_key(t[2]) for t in (lk[0] or [])} for lk in links]
    questions = load_questions(DATA / "questions_dev.jsonl")
    index = {str(r["id"]): i for i, r in enumerate(rows)}
    print("| measure | " + " | ".join(graphs) + " |")  # noqa: T201
    print("|---" * (len(graphs) + 1) + "|")  # noqa: T201
    n = len(rows)
    stats: dict[str, list[str]] = {}
    for name, per in graphs.items():
        ents = [_ents(t) for t in per]
        all_names = {clean_text(str(t[i])) for ts in per for t in ts for i in (0, 2)}
        linker = EntityLinker(sorted(all_names))
        gold_reached, linked, no_link_q = 0, [], 0
        gold_total = 0
        for q in questions:
            found = {entity_key(x) for x in linker.find(q.question)}
            linked.append(len(found))
            no_link_q += not found
            for g in q.gold_passage_ids:
                gold_total += 1
                gold_reached += bool(found & ents[index[g]])
        gold_idx = [index[g] for q in questions for g in q.gold_passage_ids]
        stats[name] = [
            str(sum(len(t) for t in per)),
            str(len(set().union(*ents))),
            _pct(sum(not t for t in per), n),
            _pct(sum(titles[i] not in ents[i] for i in range(n)), n),
            _pct(sum(titles[i] not in ents[i] for i in gold_idx), len(gold_idx)),
            f"{statistics.mean(len(ents[i] & mentions[i]) / len(mentions[i]) for i in range(n) if mentions[i]):.2f}",
            f"{statistics.mean(linked):.1f}",
            _pct(no_link_q, len(questions)),
            _pct(gold_reached, gold_total),
        ]
    labels = [
        "triplets",
        "distinct entities",
        "passages without triplets",
        "passages whose title is no entity of their triplets",
        "gold passages whose title is no entity of their triplets",
        "share of a passage's NER names that are entities of its triplets (mean)",
        "names the linker finds per question (mean)",
        "questions with no linked name",
        "gold passages holding a linked query name",
    ]
    for i, label in enumerate(labels):
        print(f"| {label} | " + " | ".join(stats[g][i] for g in graphs) + " |")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
