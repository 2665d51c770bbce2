"""The compact name structures equal the lists and dicts they replace (property tests), saved and loaded too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.text.name_map import NameMap
from langchain_graphrag_milvus.text.name_table import NameTable
from langchain_graphrag_milvus.text.strings import StringArray, StringLookup

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# any code point, lone surrogates included, and the separator; empty strings are common
TEXT = st.text(st.characters(blacklist_categories=()), max_size=12) | st.sampled_from(["", "\n", "a\nb", "\U0001f600"])
IDS = st.integers(0, 2**64 - 1).map(lambda k: format(k, "016x"))
NAMES = st.dictionaries(IDS, TEXT, max_size=25)
WORDS = st.sampled_from(["Euler", "euler", "Leonhard", "Gödel", "Godel", "the", "Big", "Eye's", "Eyes", "São", ""])
PERSON = st.lists(WORDS, max_size=4).map(" ".join) | TEXT


def save_and_map(tmp_path: Path, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays written as .npy files and memory-mapped back (as a saved graph index loads them)."""
    out = {}
    for name, value in arrays.items():
        np.save(tmp_path / f"{name}.npy", np.asarray(value), allow_pickle=False)
        out[name] = np.load(tmp_path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
    return out


@SETTINGS
@given(values=st.lists(TEXT, max_size=30), data=st.data())
def test_a_string_array_is_the_list(values: list[str], data: st.DataObject) -> None:
    strings = StringArray.from_strings(values)
    assert list(strings) == values and len(strings) == len(values)
    assert [strings[i] for i in range(-len(values), len(values))] == values + values
    assert strings.lengths().tolist() == [len(v.encode("utf-8", "surrogatepass")) for v in values]
    rows = data.draw(st.lists(st.integers(0, max(len(values) - 1, 0)), max_size=40)) if values else []
    assert list(strings.take(rows)) == [values[r] for r in rows]
    assert list(strings.concat(strings.take(rows))) == values + [values[r] for r in rows]
    other = data.draw(st.lists(st.integers(0, max(len(values) - 1, 0)), min_size=len(rows), max_size=len(rows)))
    assert strings.same_at(rows, strings, other).tolist() == [values[a] == values[b] for a, b in zip(rows, other)]
    assert list(StringArray.from_arrays(strings.arrays("x_"), "x_")) == values
    with pytest.raises(IndexError):
        strings[len(values)]


@SETTINGS
@given(values=st.lists(TEXT, max_size=30), probes=st.lists(TEXT, max_size=10))
def test_a_string_lookup_finds_the_first_position(values: list[str], probes: list[str]) -> None:
    for strings in (StringArray.from_strings(values), values):
        lookup = StringLookup(strings)
        for probe in [*values, *probes]:
            assert lookup.find(probe) == (values.index(probe) if probe in values else None)
        again = StringLookup.from_arrays(strings, lookup.arrays("l_"), "l_")
        assert [again.find(v) for v in values] == [values.index(v) for v in values]
        assert lookup.crc().tolist() == StringLookup(values).crc().tolist()


@SETTINGS
@given(names=NAMES, more=NAMES, gone=st.lists(IDS, max_size=5), probes=st.lists(IDS, max_size=5))
def test_a_name_map_is_the_dict(
    names: dict[str, str], more: dict[str, str], gone: list[str], probes: list[str]
) -> None:
    compact = NameMap.from_mapping(names)
    assert compact.compact and compact == names and names == compact and dict(compact) == names
    assert list(compact) == list(names) and list(compact.items()) == list(names.items())
    assert list(compact.values()) == list(names.values()) and len(compact) == len(names)
    for eid in [*names, *probes]:
        assert compact.get(eid) == names.get(eid) and (eid in compact) == (eid in names)
        for other in (eid.upper(), "0x" + eid[2:], " " + eid[1:], eid[:15], 5):
            if other != eid:
                assert other not in compact and compact.get(other) is None  # type: ignore[call-overload]
    merged = compact.merged(more)
    assert merged == {**names, **more} and list(merged) == list({**names, **more})
    kept = {k: v for k, v in names.items() if k not in set(gone + probes[:1])}
    assert list(compact.without(gone + probes[:1]).items()) == list(kept.items())
    assert list(merged.sorted_by_id().items()) == sorted({**names, **more}.items())
    keys = [int(k, 16) for k in [*names, *probes]]
    assert compact.names_of_keys(keys) == [names.get(format(k, "016x")) for k in keys]


@SETTINGS
@given(names=st.dictionaries(TEXT, TEXT, max_size=10), more=st.dictionaries(TEXT, TEXT, max_size=5))
def test_other_ids_keep_a_plain_dict_that_behaves_the_same(names: dict[str, str], more: dict[str, str]) -> None:
    mapped = NameMap.from_mapping(names)
    assert mapped == names and list(mapped.items()) == list(names.items())
    assert mapped.merged(more) == {**names, **more} and list(mapped.merged(more)) == list({**names, **more})
    assert NameMap.from_arrays(mapped.arrays()) == names


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(names=NAMES)
def test_a_saved_name_map_is_used_memory_mapped(tmp_path: Path, names: dict[str, str]) -> None:
    loaded = NameMap.from_arrays(save_and_map(tmp_path, NameMap.from_mapping(names).arrays()))
    assert loaded == names and list(loaded.items()) == list(names.items())
    assert all(loaded[k] == v for k, v in names.items())


def rows(table: NameTable) -> tuple[list[str], ...]:
    """Everything a table says per row, and the linker's choices and display names."""
    linker = table.linker_names()
    return table.ids, list(table.texts), list(table.keys), list(table.displays), list(linker.choices), list(linker)


@SETTINGS
@given(
    before=st.dictionaries(IDS, PERSON, max_size=12),
    after=st.dictionaries(IDS, PERSON, max_size=12),
    probes=st.lists(PERSON, max_size=5),
)
def test_a_table_reusing_rows_is_the_table_made_afresh(
    before: dict[str, str], after: dict[str, str], probes: list[str]
) -> None:
    old = NameTable.for_names(before)
    changed = {**{k: v for i, (k, v) in enumerate(before.items()) if i % 3}, **after}  # some gone, some new or renamed
    fresh, reused = NameTable.for_names(changed), NameTable.for_names(changed, previous=old)
    assert rows(fresh) == rows(reused)
    names = fresh.linker_names()
    plain = dict(zip(names.choices, names.names))  # the dict the lookup replaces
    for key in [*names.choices, *(p.casefold() for p in probes), *probes]:
        assert names.by_key.get(key) == plain.get(key) == reused.linker_names().by_key.get(key)
    assert len(names.by_key) == len(plain)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(names=st.dictionaries(IDS, PERSON, max_size=12))
def test_a_saved_table_loads_memory_mapped_and_equal(tmp_path: Path, names: dict[str, str]) -> None:
    table = NameTable.for_names(names)
    table.linker_names().index()
    loaded = NameTable.from_arrays(save_and_map(tmp_path, table.arrays()))
    assert rows(loaded) == rows(table) and loaded.names() == names
    assert loaded.linker_names().built_index is not None or not len(table.choices)
    for key in table.choices:
        assert loaded.linker_names().by_key.get(key) == table.linker_names().by_key.get(key)
