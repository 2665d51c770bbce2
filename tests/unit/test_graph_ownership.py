"""graph_path ownership: a save writes, renames and deletes only folders and files the package wrote."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.errors import GraphPathError, GraphRAGError
from langchain_graphrag_milvus.graph import GraphIndex, persist
from langchain_graphrag_milvus.graph.owned_dir import check_graph_path, owned_files, remove_owned


def small_graph(n: int = 2) -> GraphIndex:
    keys = list(range(1, n + 1))
    return GraphIndex.from_relations(
        relation_keys=keys,
        subject_keys=[10 * k for k in keys],
        object_keys=[10 * k + 1 for k in keys],
        passage_ids=[[f"p{k}"] for k in keys],
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def users_folder(root: Path) -> Path:
    folder = root / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "report.txt").write_text("the team's report", encoding="utf-8")
    (folder / "vectors.npy").write_bytes(b"not ours")
    (folder / "sub" / "notes.md").write_text("# notes", encoding="utf-8")
    return folder


def test_saving_into_a_folder_of_other_files_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    folder = users_folder(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(GraphPathError, match=r"docs.*report\.txt") as err:
        persist.save(small_graph(), folder)
    assert isinstance(err.value, GraphRAGError) and isinstance(err.value, ValueError)
    assert snapshot(tmp_path) == before  # nothing deleted, renamed or written, no .tmp/.old left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_saving_onto_a_file_is_refused_and_the_file_is_untouched(tmp_path: Path) -> None:
    file = tmp_path / "graph"
    file.write_text("a file of the user's", encoding="utf-8")
    with pytest.raises(GraphPathError, match="is a file"):
        persist.save(small_graph(), file)
    assert file.read_text(encoding="utf-8") == "a file of the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph"]


def test_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    folder = users_folder(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(folder)
    before = snapshot(folder)
    with pytest.raises(GraphPathError, match="symbolic link"):
        persist.save(small_graph(), link)
    assert snapshot(folder) == before and link.is_symlink()


def test_missing_and_empty_folders_are_used_and_an_index_is_replaced_file_by_file(tmp_path: Path) -> None:
    missing = tmp_path / "new" / "index"
    persist.save(small_graph(), missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    persist.save(small_graph(), empty)
    for path in (missing, empty):
        persist.save(small_graph(3), path)  # replaced: its own files only
        assert persist.load(path).n_relations == 3
        assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)) == [path.name]


def test_a_file_added_to_a_saved_index_makes_it_foreign(tmp_path: Path) -> None:
    path = tmp_path / "index"
    persist.save(small_graph(), path)
    (path / "mine.txt").write_text("keep me", encoding="utf-8")
    before = snapshot(tmp_path)
    with pytest.raises(GraphPathError, match="mine.txt"):
        persist.save(small_graph(3), path)
    assert snapshot(tmp_path) == before


def test_a_damaged_index_of_ours_is_still_ours(tmp_path: Path) -> None:
    path = tmp_path / "index"
    for damage in ("{not json", "[1, 2]", None):
        persist.save(small_graph(), path)
        if damage is None:
            (path / "manifest.json").unlink()
        else:
            (path / "manifest.json").write_text(damage, encoding="utf-8")
        persist.save(small_graph(3), path)  # rebuilt over it
        assert persist.load(path).n_relations == 3


@pytest.mark.parametrize("suffix", [".tmp", ".old"])
def test_siblings_are_removed_only_if_ours(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / "index"
    persist.save(small_graph(), path)
    sibling = tmp_path / f"index{suffix}"
    sibling.mkdir()
    (sibling / "diary.txt").write_text("private", encoding="utf-8")
    before = snapshot(tmp_path)
    with pytest.raises(GraphPathError, match=rf"index\{suffix}.*diary\.txt"):
        persist.save(small_graph(3), path)
    assert snapshot(tmp_path) == before
    (sibling / "diary.txt").unlink()
    persist.save(small_graph(), sibling / ".." / f"scratch{suffix}")  # unrelated: fine
    (sibling / "entity_keys.npy").write_bytes(b"half-written by a crashed save")  # ours by name: cleaned
    persist.save(small_graph(3), path)
    assert not sibling.exists() and persist.load(path).n_relations == 3


def test_check_graph_path_refuses_paths_that_hold_or_sit_in_a_forbidden_one(tmp_path: Path) -> None:
    db = tmp_path / "data" / "graph.db"
    db.mkdir(parents=True)
    (db / "segments").write_text("milvus data", encoding="utf-8")
    for bad, word in [(tmp_path / "data", "contains"), (db, "inside"), (db / "index", "inside")]:
        with pytest.raises(GraphPathError, match=word):
            check_graph_path(bad, forbidden=[db])
    relative = Path(os.path.relpath(tmp_path / "data" / "index"))
    assert check_graph_path(relative, forbidden=[db]) == (tmp_path / "data" / "index").absolute()
    with pytest.raises(GraphPathError, match="contains"):  # its .old sibling would hold the database
        check_graph_path(tmp_path / "data" / "g", forbidden=[tmp_path / "data" / "g.old" / "lite.db"])
    assert (db / "segments").read_text(encoding="utf-8") == "milvus data"


def test_remove_owned_refuses_a_folder_that_is_not_ours(tmp_path: Path) -> None:
    folder = users_folder(tmp_path)
    assert owned_files(folder) is None
    with pytest.raises(GraphPathError):
        remove_owned(folder)
    assert (folder / "report.txt").exists()
    remove_owned(tmp_path / "missing")  # nothing to do


OUR_NAMES = ["manifest.json", "entity_keys.npy", "rel_pas_indptr.npy", "passage_blob.npy", "extra_names_text.npy"]
NAME = st.one_of(
    st.sampled_from(OUR_NAMES),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=12
    ).filter(lambda n: n not in (".", "..", "manifest.json") and not n.endswith(".npy")),  # other files' names
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.sets(NAME, max_size=5), suffix=st.sampled_from(["", ".tmp", ".old"]))
def test_a_save_either_refuses_and_touches_nothing_or_replaces_only_our_files(tmp_path: Path, names, suffix) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    persist.save(small_graph(), root / "index")
    folder = root / f"index{suffix}"
    if suffix:
        folder.mkdir()
    else:
        for entry in folder.iterdir():  # the index's own files replaced by the generated ones
            entry.unlink()
    for name in names:
        (folder / name).write_bytes(b"content " + name.encode("utf-8", "surrogatepass"))
    before = snapshot(root)
    ours = all(n in OUR_NAMES for n in names)
    if ours:
        persist.save(small_graph(3), root / "index")
        assert persist.load(root / "index").n_relations == 3
        assert sorted(p.name for p in root.iterdir()) == ["index"]
    else:
        with pytest.raises(GraphPathError):
            persist.save(small_graph(3), root / "index")
        assert snapshot(root) == before
