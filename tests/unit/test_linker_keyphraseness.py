"""The offline linker's keyphraseness rule: a one-word lower-case mention links only when the word is
more often an entity of the passages that hold it than plain text (Mihalcea & Csomai's link probability)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from langchain_graphrag_milvus import EntityLinker
from langchain_graphrag_milvus.retrieval.graph_linker import graph_linker
from langchain_graphrag_milvus.text.passage_words import PassageWordFrequency, PassageWords

#: Passages whose relations name each entity (a graph of 1,000 passages): all specific (<= 1%).
ENTITY_PASSAGES = {"pip": 8, "runs": 3, "main": 5, "calls": 2, "sha256": 4, "init.defaultBranch": 6, "keyring": 3}
#: Passages whose text holds each word.
TEXT_PASSAGES = {"pip": 10, "runs": 40, "main": 60, "calls": 25, "sha256": 30, "keyring": 3}


def frequency(names: Sequence[str]) -> tuple[list[int], int]:
    return [ENTITY_PASSAGES.get(n, 0) for n in names], 1000


def text_frequency(names: Sequence[str]) -> tuple[list[int], int]:
    return [TEXT_PASSAGES.get(n, 0) for n in names], 1000


def linker(text: bool = True) -> EntityLinker:
    return EntityLinker(
        list(ENTITY_PASSAGES) + ["the", "which"],
        require_capital=True,
        frequency=frequency,
        text_frequency=text_frequency if text else None,
    )


QUESTION = "which pip release runs the main keyring calls, and does it check sha256 and init.defaultbranch?"


def test_common_lowercase_words_are_not_linked() -> None:
    # the graph's own keyphraseness: 25 naming passages of 168 holding its one-word names
    assert linker().link_rate() == 25 / 168 and linker(text=False).link_rate() == 0.0
    # runs 3/40, main 5/60, calls 2/25: plain English in most passages that hold them
    assert linker().find(QUESTION) == ["pip", "keyring", "sha256", "init.defaultBranch"]
    # without the text counts they were linked (each is specific: in at most 1% of the passages)
    assert linker(text=False).find(QUESTION) == [
        "pip",
        "runs",
        "main",
        "keyring",
        "calls",
        "sha256",
        "init.defaultBranch",
    ]


def test_names_written_as_code_and_capitalised_mentions_keep_linking() -> None:
    # sha256 is an entity in 4 of the 30 passages that hold it, but a name written as code is a name
    assert linker().find("is sha256 used for init.defaultbranch?") == ["sha256", "init.defaultBranch"]
    assert 4 < linker().link_rate() * 30
    # a capitalised question: a capitalised mention is not judged by counts
    assert linker().find("Which Main calls does Pip make?") == ["main", "pip"]


def test_a_near_miss_is_judged_as_the_name_it_stands_for() -> None:
    """util-linux's docs: "configured" is a fuzzy match of "./configure" (ratio 94.7); the name's word is an
    entity in 1 of the 45 passages holding *configure*, so the verb does not link it -- though *configured*
    itself is rare (5 passages) and "./configure" named once would pass a test made on the mention's word."""
    entities = {"./configure": 1, "modem": 2, "agetty": 3}
    texts = {"configure": 45, "configured": 5, "modem": 8, "agetty": 4}

    def named(names: Sequence[str]) -> tuple[list[int], int]:
        return [entities.get(n, 0) for n in names], 1239

    def held(names: Sequence[str]) -> tuple[list[int], int]:
        return [texts.get(n.lstrip("./"), 0) for n in names], 1258

    made = EntityLinker(list(entities), require_capital=True, frequency=named, text_frequency=held)
    assert made.find("how should agetty be configured for a modem?") == ["agetty", "modem"]
    texts["configure"] = 2  # a word that is an entity where it is written: its near miss still links
    assert "./configure" in EntityLinker(
        list(entities), require_capital=True, frequency=named, text_frequency=held
    ).find("how should agetty be configured for a modem?")


def test_stop_words_never_link() -> None:
    assert linker().find("which the") == []


def test_passage_words_count_passages_not_occurrences() -> None:
    words = PassageWords(["pip pip pip", "Pip runs.", "The job RUNS daily.", ""])
    assert (words.count("pip"), words.count("run"), words.count("runs"), words.count("daily")) == (2, 2, 2, 1)
    assert words.count("pip runs") == 0 and words.count("nothing") == 0 and words.n_passages == 4


def test_word_counts_follow_the_graph() -> None:
    owner = [object()]
    texts = [["pip runs", "runs"]]
    reads: list[int] = []

    def read() -> list[str]:
        reads.append(1)
        return texts[0]

    counts = PassageWordFrequency(read, lambda: owner[0])
    assert counts(["runs", "pip"]) == ([2, 1], 2)
    assert counts(["pip"]) == ([1], 2) and len(reads) == 1  # read once per graph
    owner[0], texts[0] = object(), ["pip", "pip", "pip"]
    assert counts(["pip", "runs"]) == ([3, 0], 3) and len(reads) == 2


def test_a_graph_of_too_many_passages_reads_no_text() -> None:
    """Above ``max_passages`` the text is never read: every word counts 0 passages (the rule links as before)."""

    class Graph:
        def __init__(self, n: int) -> None:
            self.n_passages = n

    owner = [Graph(3)]
    reads: list[int] = []

    def read() -> list[str]:
        reads.append(1)
        return ["pip runs", "runs", "runs"]

    counts = PassageWordFrequency(read, lambda: owner[0], max_passages=3)
    assert counts(["runs"]) == ([3], 3) and len(reads) == 1
    owner[0] = Graph(4)
    assert counts(["runs", "pip"]) == ([0, 0], 0) and len(reads) == 1


def test_a_scan_of_more_passages_than_the_graph_stops_at_the_limit() -> None:
    """Passages outside the graph (no relations) are scanned too: the read stops after ``max_passages`` + 1."""

    class Graph:
        n_passages = 2  # the graph's passages; the store holds many more

    yielded: list[int] = []

    def read() -> Iterator[str]:
        for i in range(1_000):
            yielded.append(i)
            yield "runs daily"

    graph = Graph()
    counts = PassageWordFrequency(read, lambda: graph, max_passages=3)
    assert counts(["runs"]) == ([0], 0)  # no count: the rule links as before
    assert len(yielded) == 4


def test_graph_linker_takes_passage_texts() -> None:
    factory = graph_linker(lambda: None, lambda: ["pip runs"])  # type: ignore[arg-type,return-value]
    made = factory(["pip"])
    assert isinstance(made.text_frequency, PassageWordFrequency) and made.partial and made.require_capital
    assert made.text_frequency(["pip"]) == ([1], 1)
    assert graph_linker(lambda: None)(["pip"]).text_frequency is None  # type: ignore[arg-type,return-value]



def test_a_one_word_part_of_a_longer_name_is_judged_as_the_word() -> None:
    """``make`` (plain English in most passages that hold it) does not link ``GNU Make``; ``euler`` links its name."""
    naming = {"GNU Make": 4, "Leonhard Euler": 6, "pip": 8}
    holding = {"make": 200, "euler": 7, "pip": 10, "gnu": 5, "leonhard": 6}

    def named(names: Sequence[str]) -> tuple[list[int], int]:
        return [naming.get(n, 0) for n in names], 1000

    def held(words: Sequence[str]) -> tuple[list[int], int]:
        return [holding.get(w.lower(), 0) for w in words], 1000

    kwargs = {"require_capital": True, "partial": True, "frequency": named}
    with_text = EntityLinker(list(naming), text_frequency=held, **kwargs)  # type: ignore[arg-type]
    assert with_text.find("how do i make pip teach euler?") == ["pip", "Leonhard Euler"]  # make: 4/200 passages
    without = EntityLinker(list(naming), **kwargs)  # type: ignore[arg-type]
    assert without.find("how do i make pip teach euler?") == ["GNU Make", "pip", "Leonhard Euler"]
