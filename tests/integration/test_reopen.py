"""A new process opening the same database retrieves the same results without re-ingesting."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset

from ..fakes import LexicalEmbeddings

QUERIES = [NANO_QUESTION, "Where was Euler born?", "Who was Jakob Bernoulli's brother?"]

CHILD = textwrap.dedent(
    """
    import json, sys
    from tests.fakes import LexicalEmbeddings
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    store = MilvusGraphStore(LexicalEmbeddings(), uri=sys.argv[1], collection_prefix="reopen")
    counts = store.counts()
    retriever = MilvusGraphRetriever(store=store, k=3)
    out = {"counts": counts, "results": [[d.id for d in retriever.invoke(q)] for q in json.loads(sys.argv[2])]}
    print(json.dumps(out))
    """
)


def test_new_process_reopens_and_retrieves_the_same(make_store) -> None:
    uri = make_store.uri
    store = make_store(LexicalEmbeddings(), prefix="reopen")
    store.add_records(nano_dataset())
    counts = store.counts()
    expected = [[d.id for d in MilvusGraphRetriever(store=store, k=3).invoke(q)] for q in QUERIES]
    store.close()  # Milvus Lite allows one process per data directory: release it

    result = subprocess.run(
        [sys.executable, "-c", CHILD, uri, json.dumps(QUERIES)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(__import__("pathlib").Path(__file__).parents[2]),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    child = json.loads(result.stdout.strip().splitlines()[-1])
    assert child["counts"] == counts
    assert child["results"] == expected

    # and this process can open it again after the child is gone
    again = make_store(LexicalEmbeddings(), prefix="reopen")
    assert again.counts() == counts
    assert [[d.id for d in MilvusGraphRetriever(store=again, k=3).invoke(q)] for q in QUERIES] == expected
