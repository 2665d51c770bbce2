"""A compound question's sub-questions (text/clauses.py) and their share of the walk's passage seeds."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.retrieval.walk_params import WalkParams
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkSeeds, seed_weights
from langchain_graphrag_milvus.text.clauses import MAX_CLAUSES, clause_queries, refers_back, split_clauses


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "how do i ship a node.js script as a single executable file, and what is the python standard "
            "library way to bundle an app into one runnable archive?",
            ["how do i ship a node.js script as a single executable file",
             "what is the python standard library way to bundle an app into one runnable archive?"],
        ),
        (
            "pip's docs pack a wheelhouse into a single tarball with tar. which compression does that example use?",
            ["pip's docs pack a wheelhouse into a single tarball with tar.",
             "which compression does that example use?"],
        ),
        (
            "What uid does the nobody user have? Should any files be owned by nobody?",
            ["What uid does the nobody user have?", "Should any files be owned by nobody?"],
        ),
        ("which gnupg daemon holds my keys and how do i stop it from starting in my session?",
         ["which gnupg daemon holds my keys", "how do i stop it from starting in my session?"]),
    ],
)  # fmt: skip
def test_a_compound_question_is_split_into_what_it_asks(question: str, parts: list[str]) -> None:
    assert split_clauses(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "Who taught Euler?",
        "Were Scott Derrickson and Ed Wood of the same nationality?",  # "and" between names
        "What do E. B. White and Dan Masterson have in common?",  # initials
        "which archive formats can python's shutil.make_archive produce in version 3.11?",  # dots inside words
        "how is a package with Protected: yes treated differently from an Essential: yes package?",
        "",
        "   ",
        "Little Caesars and who's the first?",  # "who's" is not a question word starting a clause
    ],
)
def test_a_question_that_asks_one_thing_gives_nothing(question: str) -> None:
    assert split_clauses(question) == []


def test_a_fragment_joins_the_part_before_it() -> None:
    assert split_clauses("how do i get an early root shell from systemd? and why?") == []
    assert split_clauses("Hi. which module puts pip into new venvs?") == []  # a short opening joins the next
    assert split_clauses("how do i get an early root shell, and why is that unsafe on a server?") == [
        "how do i get an early root shell", "why is that unsafe on a server?"
    ]  # fmt: skip


def test_white_space_is_collapsed_and_a_long_run_of_it_is_split_in_linear_time() -> None:
    assert split_clauses("what is\n alpha   made of?\t\twhat is beta made of?") == [
        "what is alpha made of?", "what is beta made of?"
    ]  # fmt: skip
    # 200,000 spaces (quadratic backtracking over a space run would take hours here; linear: milliseconds)
    assert split_clauses("what is alpha made of" + " " * 200_000 + "and what is beta made of?") == [
        "what is alpha made of", "what is beta made of?"
    ]  # fmt: skip
    assert split_clauses("a" + " \n" * 100_000 + "b") == []


def test_at_most_max_clauses_parts_and_the_last_keeps_the_rest() -> None:
    question = "What is alpha made of? What is beta made of? What is gamma made of? What is delta made of?"
    parts = split_clauses(question)
    assert len(parts) == MAX_CLAUSES
    assert parts[-1] == "What is gamma made of? What is delta made of?"
    assert split_clauses(question, max_clauses=1) == []
    assert split_clauses(123) == []  # type: ignore[arg-type]


_PIECES = st.sampled_from(
    ["ab", "c", " ", ",", ".", "?", ";", "!", " and what ", " or is ", "E. ", "x.y ", "\n", "and", "but", " a b c d "]
)


@given(st.lists(_PIECES, max_size=60).map("".join))
def test_no_text_is_lost_added_or_reordered(question: str) -> None:
    parts = split_clauses(question)
    assert parts == [] or len(parts) >= 2
    assert all(p and p == p.strip() for p in parts)
    if not parts:
        return
    # the parts are the question's text in order: only white space, a comma and the connective went
    squeeze = lambda text: re.sub(r"\s|,|\b(?:and|or|but)\b", "", text)  # noqa: E731
    assert squeeze(" ".join(parts)) == squeeze(question)


@pytest.mark.parametrize(
    ("part", "back"),
    [
        ("what is the systemd unit i restart for it?", True),
        ("how do i stop systemd from auto-starting it in my user session?", True),
        ("what were they split out of?", True),
        ("is there an option to emit them unquoted?", True),
        ("who was his father?", True),
        ("which release introduced the dedicated git sparse-checkout command?", False),
        ("what environment variable tells dpkg that the frontend lock is already held?", False),  # "that": no
        ("what is Item 4 of the iterator's itinerary?", False),  # words that start with a pronoun
        ("it's late", False),  # a contraction is not counted
    ],
)
def test_a_part_with_a_personal_pronoun_refers_back(part: str, back: bool) -> None:
    assert refers_back(part) is back


def test_a_part_that_refers_back_is_searched_after_the_first_part() -> None:
    question = (
        "i installed postgresql-16 on a debian server that already runs a 15/main cluster. which port will the "
        "new default cluster get, and what is the systemd unit i restart for it?"
    )
    first, port, unit = split_clauses(question)
    assert clause_queries(question) == [first, port, f"{first} {unit}"]  # only the part with "it"
    assert clause_queries("how do i ship a node.js script as one file, and what is the python way to zip an app?") == (
        split_clauses("how do i ship a node.js script as one file, and what is the python way to zip an app?")
    )
    assert clause_queries("Who taught Euler?") == []


@given(st.lists(_PIECES | st.sampled_from([" it ", " its", "them "]), max_size=60).map("".join))
def test_what_is_searched_for_a_part_ends_with_the_part(question: str) -> None:
    parts, queries = split_clauses(question), clause_queries(question)
    assert len(queries) == len(parts)
    for i, (part, query) in enumerate(zip(parts, queries)):
        assert query == (f"{parts[0]} {part}" if i and refers_back(part) else part)


def _graph() -> GraphIndex:
    """A chain of five passages: relation i joins entities i and i + 1 and comes from passage p{i}."""
    return GraphIndex.from_relations(
        relation_keys=np.arange(100, 105, dtype=np.uint64), subject_keys=np.arange(0, 5, dtype=np.uint64),
        object_keys=np.arange(1, 6, dtype=np.uint64), passage_ids=[[f"p{i}"] for i in range(5)],
    )  # fmt: skip


def test_the_question_and_each_sub_question_share_the_passage_seeds_equally() -> None:
    graph = _graph()
    none_i, none_f = np.array([], np.int32), np.array([], np.float32)
    query = (np.array([0, 1], np.int32), np.array([0.9, 0.1], np.float32))
    clause = (np.array([3], np.int32), np.array([0.5], np.float32))
    params = WalkParams()
    alone = WalkSeeds(none_i, none_f, *query, np.array([], np.int32))
    both = WalkSeeds(none_i, none_f, *query, np.array([], np.int32), clause_passages=(clause,))
    _, _, pas_alone = seed_weights(graph, alone, params)
    _, _, pas_both = seed_weights(graph, both, params)
    assert float(pas_alone[1].sum()) == pytest.approx(1.0) and float(pas_both[1].sum()) == pytest.approx(1.0)
    weights = dict(zip(pas_both[0].tolist(), pas_both[1].tolist()))
    assert weights[3] == pytest.approx(0.5)  # the sub-question's one hit: half the group
    assert weights[0] + weights[1] == pytest.approx(0.5)  # the question's hits: the other half, in their ratio
    assert weights[0] / weights[1] == pytest.approx(pas_alone[1][0] / pas_alone[1][1], rel=1e-5)
    # a sub-question whose hits are not in the graph (-1) takes no share
    absent = (np.array([-1], np.int32), np.array([0.9], np.float32))
    missing = WalkSeeds(none_i, none_f, *query, np.array([], np.int32), clause_passages=(absent,))
    np.testing.assert_allclose(seed_weights(graph, missing, params)[2][1], pas_alone[1], rtol=1e-6)
