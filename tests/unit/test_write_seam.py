"""The write seam without Milvus: writers reach the backend only through the two seams.

:func:`seam_breaches` reads a module's syntax tree and names every place where code of ``ingest/``
or ``cli/`` goes around :class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites` and
:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads`:

* ``client-write`` (ingest/ and cli/): a Milvus client write (``insert``, ``upsert``, ``delete``,
  ``flush``, collection, index and property changes) called on anything named like a client or a
  connection (``store.client.insert(...)``, ``(await store.aclient()).delete(...)``);
* ``reach`` (ingest/ only): an attribute ``client``, ``aclient``, ``connection``, ``_connection``
  or ``lease`` read at all, or fetched with ``getattr`` (a writer holds seams, not a connection);
* ``import`` (ingest/ only): an import of pymilvus, langchain_milvus, or of a ``milvus/`` module
  outside the backend-independent ones (:data:`INGEST_MAY_IMPORT`).

The package holds none; each rule is shown to catch a planted case, so the check can fail.
mypy proves the rest: :class:`~langchain_graphrag_milvus.milvus.writes.StoreParts` holds no
connection, only the two protocols, and ``MilvusWrites`` subclasses ``StoreWrites``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.milvus.existing import ExistingCollectionConnection, ExistingPassageLayout
from langchain_graphrag_milvus.milvus.milvus_writes import MilvusWrites
from langchain_graphrag_milvus.milvus.reads import MilvusReads
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites
from langchain_graphrag_milvus.milvus.writes import StoreParts

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_graphrag_milvus"
#: pymilvus client methods that change Milvus (rows, collections, indexes, properties, partitions).
CLIENT_WRITES = frozenset(
    {
        "insert", "upsert", "delete", "flush", "bulk_insert", "create_collection", "drop_collection",
        "rename_collection", "alter_collection_properties", "drop_collection_properties", "create_index",
        "drop_index", "load_collection", "release_collection", "create_partition", "drop_partition", "compact",
        "truncate_collection",
    }
)  # fmt: skip
#: Names a receiver of a client call goes by.
CLIENTISH = ("client", "connection", "conn")
#: Attributes that reach past the seams.
REACH = frozenset({"client", "aclient", "connection", "_connection", "lease", "_client"})
#: The ``milvus/`` modules ``ingest/`` may import: the seams, the shared write steps, the graph cache's
#: typed changes, and backend-independent helpers (escaping, limits, vector checks).
INGEST_MAY_IMPORT = frozenset(
    {"expr", "graph_cache", "read_seam", "write_seam", "writes", "schema", "vectors"}
)
_MILVUS = "langchain_graphrag_milvus.milvus"


def _names_in(node: ast.AST) -> list[str]:
    """Every identifier and attribute in an expression (``a.b().c`` → a, b, c)."""
    nodes = [n for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)]
    return [n.id if isinstance(n, ast.Name) else n.attr for n in nodes]


def _clientish(node: ast.AST) -> bool:
    return any(any(word in name.lower() for word in CLIENTISH) for name in _names_in(node))


def _bad_import(node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif node.module == _MILVUS:
        modules = [f"{_MILVUS}.{a.name}" for a in node.names]
    else:
        modules = [node.module or ""]
    for module in modules:
        root = module.split(".")[0]
        if root in ("pymilvus", "langchain_milvus", "milvus"):
            return module
        if module.startswith(_MILVUS + ".") and module.split(".")[2] not in INGEST_MAY_IMPORT:
            return module
    return None


def seam_breaches(source: str, *, ingest: bool) -> list[tuple[int, str]]:
    """(line, rule) of every place ``source`` goes around the seams (``ingest``: the stricter rules of ``ingest/``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in CLIENT_WRITES and _clientish(node.func.value):
                found.append((node.lineno, "client-write"))
        if not ingest:
            continue
        if isinstance(node, ast.Attribute) and node.attr in REACH:
            found.append((node.lineno, "reach"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if any(isinstance(a, ast.Constant) and a.value in REACH for a in node.args[1:2]):
                found.append((node.lineno, "reach"))
        if isinstance(node, ast.Import | ast.ImportFrom) and _bad_import(node):
            found.append((node.lineno, "import"))
    return sorted(set(found))


def test_ingest_and_cli_reach_the_backend_only_through_the_seams() -> None:
    found = {}
    for folder in ("ingest", "cli"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            breaches = seam_breaches(path.read_text(encoding="utf-8"), ingest=folder == "ingest")
            if breaches:
                found[path.relative_to(PACKAGE).as_posix()] = breaches
    assert found == {}, "write through parts.writes / read through parts.reads (milvus/write_seam.py, read_seam.py)"


@pytest.mark.parametrize(
    ("source", "ingest", "rule"),
    [
        ("ctx.parts.graph.connection.client.upsert(name, rows)\n", True, "client-write"),
        ("store.client.insert('x_passages', rows)\n", False, "client-write"),
        ("async def f(store):\n    (await store.aclient()).delete('x', filter='pk in []')\n", False, "client-write"),
        ("def f(conn):\n    conn.flush('x_relations')\n", False, "client-write"),
        ("store._connection.client.alter_collection_properties('x', properties={})\n", False, "client-write"),
        ("lease = ctx.parts.graph.connection\n", True, "reach"),
        ("getattr(parts.graph, 'connection').exists()\n", True, "reach"),
        ("ctx.parts.writes.connection.lease.ensure()\n", True, "reach"),
        ("from pymilvus import MilvusClient\n", True, "import"),
        ("from langchain_graphrag_milvus.milvus.connection import MilvusConnection\n", True, "import"),
        ("from langchain_graphrag_milvus.milvus import indexes\n", True, "import"),
        ("import langchain_graphrag_milvus.milvus.milvus_writes as w\n", True, "import"),
    ],
)
def test_each_rule_catches_a_planted_breach(source: str, ingest: bool, rule: str) -> None:
    assert rule in {r for _, r in seam_breaches(source, ingest=ingest)}


def test_what_the_rules_leave_alone() -> None:
    fine = (
        "from langchain_graphrag_milvus.milvus import expr\n"
        "from langchain_graphrag_milvus.milvus.writes import write_rows\n"
        "candidates.insert(0, x)\n"  # a list
        "cache.delete(key)\n"
        "parts.writes.write('entities', rows, batch_size=10)\n"
        "parts.writes.delete('relations', ids)\n"
        "store.client.describe_collection('x')\n"  # a read of the schema (cli/tenancy.py)
    )
    assert seam_breaches(fine, ingest=False) == []
    assert [r for _, r in seam_breaches(fine, ingest=True)] == ["reach"]  # ingest/ may not even look


def test_store_parts_hold_the_two_seams_and_milvus_writes_implement_one() -> None:
    assert list(StoreParts.__dataclass_fields__) == ["reads", "writes", "graph", "batch_size"]
    assert StoreWrites in MilvusWrites.__mro__  # an explicit subclass: mypy checks every member
    declared = {n: v for n, v in vars(StoreWrites).items() if not n.startswith("_")}
    members = {n for n, v in declared.items() if callable(v) or isinstance(v, property)}
    assert {"write", "delete", "guard", "keep_lease", "location"} <= members
    assert members <= set(vars(MilvusWrites)), members - set(vars(MilvusWrites))


def test_milvus_writes_refuse_a_collection_the_store_does_not_own(tmp_path: Path) -> None:
    """An existing collection's passages are the team's: refused before any Milvus call (nothing is contacted)."""
    connection = ExistingCollectionConnection(
        passage_collection="team_docs",
        layout=ExistingPassageLayout("text", None, None, None),
        uri=str(tmp_path / "unused.db"),
        connection_args={},
        collection_prefix="t",
        index_params={},
        consistency_level="Session",
        partition_key_field=None,
        timeout=1.0,
    )
    writes = MilvusWrites(connection, MilvusReads(connection, {}))
    with pytest.raises(GraphRAGError, match="not this store's to write"):
        writes.write("passages", [{"pk": "p1", "text": "x"}], batch_size=1)
    with pytest.raises(GraphRAGError, match="team_docs"):
        writes.delete("passages", ["p1"])
    writes.write("entities", [], batch_size=1)  # nothing to write: no call either
    writes.delete("relations", [])
    assert writes.location == f"prefix 't' at {str(tmp_path / 'unused.db')!r}"
    assert connection.clients._client is None  # no client was made
