"""The public API is locked, and the graph core stays free of LangChain and Milvus."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import langchain_graphrag_milvus
import langchain_graphrag_milvus.graph


def test_public_api_is_locked() -> None:
    assert sorted(langchain_graphrag_milvus.__all__) == sorted(
        [
            "MilvusGraphRetriever",
            "NaivePassageRetriever",
            "MilvusPathRetriever",
            "MilvusGraphStore",
            "GraphIndex",
            "Expansion",
            "IngestReport",
            "PassageRecord",
            "Problem",
            "Triplet",
            "Hit",
            "EntityLinker",
            "create_llm_entity_extractor",
            "create_llm_reranker",
            "GraphRAGError",
            "MalformedRecordError",
            "MalformedTripletError",
            "CollectionNotFoundError",
            "EmbeddingDimensionError",
            "EmbeddingMismatchError",
            "BackendFeatureError",
            "UnknownIdError",
            "InvalidFilterError",
            "StoreConnectionError",
            "StaleIndexError",
            "InvalidIdError",
            "InvalidEmbeddingError",
            "LitePathError",
            "CorruptIndexError",
            "GraphPathError",
            "ForeignCollectionError",
            "OfflineExtractorUnavailableError",
            "create_offline_triplet_extractor",
            "Subgraph",
            "create_graph_retriever_tool",
            "ExistingCollectionGraphStore",
            "NoPathEvents",
            "create_cited_answer_chain",
            "Ranking",
            "PageRankWalk",
            "SimilarityExpansion",
            "__version__",
        ]
    )
    for name in langchain_graphrag_milvus.__all__:
        assert getattr(langchain_graphrag_milvus, name) is not None


def _type_checking_imports(text: str) -> dict[str, str]:
    """``{name: module}`` of the ``if TYPE_CHECKING:`` block, read with ``ast`` (the reference reading)."""
    tree = ast.parse(text)
    blocks = [n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING"]
    assert len(blocks) == 1
    table: dict[str, str] = {}
    for statement in blocks[0].body:
        assert isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0
        for alias in statement.names:
            assert alias.asname == alias.name, f"{alias.name}: write 'Name as Name' (an explicit re-export)"
            assert alias.name not in table, f"{alias.name} registered twice"
            table[alias.name] = statement.module
    return table


def test_public_names_are_registered_once() -> None:
    """The TYPE_CHECKING imports of __init__.py are the one list: __all__ and the lazy table derive from it."""
    path = Path(langchain_graphrag_milvus.__file__)
    expected = _type_checking_imports(path.read_text(encoding="utf-8"))
    assert langchain_graphrag_milvus._EXPORTS == expected
    assert langchain_graphrag_milvus.__all__ == [*expected, "__version__"]
    for name, module in expected.items():
        assert getattr(importlib.import_module(module), name) is getattr(langchain_graphrag_milvus, name)
    assert not any(module.startswith("langchain_graphrag_milvus.cli") for module in expected.values())


def test_the_runtime_reading_of_the_list_matches_ast_on_other_layouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One-line and parenthesised statements, several names per line: the runtime reading equals ast's."""
    source = Path(langchain_graphrag_milvus.__file__).read_text(encoding="utf-8")
    head, _, tail = source.partition("\nif TYPE_CHECKING:\n")
    block = (
        "    from json import dumps as dumps, loads as loads\n"
        "    from os.path import (\n        join as join, split as split,\n        basename as basename,\n    )\n"
        "    from collections import OrderedDict as OrderedDict\n"
    )
    rest = tail[tail.index("\n# isort: on\n") :]
    fake = tmp_path / "__init__.py"
    fake.write_text(f"{head}\nif TYPE_CHECKING:\n{block}{rest}", encoding="utf-8")
    monkeypatch.setitem(langchain_graphrag_milvus._exports.__globals__, "__file__", str(fake))
    table = langchain_graphrag_milvus._exports()
    assert table == _type_checking_imports(fake.read_text(encoding="utf-8"))
    assert list(table) == ["dumps", "loads", "join", "split", "basename", "OrderedDict"]


def test_import_stays_light() -> None:
    """``import langchain_graphrag_milvus`` loads none of its public modules, nor LangChain, nor numpy."""
    code = (
        "import sys\n"
        "import langchain_graphrag_milvus\n"
        "heavy = ('langchain_core', 'pymilvus', 'numpy', 'langchain_graphrag_milvus.')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    root = Path(langchain_graphrag_milvus.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_graph_api_is_locked() -> None:
    assert sorted(langchain_graphrag_milvus.graph.__all__) == sorted(
        [
            "GraphIndex",
            "GraphView",
            "RemovedItems",
            "Expansion",
            "KeyMap",
            "StringIdMap",
            "AggregatedIndex",
            "PathResult",
            "aggregated_index",
            "find_paths",
            "edge_relations",
            "prune_paths",
        ]
    )


def test_graph_core_imports_neither_langchain_nor_milvus() -> None:
    # a bare package module stands in for langchain_graphrag_milvus/__init__ (which imports LangChain)
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('langchain_graphrag_milvus')\n"
        "pkg.__path__ = ['langchain_graphrag_milvus']\n"
        "sys.modules['langchain_graphrag_milvus'] = pkg\n"
        "import langchain_graphrag_milvus.graph, langchain_graphrag_milvus.graph.reference\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('langchain_core', 'langchain', 'pymilvus',"
        " 'langchain_milvus'))\n"
        "print(bad)\n"
    )
    root = Path(langchain_graphrag_milvus.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
