"""A writer process for the concurrency tests: ``python -m tests.concurrent_writer URI PREFIX WORKER CALLS THREADS``.

Each of ``THREADS`` threads adds ``CALLS`` batches of documents into the store at ``URI`` /
``PREFIX``; every document states the shared relation (Acme Corp, hired, Bob) and one of its
own, so every write reads and rewrites the shared relation's passage list. Prints one JSON
line: the passage ids it added and the errors it got (type and message). A call refused with
``ConcurrentWriteError`` is re-run (up to three times), as README advises.
"""

from __future__ import annotations

import json
import sys
import threading

from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.errors import ConcurrentWriteError
from tests.fakes import LexicalEmbeddings

SHARED = ["Acme Corp", "hired", "Bob"]
PER_CALL = 3


def documents(worker: str, thread: int, call: int) -> list[Document]:
    """The documents of one call: each with a unique id, the shared triplet and a triplet of its own."""
    out = []
    for i in range(PER_CALL):
        tag = f"{worker}-{thread}-{call}-{i}"
        out.append(
            Document(
                id=f"doc-{tag}",
                page_content=f"Acme Corp hired Bob; note {tag}.",
                metadata={"triplets": [SHARED, ["Bob", "wrote", f"note {tag}"]]},
            )
        )
    return out


def run(store: MilvusGraphStore, worker: str, calls: int, threads: int) -> dict[str, list[str]]:
    """Add the documents from ``threads`` threads; the ids added and the errors met."""
    added: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()

    def work(thread: int) -> None:
        for call in range(calls):
            docs = documents(worker, thread, call)
            for _attempt in range(3):  # a typed refusal (ConcurrentWriteError) is re-run, as README says
                try:
                    store.add_documents(docs)
                except Exception as exc:  # reported, not hidden: the test decides
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    if not isinstance(exc, ConcurrentWriteError):
                        break
                    continue
                with lock:
                    added.extend(str(d.id) for d in docs)
                break

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return {"added": added, "errors": errors}


def main() -> None:
    uri, prefix, worker, calls, threads = sys.argv[1:6]
    store = MilvusGraphStore(LexicalEmbeddings(32), uri=uri, collection_prefix=prefix, consistency_level="Strong")
    try:
        result = run(store, worker, int(calls), int(threads))
    finally:
        store.close()
    print(json.dumps(result))  # noqa: T201


if __name__ == "__main__":
    main()
