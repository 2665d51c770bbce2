"""Untrusted text in linear time: markup cleaning, LLM answers, sentence splits, entity names.

Each long input below (200,000 characters; 1,000,000 for the two whose old cost was a few seconds
at 100,000) took quadratic or cubic time before (minutes to hours: the old expressions rescanned
the rest of a line from every opener, or backtracked over one run of white space in two or three
ways); now each finishes in well under a second. There is no timing assertion: a quadratic return
shows as a test that does not end.

The old expressions are kept here as the specification: on short random lines (where they are
fast) the linear forms give the same results.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.exceptions import OutputParserException

from langchain_graphrag_milvus.ingest import markup_scan
from langchain_graphrag_milvus.ingest.markup import _ARGS, _ATX, clean_markup, looks_like_markup
from langchain_graphrag_milvus.ingest.offline_rules import clean_name, title_name
from langchain_graphrag_milvus.ingest.triplets import parse_extraction
from langchain_graphrag_milvus.retrieval.linearize import split_sentences

N = 200_000
LONG = 1_000_000  # where the old cost was quadratic with a small constant (4 s at 100,000)

# the expressions as they were (the specification of the linear forms)
OLD_SIGNATURE = re.compile(r"^\s*(?:def |class )?([A-Za-z_][\w.]*)\s*\((.*)\)\s*(?:->\s*[\w\[\], .]+)?:?\s*$")
OLD_ARGS = re.compile(r"^\s*\(.*[,=*/].*\)\s*(?:->.*)?:?\s*$|^\s*\(\)\s*$")
OLD_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
OLD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
OLD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]")
OLD_REST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`_{1,2}")
OLD_ROLE = re.compile(r":[\w:.-]+:`~?([^`]+)`")
OLD_EMPHASIS = re.compile(
    r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)|(?<!\w)(_{1,2})(?=[^\s_])([^_]*?\s[^_]*?)(?<=[^\s_])\3(?!\w)"
)
OLD_HINT = re.compile(r"^\s{0,3}(#{1,6}\s|```|~~~|\.\. |[-*+] )|`[^`]+`|\]\(|</?[a-z]+>|^\s*[=\-~]{3,}\s*$", re.M)


def lines(alphabet: str) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet + "aé1\t\xa0", max_size=24)


@settings(max_examples=600, deadline=None)
@given(lines("f(),-> :[]x!=.d"))
def test_signature_as_the_expression(line: str) -> None:
    old = OLD_SIGNATURE.match(line)
    assert markup_scan.signature(line) == (old.group(1, 2) if old else None)


@settings(max_examples=600, deadline=None)
@given(lines("(),=*/->: x"))
def test_argument_list_as_the_expression(line: str) -> None:
    assert bool(_ARGS.match(line)) == bool(OLD_ARGS.match(line))


@settings(max_examples=600, deadline=None)
@given(lines("# x#"))
def test_heading_as_the_expression(line: str) -> None:
    old, new = OLD_ATX.match(line), _ATX.match(line)
    assert (markup_scan.atx_text(new.group(1)) if new else None) == (old.group(1) if old else None)


@settings(max_examples=600, deadline=None)
@given(lines("![]()[] x\n"))
def test_images_and_links_as_the_expressions(line: str) -> None:
    assert markup_scan.sub_images(line) == OLD_IMAGE.sub(r"\1", line)
    assert markup_scan.sub_links(line) == OLD_LINK.sub(lambda m: m.group(1) or m.group(2), line)


@settings(max_examples=600, deadline=None)
@given(lines("`<>_ ~:.-"))
def test_rest_links_and_roles_as_the_expressions(line: str) -> None:
    assert markup_scan.sub_rest_links(line) == OLD_REST_LINK.sub(r"\1", line)
    assert markup_scan.sub_roles(line) == OLD_ROLE.sub(r"\1", line)


@settings(max_examples=1000, deadline=None)
@given(lines("*_ .b\n"))
def test_emphasis_as_the_expression(line: str) -> None:
    assert markup_scan.sub_emphasis(line) == OLD_EMPHASIS.sub(lambda m: m.group(2) or m.group(4), line)


@settings(max_examples=600, deadline=None)
@given(lines("\n =-~`#<>]([b"))
def test_markup_hint_as_the_expression(text: str) -> None:
    assert looks_like_markup(text) == bool(OLD_HINT.search(text))


def test_signature_and_heading_with_long_white_space_runs() -> None:
    # cubic before: "->" then spaces (white space and return-type characters both take them)
    assert clean_markup("f()->" + " " * N + "!") == "f()-> !"
    assert clean_markup("def f(a, b) ->" + " " * N + "int:") == "f."
    assert clean_markup("## x" + " " * N + "x") == "x x."  # cubic: the lazy heading and its closing run
    assert clean_markup("## Title" + " " * N + "##") == "Title."


def test_openers_without_closers() -> None:
    # every opener rescanned the rest of the line (the line is kept: nothing closes)
    scan = markup_scan
    for line, sub in [
        ("![" * (N // 2), scan.sub_images),
        ("![a](" * (N // 5), scan.sub_images),
        ("[" * N, scan.sub_links),
        ("[a](" * (N // 4), scan.sub_links),
        ("`a<" * (N // 3), scan.sub_rest_links),
        (":" * N + "`", scan.sub_roles),
        ("*a" * (N // 2), scan.sub_emphasis),
        (" _a" + " a" * (N // 2), scan.sub_emphasis),
    ]:
        assert sub(line) == line
    assert scan.sub_rest_links("`a" + " " * N + "<b>`_") == "a"
    assert scan.sub_emphasis("***a*" * (N // 5)) == "a" * (N // 5)  # three, two stars tried to the end first
    assert clean_markup("(" + ",)" * (N // 2) + "!") == "(" + ",)" * (N // 2) + "!"
    assert clean_markup(" _a" + " " * N + "b") == "_a b"


def test_openers_with_their_closers_far_away() -> None:
    words = "word " * (N // 5)
    assert clean_markup(f"![{words}](x)") == words.strip()
    assert clean_markup(f"see [{words}][ref] and *{words.strip()}*") == f"see {words}and {words.strip()}"
    assert clean_markup(f":func:`{words.strip()}`") == words.strip()


def test_markup_hint_over_many_blank_lines() -> None:
    assert not looks_like_markup("\n" * N + "plain")  # every line start ran to the end of the blank run
    assert not looks_like_markup(" \n" * (N // 2))
    assert looks_like_markup("\n" * N + "Title\n=====\n")


def test_llm_answer_of_many_braces() -> None:
    with pytest.raises(OutputParserException):  # each "{" looked for a "}" to the end
        parse_extraction("{" * LONG)
    assert parse_extraction('Sure: {"triples": [["a", "b", "c"]]} ' + "{" * N) == [["a", "b", "c"]]


def test_sentences_of_many_initials() -> None:
    # each "A." glued the next piece onto a growing sentence and searched all of it again
    text = "A. " * (N // 3) + "Done. Next one."
    assert split_sentences(text) == ["A. " * (N // 3) + "Done.", "Next one."]
    assert split_sentences("He met Dr. Smith. Did he?") == ["He met Dr. Smith.", "Did he?"]


def test_name_of_many_determiners() -> None:
    assert clean_name("the " * (LONG // 4) + "Basel") == "Basel"
    assert clean_name("the the") == "the"


def test_name_of_many_brackets_and_quotes() -> None:
    # each end bracket is checked against the brackets left inside: counted once, not rescanned
    assert clean_name("(" * LONG) == ""
    assert clean_name("(" * LONG + "a" + ")" * LONG) == "a"
    assert clean_name("(a)" * (LONG // 3)) == "(a)" * (LONG // 3)
    assert clean_name(")" * LONG + "x" + "(" * LONG) == "x"
    assert clean_name('"' * LONG + "Nick" + '" Hexum' * 3) == "Nick Hexum Hexum Hexum"
    assert title_name("Mark King" + " (x" * (N // 3) + ")", "Mark King") == "Mark King" + " (x" * (N // 3) + ")"
    # the word search: a 200-character rest against a text that holds it at every position, touching letters
    assert title_name("a" * 200 + " (x)", "a" * N) == "a" * 200 + " (x)"
    assert title_name("a" * 200 + " (x)", "a" * N + " " + "a" * 200) == "a" * 200


def _balanced(name: str) -> bool:
    stack: list[str] = []
    for ch in name:
        if ch in "([{":
            stack.append({"(": ")", "[": "]", "{": "}"}[ch])
        elif ch in ")]}" and (not stack or stack.pop() != ch):
            return False
    return not stack


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="ab (){}[]\"“”'.,:-", max_size=24))
def test_a_name_keeps_its_bracket_pairs(text: str) -> None:
    name = clean_name(text)
    assert not set('"“”') & set(name)
    assert name == name.strip()
    if _balanced(text):
        assert _balanced(name), (text, name)  # trimming never leaves half a pair
    if name[:1] in "([{":
        assert _balanced(name) or name.count(name[0]) > 0  # kept only when it has a partner inside
