"""Module paths the README documented before the restructuring still import, with a warning."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("triplets", "ingest.triplets", "create_llm_triplet_extractor"),
        ("offline_extraction", "ingest.offline", "create_offline_triplet_extractor"),
    ],
)
def test_old_path_warns_and_gives_the_same_objects(old: str, new: str, name: str) -> None:
    sys.modules.pop(f"langchain_graphrag_milvus.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"langchain_graphrag_milvus.{new}"):
        module = importlib.import_module(f"langchain_graphrag_milvus.{old}")
    moved = importlib.import_module(f"langchain_graphrag_milvus.{new}")
    assert getattr(module, name) is getattr(moved, name)
    assert set(module.__all__) == set(moved.__all__)
    assert all(getattr(module, n) is getattr(moved, n) for n in moved.__all__)


def test_the_write_operations_old_name_warns_and_is_the_same_class() -> None:
    from langchain_graphrag_milvus.ingest import store_writes

    with pytest.warns(DeprecationWarning, match="WriteOperations"):
        old = store_writes.StoreWrites
    assert old is store_writes.WriteOperations
    with pytest.raises(AttributeError):
        store_writes.NoSuchName  # noqa: B018
