"""The store's linker on a real store: a common word that is an entity in few of the passages holding it
is not linked from a lower-case question; a word that is an entity wherever it is written is."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.milvus.expr import as_filter

from ..fakes import LexicalEmbeddings

ROWS = [
    ("p1", "pip runs the build backend.", [["pip", "starts", "runs"], ["runs", "of", "build backend"]]),
    ("p2", "The daemon runs as root; pip is not needed.", [["daemon", "as", "root"], ["pip", "unused by", "daemon"]]),
    ("p3", "The timer runs daily.", [["timer", "fires", "daily"]]),
    ("p4", "A cron job runs every hour.", [["cron job", "fires", "every hour"]]),
    ("p5", "The service runs under systemd.", [["service", "managed by", "systemd"]]),
    ("p6", "Use sha256 for the hash; the job runs after.", [["job", "hashes with", "sha256"]]),
]  # fmt: skip


def test_common_words_are_not_linked_code_and_names_are(make_store: Callable[..., MilvusGraphStore]) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents([Document(id=pid, page_content=text, metadata={"triplets": t}) for pid, text, t in ROWS])
    linker = store.entity_linker()
    # "runs" is an entity of 1 of the 6 passages holding it; "pip" of both passages holding it
    assert linker.find("which pip runs the build backend?") == ["pip", "build backend"]
    assert linker.find("does sha256 need systemd?") == ["sha256", "systemd"]
    assert 0 < linker.link_rate() < 1
    # without the text counts, "runs" (1 passage: specific) was linked
    counts, linker.text_frequency = linker.text_frequency, None
    assert linker.find("which pip runs the build backend?") == ["pip", "runs", "build backend"]
    assert counts is not None and counts(["runs", "pip", "build backend"]) == ([6, 2, 0], 6)
    # new passages: the word counts follow the graph
    more = [(f"r{i}", "It runs.", [["it", "listed in", f"table {i}"]]) for i in range(4)]
    store.add_documents([Document(id=pid, page_content=text, metadata={"triplets": t}) for pid, text, t in more])
    assert counts(["runs", "pip"]) == ([10, 2], 10)


def test_a_tenants_linker_counts_nothing_of_other_tenants(make_store: Callable[..., MilvusGraphStore]) -> None:
    """Under a filter, other tenants' passages never decide what a lower-case question links (existence probe)."""
    a_rows = [Document(id=pid, page_content=text, metadata={"triplets": t, "tenant": "a"}) for pid, text, t in ROWS]
    # tenant b: "runs" is an entity of many passages (not specific), and its word is in all of them
    b_rows = [
        Document(id=f"b{i}", page_content=f"Job {i} runs nightly.", metadata={"triplets": [["runs", "of", f"job {i}"]],
                 "tenant": "b"})
        for i in range(40)
    ]  # fmt: skip
    alone = make_store(LexicalEmbeddings())
    alone.add_documents(a_rows)
    both = make_store(LexicalEmbeddings())
    both.add_documents(a_rows + b_rows)
    tenant_a = as_filter({"tenant": "a"})
    questions = ["which pip runs the build backend?", "does the timer runs daily with systemd?", "what runs sha256?"]
    for question in questions:
        assert both.entity_linker(tenant_a).find(question) == alone.entity_linker(tenant_a).find(question)
    assert both.entity_linker(tenant_a).text_frequency is None  # the text counts are every tenant's: not used
    # the store-wide linker does see tenant b: "runs" is an entity of 41 passages there
    assert "runs" not in both.entity_linker().find(questions[0])


def test_passage_ids_the_text_scan_cannot_page_skip_the_rule_not_the_query(
    make_store: Callable[..., MilvusGraphStore],
) -> None:
    """Ids with backslashes (Windows paths) or quotes: the scan of the passages' text cannot page past
    them (``RowLayout.page`` raises), so the rule is skipped, as above ``MAX_COUNTED_PASSAGES``; the
    question is still linked and answered (it raised ``GraphRAGError`` on every lower-case question)."""
    store = make_store(LexicalEmbeddings())
    docs = [Document(id=f"C:\\docs\\{pid}.md", page_content=text, metadata={"triplets": t}) for pid, text, t in ROWS]
    docs[-1].id = 'C:\\docs\\"p6".md'
    store.add_documents(docs)
    question = "which pip runs the build backend?"
    linker = store.entity_linker()
    assert linker.find(question) == ["pip", "runs", "build backend"]  # as without the text counts
    assert linker.text_frequency is not None and linker.text_frequency(["runs", "pip"]) == ([0, 0], 0)
    found = MilvusGraphRetriever(store=store, k=2).invoke(question)
    assert found and found[0].id == "C:\\docs\\p1.md"
