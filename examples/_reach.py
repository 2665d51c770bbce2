"""What the graph retriever reached that naive search did not, read from its explanation.

Used by ``quickstart.py``. Nothing here ranks anything: it reads the subgraph that
``MilvusGraphRetriever.explain`` recorded (relations with their hop, similarity and
source passages) and finds, for each passage the naive top-k lacks, the shortest chain of
relations from where the graph started (the entities the question names, or else the
relations most similar to the question) to a relation of that passage.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from langchain_graphrag_milvus.subgraph import Subgraph, SubgraphNode


@dataclass
class Chain:
    """A chain of relations from a start entity to a relation of ``passage_id``."""

    passage_id: str
    start: str
    steps: list[tuple[SubgraphNode, str]]  # (relation node, the entity it leads to)

    def entities(self) -> list[str]:
        """Entity names along the chain, the start first."""
        return [self.start] + [nxt for _, nxt in self.steps]

    def render(self) -> str:
        """``A —[relation]→ B —[relation]→ C``."""
        out = self.start
        for rel, nxt in self.steps:
            out += f" —[{rel.label}]→ {nxt}"
        return out


def _relations(sub: Subgraph) -> list[SubgraphNode]:
    return [n for n in sub.nodes if n.kind == "relation" and n.hop is not None]


def _starts(sub: Subgraph) -> tuple[set[str], str, SubgraphNode | None]:
    """Start entities, how they were chosen, and the relation they came from (no linked name)."""
    labels = {n.label.casefold(): n.label for n in sub.nodes if n.kind == "entity"}
    linked = {labels[q.casefold()] for q in sub.settings.get("query_entities") or [] if q.casefold() in labels}
    if linked:  # the names the linker found in the question, not every entity its vector matched
        return linked, "the entities the question names", None
    matched = {
        sub.node(e.target).label
        for e in sub.edges
        if e.kind == "match" and e.target.startswith("entity:") and any(n.id == e.target for n in sub.nodes)
    }
    if matched:
        return matched, "the entities the question names", None
    rels = sorted(_relations(sub), key=lambda n: -(n.score or 0.0))
    if not rels:
        return set(), "nothing", None
    top = rels[0]
    how = f"no entity linked in the question: from the relation most similar to it ({top.label!r})"
    return {top.data["subject"], top.data["object"]}, how, top


def chains_to(sub: Subgraph, passage_ids: list[str]) -> tuple[list[Chain], str]:
    """The shortest relation chain (most similar relations first) reaching each passage."""
    starts, how, top = _starts(sub)
    by_entity: dict[str, list[SubgraphNode]] = {}
    for rel in sorted(_relations(sub), key=lambda n: -(n.score or 0.0)):
        for name in (rel.data["subject"], rel.data["object"]):
            by_entity.setdefault(name, []).append(rel)
    chains = []
    for pid in passage_ids:
        chain = _bfs(starts, by_entity, pid)
        if chain is not None and top is not None and chain.steps[0][0].id != top.id:
            # no linked name: the chain begins with the relation the graph started from
            other = top.data["object"] if top.data["subject"] == chain.start else top.data["subject"]
            chain = Chain(pid, other, [(top, chain.start), *chain.steps])
        if chain is not None:
            chains.append(chain)
    return chains, how


def _bfs(starts: set[str], by_entity: dict[str, list[SubgraphNode]], pid: str) -> Chain | None:
    queue: deque[tuple[str, str, list[tuple[SubgraphNode, str]]]] = deque((s, s, []) for s in sorted(starts))
    seen = set(starts)
    while queue:
        start, here, steps = queue.popleft()
        for rel in by_entity.get(here, []):
            other = rel.data["object"] if rel.data["subject"] == here else rel.data["subject"]
            path = [*steps, (rel, other)]
            if pid in rel.data["passage_ids"]:
                return Chain(pid, start, path)
            if other not in seen:
                seen.add(other)
                queue.append((start, other, path))
    return None
