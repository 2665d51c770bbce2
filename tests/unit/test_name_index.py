"""The indexed fuzzy lookup gives exactly the full scan's answers (property tests against brute force)."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz, process

from langchain_graphrag_milvus import EntityLinker
from langchain_graphrag_milvus.text.name_index import NameIndex
from langchain_graphrag_milvus.text.name_table import LinkerNames, NameTable, decode_strings, encode_strings
from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS, name_spans, name_tokens

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def scan_best(text: str, choices: list[str], cutoff: float) -> int | None:
    """The reference: score every choice, keep the first of the best at or above the cutoff."""
    best, best_score = None, -1.0
    for i, choice in enumerate(choices):
        score = fuzz.ratio(text, choice)
        if score >= cutoff and score > best_score:
            best, best_score = i, score
    return best


def index_best(index: NameIndex, text: str, choices: list[str], cutoff: float) -> int | None:
    candidates = index.candidates(text, cutoff).tolist()
    hit = process.extractOne(text, [choices[i] for i in candidates], scorer=fuzz.ratio, score_cutoff=cutoff)
    return None if hit is None else candidates[hit[2]]


# small alphabets make near-duplicates and equal scores common; a few non-ASCII and astral letters
LETTERS = st.sampled_from(list("aabbcde é") + ["ü", "ß", "İ", "\u0301", "漢", "\U0001d400", "\x00"])
WORDS = st.text(LETTERS, min_size=0, max_size=14)
CUTOFFS = st.sampled_from([0.0, 40.0, 66.7, 80.0, 85.5, 90.0, 95.0, 100.0])


def mutate(word: str, data: st.DataObject) -> str:
    """A near miss of ``word``: a few inserted, deleted or replaced letters."""
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(word)))
        op = data.draw(st.sampled_from("idr"))
        letter = data.draw(LETTERS)
        if op == "i":
            word = word[:at] + letter + word[at:]
        else:
            word = word[:at] + (letter if op == "r" else "") + word[at + 1 :]
    return word


@SETTINGS
@given(choices=st.lists(WORDS, max_size=40), data=st.data(), cutoff=CUTOFFS)
def test_candidates_hold_every_match_and_the_answer_is_the_scans(
    choices: list[str], data: st.DataObject, cutoff: float
) -> None:
    index = NameIndex(choices)
    queries = [data.draw(WORDS)] + [mutate(c, data) for c in choices[:5]]
    for text in queries:
        candidates = set(index.candidates(text, cutoff).tolist())
        assert {i for i, c in enumerate(choices) if fuzz.ratio(text, c) >= cutoff} <= candidates
        expected = scan_best(text, choices, cutoff)
        assert index_best(index, text, choices, cutoff) == expected
        full = process.extractOne(text, choices, scorer=fuzz.ratio, score_cutoff=cutoff)
        assert (None if full is None else full[2]) == expected  # the reference is today's full scan


@SETTINGS
@given(data=st.data())
def test_many_equal_scores_keep_the_first_choice(data: st.DataObject) -> None:
    base = data.draw(st.text(st.sampled_from("abcd"), min_size=5, max_size=12))
    # every one-letter variant of base scores the same against base's own variants
    choices = [base[:i] + x + base[i + 1 :] for i in range(len(base)) for x in "abcdz"]
    choices = data.draw(st.permutations(choices))
    index = NameIndex(choices)
    for text in (base, mutate(base, data)):
        for cutoff in (80.0, 90.0):
            assert index_best(index, text, choices, cutoff) == scan_best(text, choices, cutoff)


def test_the_index_prunes_and_survives_a_round_trip_through_arrays() -> None:
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(300)]
    choices = [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(2000)]
    index = NameIndex(choices)
    query = choices[42][:-1] + "q"
    candidates = index.candidates(query, 90.0)
    assert 42 in candidates.tolist() and len(candidates) < 10  # of 2,000 names
    loaded = NameIndex.from_arrays({k: np.array(v) for k, v in index.arrays().items()})
    assert loaded.candidates(query, 90.0).tolist() == candidates.tolist()
    broken = dict(index.arrays())
    broken["indptr"] = broken["indptr"][:-1]
    with pytest.raises(ValueError, match="disagree"):
        NameIndex.from_arrays(broken)
    with pytest.raises(ValueError, match="missing"):
        NameIndex.from_arrays({"alphabet": broken["alphabet"]})
    assert NameIndex([]).candidates("anything", 90.0).tolist() == []


def test_no_name_token_holds_a_space() -> None:
    """The linker joins tokens with spaces: a key must split back into the same tokens."""
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code < 0xE000:
            continue
        for token in name_tokens(f"a{chr(code)}b {chr(code)}"):
            assert " " not in token, hex(code)


# ---------------------------------------------------------------- the linker against today's implementation
class ScanLinker:
    """The linker before the index (tuple keys, extractOne over every name): the reference."""

    def __init__(self, names: list[str], *, require_capital: bool = False, fuzzy_cutoff: float | None = 90.0) -> None:
        self.require_capital, self.fuzzy_cutoff = require_capital, fuzzy_cutoff
        self.by_tokens: dict[tuple[str, ...], str] = {}
        self.longest = 1
        for name in names:
            tokens = name_tokens(name)
            if not tokens or all(t in NAME_STOPWORDS for t in tokens) or len(tokens) > 12:
                continue
            self.by_tokens.setdefault(tokens, clean_text(name))
            self.longest = max(self.longest, len(tokens))
        self.choices = [" ".join(t) for t in self.by_tokens]
        self.names = list(self.by_tokens.values())

    def find(self, query: str) -> list[str]:
        spans = name_spans(query)
        keys = [t for t, _ in spans]
        check = self.require_capital and any(c.isupper() for c in query)
        linker = EntityLinker([], require_capital=self.require_capital)
        taken = [False] * len(keys)
        found: list[tuple[int, str]] = []
        for size in range(min(self.longest, len(keys)), 0, -1):
            for start in range(len(keys) - size + 1):
                name = self.by_tokens.get(tuple(keys[start : start + size]))
                if not any(taken[start : start + size]) and name and linker._allowed(spans, start, size, check):
                    taken[start : start + size] = [True] * size
                    found.append((start, name))
        if self.fuzzy_cutoff is not None and self.choices:
            for size in range(min(4, self.longest, len(keys)), 0, -1):
                for start in range(len(keys) - size + 1):
                    window = keys[start : start + size]
                    if any(taken[start : start + size]) or window[0] in NAME_STOPWORDS or window[-1] in NAME_STOPWORDS:
                        continue
                    text = " ".join(window)
                    if len(text) < 5 or not linker._allowed(spans, start, size, check):
                        continue
                    best = process.extractOne(text, self.choices, scorer=fuzz.ratio, score_cutoff=self.fuzzy_cutoff)
                    if best is not None:
                        taken[start : start + size] = [True] * size
                        found.append((start, self.names[best[2]]))
        return list(dict.fromkeys(name for _, name in sorted(found)))


NAME_WORDS = st.sampled_from(
    ["Euler", "euler", "Leonhard", "Leonard", "Gödel", "Godel", "Big", "Eyes", "Eye's", "the", "of", "Basel", "Basle"]
    + ["Johann", "Johan", "Bernoulli", "Bernouli", "1707", "São", "Paulo", "ŁÓDŹ", "İstanbul", "Straße", "Strasse"]
)
NAMES = st.lists(st.lists(NAME_WORDS, min_size=1, max_size=4).map(" ".join), max_size=30)


@SETTINGS
@given(names=NAMES, queries=st.lists(st.lists(NAME_WORDS, max_size=9).map(" ".join), max_size=5), capital=st.booleans())
def test_linker_finds_what_the_full_scan_found(names: list[str], queries: list[str], capital: bool) -> None:
    for cutoff in (90.0, 75.0, None):
        linker = EntityLinker(names, require_capital=capital, fuzzy_cutoff=cutoff)
        table = NameTable.for_names({str(i): n for i, n in enumerate(names)})
        prepared = EntityLinker(table.linker_names(), require_capital=capital, fuzzy_cutoff=cutoff)
        reference = ScanLinker(names, require_capital=capital, fuzzy_cutoff=cutoff)
        for query in queries:
            assert linker.find(query) == reference.find(query) == prepared.find(query), (query, cutoff)


# ---------------------------------------------------------------- the name table
def test_name_table_round_trip_reuse_and_newlines() -> None:
    names = {"a": "Leonhard  Euler", "b": "the", "c": "line\nbreak Name", "d": "", "e": "Gödel's"}
    table = NameTable.for_names(names)
    assert list(table.keys) == ["leonhard euler", "", "line break name", "", "godel"]
    assert table.displays[0] == "Leonhard Euler" and table.displays[2] == "line break Name"
    table.linker_names().index()  # built: saved with the table
    arrays = {k: np.array(v) for k, v in table.arrays().items()}
    loaded = NameTable.from_arrays(arrays)

    def rows(t: NameTable) -> tuple[list[str], ...]:
        return t.ids, list(t.texts), list(t.keys), list(t.displays)

    assert rows(loaded) == rows(table)
    assert loaded.names() == names and loaded.linker_names().built_index is not None
    again = NameTable.for_names({**names, "f": "Kurt Gödel"}, previous=loaded)
    assert again.keys[-1] == "kurt godel" and list(again.keys)[:5] == list(table.keys)
    choices = ["leonhard euler", "line break name", "godel"]
    assert list(loaded.linker_names().choices) == choices
    with pytest.raises(ValueError, match="out of range"):
        NameTable.from_arrays(dict(arrays, first_rows=np.array([0, 9, 4], np.int32)))
    older = dict(arrays, rules=np.array([0]))  # keys of other rules are recomputed
    assert list(NameTable.from_arrays(older).keys) == list(table.keys)
    for missing in ("texts_blob", "key_index", "choices_offsets", "lookup_hashes"):
        with pytest.raises(ValueError):
            NameTable.from_arrays({k: v for k, v in arrays.items() if k != missing})
    # the layout saved before this one (a string per row for ids, texts, keys and displays) still loads
    legacy: dict[str, np.ndarray] = {"rules": np.array([1])}
    same = ["" if d == t else d for d, t in zip(table.displays, table.texts)]
    columns = {"ids": table.ids, "texts": list(table.texts), "keys": list(table.keys), "displays": same}
    for name, values in columns.items():
        legacy[f"{name}_blob"], legacy[f"{name}_offsets"] = encode_strings(values)
    legacy.update({k: v for k, v in arrays.items() if k.startswith("index_")})
    old = NameTable.from_arrays(legacy)
    assert rows(old) == rows(table) and list(old.linker_names().choices) == choices
    assert old.linker_names().built_index is not None and old.names() == names


@SETTINGS
@given(st.lists(st.text(max_size=8)))
def test_strings_survive_encoding(values: list[str]) -> None:
    blob, offsets = encode_strings(values)
    assert decode_strings(blob, offsets) == values
    with pytest.raises(ValueError):
        decode_strings(blob, offsets + 1)
    with pytest.raises(ValueError):
        decode_strings(np.concatenate([blob, blob[:1], [10]]), offsets)


def test_linker_names_validate_and_iterate() -> None:
    names = LinkerNames(["a b"], ["A B"])
    assert list(names) == ["A B"] and names.longest == 2 and names.by_key == {"a b": "A B"}
    with pytest.raises(ValueError):
        LinkerNames(["a"], [])
    for bad in (-1.0, 100.5, float("nan")):
        with pytest.raises(ValueError, match="fuzzy_cutoff"):
            EntityLinker(["Euler"], fuzzy_cutoff=bad)
