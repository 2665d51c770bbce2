"""The state seam without Milvus: the graph cache, the local search and the embedding check hold protocols.

The modules in :data:`BACKEND_FREE` type their backend on the three seams only:
:class:`~langchain_graphrag_milvus.milvus.state_seam.StoreState` (location, lock, generation,
store id, recorded properties), :class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads` and
:class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites`. :func:`breaches` names every place
where one of them goes around them: an import of pymilvus, langchain_milvus or a Milvus-bound module
of ``milvus/`` (:data:`MILVUS_BOUND`), or a client reached (``.client``, ``.aclient``, ``._client``,
``.lease``). mypy proves the Milvus classes implement the protocols (the store passes its
``MilvusConnection`` and ``MilvusReads`` where they are expected). Each rule catches a planted case.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from langchain_graphrag_milvus.milvus.connection import MilvusConnection
from langchain_graphrag_milvus.milvus.state_seam import StoreState

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_graphrag_milvus"
_MILVUS = "langchain_graphrag_milvus.milvus"
#: What a second backend reuses unchanged: the graph cache and its parts, the local search, the check.
BACKEND_FREE = (
    "graph_cache", "graph_changes", "graph_vectors", "graph_read", "graph_saved", "graph_fold",
    "graph_memory", "local_search", "local_vectors", "local_fields", "fingerprint", "keyed_search",
)  # fmt: skip
#: ``milvus/`` modules bound to Milvus (clients, schema creation, properties, indexes, views).
MILVUS_BOUND = frozenset(
    {
        "connection", "clients", "reads", "milvus_writes", "existing", "store_views", "properties",
        "store_properties", "write_guard", "indexes", "index_params", "exact",
    }
)  # fmt: skip
REACH = frozenset({"client", "aclient", "_client", "lease"})


def _bad_import(node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif node.module == _MILVUS:
        modules = [f"{_MILVUS}.{a.name}" for a in node.names]
    else:
        modules = [node.module or ""]
    for module in modules:
        if module.split(".")[0] in ("pymilvus", "langchain_milvus"):
            return module
        if module.startswith(_MILVUS + ".") and module.split(".")[2] in MILVUS_BOUND:
            return module
    return None


def breaches(source: str, name: str) -> list[str]:
    """``name:line rule`` for every way ``source`` goes around the seams."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom) and (module := _bad_import(node)):
            found.append(f"{name}:{node.lineno} import {module}")
        elif isinstance(node, ast.Attribute) and node.attr in REACH:
            found.append(f"{name}:{node.lineno} reach .{node.attr}")
    return found


def test_the_backend_free_modules_hold_only_the_seams() -> None:
    found = []
    for module in BACKEND_FREE:
        path = PACKAGE / "milvus" / f"{module}.py"
        found += breaches(path.read_text(encoding="utf-8"), path.name)
    assert found == []


@pytest.mark.parametrize(
    ("planted", "rule"),
    [
        ("from pymilvus import MilvusClient\n", "import pymilvus"),
        ("import langchain_milvus\n", "import langchain_milvus"),
        ("from langchain_graphrag_milvus.milvus.connection import MilvusConnection\n", "import"),
        ("from langchain_graphrag_milvus.milvus import reads\n", "import"),
        ("def f(state):\n    return state.client.describe_collection('x')\n", "reach .client"),
        ("async def f(s):\n    return await s.aclient()\n", "reach .aclient"),
        ("def f(s):\n    s.lease.ensure()\n", "reach .lease"),
    ],
)
def test_each_rule_catches_a_planted_case(planted: str, rule: str) -> None:
    assert any(rule in b for b in breaches(planted, "planted.py")), breaches(planted, "planted.py")


def test_look_alikes_are_not_breaches() -> None:
    source = (
        "from langchain_graphrag_milvus.milvus.state_seam import StoreState\n"
        "from langchain_graphrag_milvus.milvus.read_seam import StoreReads\n"
        "def f(state: StoreState):\n    return state.stamp(), state.record_properties({}), state.clients_seen\n"
    )
    assert breaches(source, "fine.py") == []


def test_the_milvus_connection_has_every_member_of_the_protocol() -> None:
    members = [m for m in vars(StoreState) if not m.startswith("_")] + list(StoreState.__annotations__)
    missing = [m for m in members if not hasattr(MilvusConnection, m) and m not in _instance_attributes()]
    assert missing == []


def _instance_attributes() -> set[str]:
    tree = ast.parse((PACKAGE / "milvus" / "connection.py").read_text(encoding="utf-8"))
    return {
        t.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }


def _relation(subject: str, predicate: str, obj: str, passages: list[str]) -> dict:
    from langchain_graphrag_milvus.text.names import entity_id, relation_id

    return {
        "pk": relation_id(subject, predicate, obj),
        "text": f"{subject} {predicate} {obj}",
        "vector": [1.0, 0.0, 0.0, 0.0],
        "subject_id": entity_id(subject),
        "object_id": entity_id(obj),
        "predicate": predicate,
        "passage_ids": passages,
    }


def _entity(name: str) -> dict:
    from langchain_graphrag_milvus.text.names import entity_id

    return {"pk": entity_id(name), "text": name, "vector": [0.0, 1.0, 0.0, 0.0], "synonym_ids": []}


def test_the_graph_cache_runs_on_the_in_memory_backend() -> None:
    """No Milvus: the graph cache builds, dates and refreshes its graph through the three seams."""
    from langchain_graphrag_milvus.milvus.graph_cache import GraphCache

    from ..compliance.memory import MemoryBackend, MemoryReads, MemoryState, MemoryWrites

    backend = MemoryBackend()
    writes, state = MemoryWrites(backend), MemoryState(backend)
    writes.ensure_collections(4)
    writes.write("entities", [_entity(n) for n in ("Euler", "Bernoulli", "Basel")], batch_size=10)
    writes.write("relations", [_relation("Euler", "studied under", "Bernoulli", ["p1"])], batch_size=10)
    cache: GraphCache[list[str]] = GraphCache(state, MemoryReads(backend), list, refresh_interval=0)
    graph = cache.current()
    assert (graph.n_entities, graph.n_relations, graph.passages.ids) == (2, 1, ["p1"])
    assert sorted(cache.entity_names().values()) == ["Basel", "Bernoulli", "Euler"]

    # another writer adds a relation and moves the counter: the cache sees it at its next check
    writes.write("relations", [_relation("Bernoulli", "taught in", "Basel", ["p2"])], batch_size=10)
    assert cache.current() is graph  # the counter did not move: the graph is current
    state.set_generation(state.stamp()[1] + 1)
    fresh = cache.current()
    assert (fresh.n_relations, sorted(fresh.passages.ids)) == (2, ["p1", "p2"])
    assert cache.bump_generation() == state.stamp()[1]  # a write of this cache moves the counter too
