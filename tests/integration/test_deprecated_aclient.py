"""``MilvusGraphStore.aclient()`` still works (Lite and server), with a DeprecationWarning."""

from __future__ import annotations

import asyncio

import pytest

from langchain_graphrag_milvus.datasets import nano_dataset


def test_aclient_warns_and_reaches_the_stores_collections(make_store) -> None:
    store = make_store()
    store.add_records(nano_dataset()[:2])

    async def names() -> list[str]:
        with pytest.warns(DeprecationWarning, match="aclient"):
            client = await store.aclient()
        try:
            return list(await client.list_collections())
        finally:
            await client.close()

    found = asyncio.run(names())
    assert store.collection_name("passages") in found
    assert store.reads.counts()["passages"] == 2  # the store's own client still serves it
