"""The memory report counts what a graph state really holds: checked against tracemalloc, and part by part."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.sizes import Sizer
from langchain_graphrag_milvus.milvus.graph_memory import ITEMS, release_free_memory, report_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_memory import report, traced_build  # noqa: E402


def test_strings_in_containers_are_counted_once_each() -> None:
    shared = "Leonhard Euler of Basel"
    names = {"e1": shared, "e2": "Johann Bernoulli"}
    s = Sizer()
    first = s.size(names)
    expected = sum(sys.getsizeof(o) for o in (names, "e1", "e2", shared, "Johann Bernoulli"))
    assert first == expected
    assert s.size([shared, shared]) == sys.getsizeof([shared, shared])  # the string was counted with the dict


def test_arrays_count_their_buffer_once_and_mapped_files_apart(tmp_path: Path) -> None:
    a = np.arange(10_000, dtype=np.int64)
    s = Sizer()
    both = s.size(a, a[100:], a[::2])
    assert a.nbytes < both < a.nbytes + 3 * sys.getsizeof(a[:0]) + 1
    np.save(tmp_path / "a.npy", a)
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    s2 = Sizer()
    assert s2.size(mapped, mapped[5:]) < 1_000 and s2.mapped >= a.nbytes


def test_stop_leaves_a_part_for_a_later_item() -> None:
    inner = ["x" * 1000]
    outer = {"inner": inner, "other": "y"}
    s = Sizer()
    assert s.size(outer, stop=(inner,)) < 1000
    assert s.size(inner) > 1000


def test_an_empty_state_reports_zero_for_what_is_not_built() -> None:
    rep = report_of(None)
    assert list(rep.items) == list(ITEMS) and rep.total == 0 and rep.per_million_relations == 0.0
    small = report_of(
        GraphIndex.from_relations(relation_keys=[1], subject_keys=[2], object_keys=[3], passage_ids=[["p"]])
    )
    assert small.items["graph arrays"] > 0 and small.items["entity names"] == 0


@pytest.fixture(scope="module", params=[16.75, 2.1], ids=["synthetic-degree", "musique-entities"])
def traced(request: pytest.FixtureRequest) -> tuple[dict, int]:
    """50k relations: 6k entities (synthetic.py's degree) or 35k (musique100's ~1 entity per relation)."""
    return traced_build(50_000, seed=7, mean_degree=request.param)


def test_the_report_total_matches_what_tracemalloc_measured(traced: tuple[dict, int]) -> None:
    state, held = traced
    rep = report(state)
    assert 0.8 * held <= rep.total <= 1.25 * held, (rep.total, held, rep.items)


def test_every_built_part_is_an_item(traced: tuple[dict, int]) -> None:
    state, _ = traced
    rep = report(state)
    built = ("graph arrays", "passage ids", "entity names", "name table", "linker names", "fuzzy index", "word index")
    assert all(rep.items[name] > 0 for name in built), rep.items
    assert rep.items["views"] == rep.items["pending changes"] == 0
    # the names: an 8-byte key, a 4-byte offset and the UTF-8 bytes of a name of two or more words
    assert rep.items["entity names"] > 20 * state["graph"].n_entities
    assert rep.mapped == 0 and rep.n_relations == 50_000
    # GraphIndex.nbytes counts the graph's arrays only: less than the whole state
    assert rep.array_bytes < rep.total


def test_a_clean_name_is_its_own_display_name() -> None:
    from langchain_graphrag_milvus.text.name_table import NameTable

    table = NameTable.for_names({"e1": "Leonhard Euler", "e2": "Johann  Bernoulli"})
    assert table.display_rows.tolist() == [1]  # only a name that cleaning changes keeps a display name
    assert table.displays[1] == "Johann Bernoulli" and table.texts[1] == "Johann  Bernoulli"
    assert table.displays[0] == "Leonhard Euler"


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim; /proc")
def test_release_free_memory_gives_freed_heap_pages_back() -> None:
    """Freed blocks below a live one stay resident until released; the release gives them back (and only them)."""
    blocks = [bytes(4096) for _ in range(50_000)]  # ~200 MiB of malloc'ed blocks
    pin = bytes(4096)  # allocated after them: the heap cannot shrink from its top
    del blocks
    before = _rss()
    assert release_free_memory() is True
    released = before - _rss()
    assert released > 100 * 2**20, f"released {released / 2**20:.1f} MiB of ~195 freed"
    assert pin == bytes(4096)  # what is in use is untouched
