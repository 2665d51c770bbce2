"""Offline evaluation: Recall@k of retrievers on multi-hop questions, and LLM pool statistics.

Data format (that of ``musique100``): a passages JSONL (``{"id", "title", "text",
"triplets"}``) and a questions JSONL (``{"id", "question", "hops", "gold_passage_ids", ...}``).
Recall@k = |gold ∩ top-k| / |gold|, averaged over questions (as in the HippoRAG papers).

The pool statistics describe what an LLM reranker would be shown: the retriever runs with
a *recording* reranker that keeps its input and chooses nothing (so no LLM is called and
the ranking falls back to the no-LLM order). Coverage is the fraction of gold passages
that some relation of the pool leads to.

Example:
    .. code-block:: python

        from langchain_graphrag_milvus.cli.evaluation import evaluate, load_questions

        report = evaluate(store, load_questions("questions_dev.jsonl"))
        print(report.table())
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from tqdm.auto import tqdm

from langchain_graphrag_milvus.ingest.records import iter_jsonl
from langchain_graphrag_milvus.retrieval.rerank import create_rerank_prompt, format_relations
from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever
from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["Question", "EvalReport", "load_questions", "recall_at", "evaluate", "default_methods", "losses"]

KS = (2, 5)

#: The methods the others are compared with, question by question (those present in a run).
BASELINES = ("naive", "hybrid")


@dataclass(frozen=True)
class Question:
    """A question with the ids of the passages that together support its answer."""

    id: str
    question: str
    gold_passage_ids: tuple[str, ...]
    hops: int | None = None
    answer: str | None = None
    type: str | None = None


def load_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    """Read a questions JSONL file (the first ``limit`` questions if given)."""
    questions = []
    for _, row in iter_jsonl(path):
        questions.append(
            Question(
                id=str(row["id"]),
                question=str(row["question"]),
                gold_passage_ids=tuple(str(g) for g in row["gold_passage_ids"]),
                hops=row.get("hops"),
                answer=row.get("answer"),
                type=str(row["type"]) if row.get("type") else None,
            )
        )
        if limit is not None and len(questions) >= limit:
            break
    return questions


def recall_at(ranked_ids: Sequence[str], gold: Sequence[str], k: int) -> float:
    """|gold ∩ top-k| / |gold| (0 for an empty gold set)."""
    if not gold:
        return 0.0
    return len(set(ranked_ids[:k]) & set(gold)) / len(set(gold))


@dataclass
class EvalReport:
    """Recalls per method (overall and per hop count) and LLM pool statistics."""

    methods: dict[str, dict[str, Any]] = field(default_factory=dict)
    pools: dict[str, dict[str, float]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    per_question: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    @property
    def losses(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Each method's questions lost against each baseline (:func:`losses`)."""
        return losses(self.per_question)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{"methods", "pool", "pools", "losses", "per_question", "config"}``."""
        return {
            "methods": self.methods,
            "pool": self.pools.get("graph", {}),
            "pools": self.pools,
            "losses": self.losses,
            "per_question": self.per_question,
            "config": self.config,
        }

    def _keys(self, group: str) -> list[str]:
        keys = {key for m in self.methods.values() for key in m.get(group, {})}
        return sorted(keys, key=lambda key: (not key.isdigit(), int(key) if key.isdigit() else 0, key))

    def table(self) -> str:
        """Markdown tables of the recalls (overall, per hop count, per question type) and the pools."""
        groups = [("by_hops", h, f"{h}-hop") for h in self._keys("by_hops")]
        groups += [("by_type", t, t) for t in self._keys("by_type")]
        if len(groups) == 1:  # one hop count and no types: the overall columns say it all
            groups = []
        head = ["method", *(f"R@{k}" for k in KS), *(f"R@{k} {label}" for _, _, label in groups for k in KS)]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for name, m in self.methods.items():
            cells = [name, *(f"{100 * m[f'recall@{k}']:.1f}" for k in KS)]
            cells += [
                f"{100 * m[group][key][f'recall@{k}']:.1f}" if key in m.get(group, {}) else "-"
                for group, key, _ in groups
                for k in KS
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines += self.losses_table()
        if self.pools:
            lines += [
                "",
                "| pool | median size | p90 size | median prompt chars | p90 prompt chars | gold coverage |",
                "|---|---|---|---|---|---|",
            ]
            for name, s in self.pools.items():
                lines.append(
                    f"| {name} | {s['median_size']:.0f} | {s['p90_size']:.0f} | "
                    f"{s['median_prompt_chars']:.0f} | {s['p90_prompt_chars']:.0f} | "
                    f"{100 * s['gold_coverage']:.1f}% |"
                )
        return "\n".join(lines)

    def losses_table(self) -> list[str]:
        """The losses vs naive / vs hybrid: counts per method, then the ids lost at R@5 (no lines if none)."""
        lost = self.losses
        bases = [b for b in BASELINES if any(b in per for per in lost.values())]
        if not bases:
            return []
        head = ["losses vs " + " / vs ".join(bases), *(f"R@{k} vs {b}" for b in bases for k in KS)]
        lines = ["", "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for name, per in lost.items():
            cells = [str(per[b][f"recall@{k}"]["count"]) if b in per else "-" for b in bases for k in KS]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        for name, per in lost.items():
            for b in bases:
                ids = per.get(b, {}).get(f"recall@{max(KS)}", {}).get("questions", [])
                if ids:
                    lines.append(f"\n{name} lost at R@{max(KS)} vs {b}: {', '.join(ids)}")
        return lines


def losses(
    per_question: Mapping[str, Mapping[str, Sequence[float]]], baselines: Sequence[str] = BASELINES
) -> dict[str, dict[str, dict[str, Any]]]:
    """The questions on which each method's recall is below a baseline's, at each k of :data:`KS`.

    Args:
        per_question: ``{method: {question id: [recall@2, recall@5]}}``.
        baselines: The methods compared with (those absent from ``per_question`` are skipped);
            a baseline is not compared with itself nor with another baseline.

    Returns:
        ``{method: {baseline: {"recall@k": {"count": n, "questions": [ids]}}}}``; the ids in
        the order of the baseline's questions.
    """
    present = [b for b in baselines if b in per_question]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, recalls in per_question.items():
        if name in baselines:
            continue
        out[name] = {}
        for base in present:
            out[name][base] = {}
            for j, k in enumerate(KS):
                ids = [q for q, r in per_question[base].items() if q in recalls and recalls[q][j] < r[j]]
                out[name][base][f"recall@{k}"] = {"count": len(ids), "questions": ids}
    return out


def default_methods(store: MilvusGraphStore) -> dict[str, BaseRetriever]:
    """``naive``, ``graph`` (the default no-LLM mode) and ``graph_similarity`` (the seed's order)."""
    k = max(KS)
    return {
        "naive": store.as_naive_retriever(k=k),
        "graph": MilvusGraphRetriever(store=store, k=k),
        "graph_similarity": MilvusGraphRetriever(store=store, k=k, ranking="similarity"),
    }


def _recalls(runs: list[tuple[Question, list[str]]]) -> dict[str, Any]:
    def summary(items: list[tuple[Question, list[str]]]) -> dict[str, float]:
        return {
            f"recall@{k}": float(np.mean([recall_at(ids, q.gold_passage_ids, k) for q, ids in items])) for k in KS
        } | {"questions": len(items)}

    by_hops: dict[str, list[tuple[Question, list[str]]]] = {}
    by_type: dict[str, list[tuple[Question, list[str]]]] = {}
    for q, ids in runs:
        by_hops.setdefault(str(q.hops), []).append((q, ids))
        if q.type:
            by_type.setdefault(q.type, []).append((q, ids))
    out = {**summary(runs), "by_hops": {h: summary(items) for h, items in sorted(by_hops.items())}}
    if by_type:
        out["by_type"] = {t: summary(items) for t, items in sorted(by_type.items())}
    return out


def _pool_stats(pools: list[tuple[Question, Mapping[str, Any]]]) -> dict[str, float]:
    prompt = create_rerank_prompt()
    sizes, chars, covered, gold_total = [], [], 0, 0
    for q, payload in pools:
        relations = list(payload.get("relations", []))
        sizes.append(len(relations))
        messages = prompt.format_messages(
            question=q.question, relation_des_str=format_relations(relations), select_line=""
        )
        chars.append(sum(len(str(m.content)) for m in messages))
        reachable = {pid for c in payload.get("candidates", []) for pid in c["passage_ids"]}
        covered += len(reachable & set(q.gold_passage_ids))
        gold_total += len(set(q.gold_passage_ids))
    return {
        "median_size": float(statistics.median(sizes)) if sizes else 0.0,
        "p90_size": float(np.percentile(sizes, 90)) if sizes else 0.0,
        "median_prompt_chars": float(statistics.median(chars)) if chars else 0.0,
        "p90_prompt_chars": float(np.percentile(chars, 90)) if chars else 0.0,
        "gold_coverage": covered / gold_total if gold_total else 0.0,
        "questions": len(pools),
    }


def record_pool(retriever: MilvusGraphRetriever) -> tuple[MilvusGraphRetriever, list[Mapping[str, Any]]]:
    """A copy of ``retriever`` whose reranker records its input and selects nothing."""
    seen: list[Mapping[str, Any]] = []

    def record(payload: Mapping[str, Any]) -> list[int]:
        seen.append(payload)
        return []

    fields = {name: getattr(retriever, name) for name in type(retriever).model_fields}
    fields.update(reranker=RunnableLambda(record), llm=None)
    return type(retriever)(**fields), seen


def evaluate(
    store: MilvusGraphStore,
    questions: Sequence[Question],
    *,
    methods: Mapping[str, BaseRetriever] | None = None,
    pools: Mapping[str, MilvusGraphRetriever] | None = None,
    show_progress: bool | None = None,
    on_method: Callable[[str], None] | None = None,
) -> EvalReport:
    """Run every method on every question; compute recalls and pool statistics.

    Args:
        store: The ingested store.
        questions: The questions.
        methods: Named retrievers (default: :func:`default_methods`); each must return at
            least 5 Documents whose ``id`` is the passage id.
        pools: Named graph retrievers whose reranker pools are measured (default: the
            default ``graph`` retriever, and the seed's pool — similarity ranking, no cap).
        show_progress: Progress bars (default: when stderr is a terminal).
        on_method: Called with each method name before it runs.
    """
    methods = dict(methods or default_methods(store))
    if pools is None:
        pools = {
            "graph": MilvusGraphRetriever(store=store, k=max(KS)),
            "seed (similarity, entity/relation top-3, 1 hop, uncapped)": MilvusGraphRetriever(
                store=store, k=max(KS), ranking="similarity", max_candidates=100_000
            ),
        }
    report = EvalReport()
    disable = None if show_progress else True
    for name, retriever in methods.items():
        if on_method:
            on_method(name)
        runs = [
            (q, [str(d.id) for d in retriever.invoke(q.question)])
            for q in tqdm(questions, desc=name, disable=disable, leave=False)
        ]
        report.methods[name] = _recalls(runs)
        report.per_question[name] = {q.id: [recall_at(ids, q.gold_passage_ids, k) for k in KS] for q, ids in runs}
    for name, retriever in pools.items():
        if on_method:
            on_method(f"pool: {name}")
        recorder, seen = record_pool(retriever)
        captured = []
        quiet = logging.getLogger("langchain_graphrag_milvus")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # the recorder chooses nothing on purpose: no warnings
        try:
            for q in tqdm(questions, desc=f"pool {name}", disable=disable, leave=False):
                before = len(seen)
                recorder.invoke(q.question)
                captured.append((q, seen[before] if len(seen) > before else {}))
        finally:
            quiet.setLevel(level)
        report.pools[name] = _pool_stats(captured)
    return report
