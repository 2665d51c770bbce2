"""Saving and loading a graph (:class:`~.data.GraphData`, e.g. a ``GraphIndex``) as ``.npy`` files.

A directory holds one ``.npy`` file per array plus ``manifest.json`` (format, counts, the
fingerprint of the data the index was built from, and the length and CRC-32 of every
file). Loading checks the manifest, every file's length and checksum and the arrays'
shapes before memory-mapping them; anything damaged, missing or mismatched raises
:class:`IndexFileError` (never a raw ``ValueError``/``JSONDecodeError``/``OSError``), so
the caller can rebuild the index. Callers may save more arrays with the index (``extra``,
e.g. the entity names of the graph cache), covered by the same manifest and checks.
The push walk's relation lists (:func:`~.push_walk.push_neighbours`) are saved too, so a
loaded index answers its first query without building them; indexes saved before they
were still load (and build them on first use).
"""

from __future__ import annotations

import json
import mmap
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import numpy as np

from langchain_graphrag_milvus.graph.csr import CSR
from langchain_graphrag_milvus.graph.data import GraphData
from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap
from langchain_graphrag_milvus.graph.owned_dir import check_graph_path, remove_owned, siblings
from langchain_graphrag_milvus.graph.push_walk import push_neighbours

__all__ = [
    "save",
    "load",
    "load_extra",
    "read_manifest",
    "verify",
    "file_checksum",
    "release_pages",
    "IndexFileError",
    "FORMAT_VERSION",
]

#: 2: the manifest lists every file with its length and CRC-32.
FORMAT_VERSION = 2
_READ_CHUNK = 1 << 22
_EXTRA = "extra_"
_WALK = "walk_rel_nbr_"
_EXTRA_NAME = re.compile(r"[A-Za-z0-9_]+")
G = TypeVar("G", bound=GraphData)


class IndexFileError(ValueError):
    """A saved index is damaged, incomplete, of another format or inconsistent with its manifest."""


def file_checksum(path: Path) -> int:
    """CRC-32 of a file's bytes (read in 4 MiB chunks)."""
    crc = 0
    with path.open("rb") as fh:
        while chunk := fh.read(_READ_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def release_pages(arrays: Iterable[np.ndarray]) -> int:
    """Take the pages of these memory-mapped arrays out of the process's resident memory; the maps stay.

    Opening a saved index reads every byte of some arrays (checksums are read from the files,
    but the shape and content checks, the walk lists' check and the name table's checks read
    the maps): each page read stays resident, counted in the process's RSS, though a query
    needs few of them. The maps are read-only views of the files, so dropping the pages
    (``madvise(MADV_DONTNEED)``) loses nothing: a page read again is mapped again from the
    page cache. Arrays that are not memory-mapped are left alone; a no-op where ``madvise``
    is missing. Returns the number of maps released.

    Example:
        >>> release_pages([np.zeros(3)])
        0
    """
    advice: int | None = getattr(mmap, "MADV_DONTNEED", None)
    if advice is None:
        return 0
    roots: dict[int, mmap.mmap] = {}
    for arr in arrays:
        root: object = arr
        while isinstance(root, np.ndarray):
            root = root.base
        if isinstance(root, mmap.mmap):
            roots[id(root)] = root
    released = 0
    for root in roots.values():
        try:
            root.madvise(advice)
        except (AttributeError, OSError, ValueError):  # no madvise here, or a closed map
            continue
        released += 1
    return released


def save(
    graph: GraphData,
    directory: str | os.PathLike[str],
    *,
    fingerprint: dict[str, Any] | None = None,
    extra: Mapping[str, np.ndarray] | None = None,
) -> Path:
    """Write the index as ``.npy`` files plus ``manifest.json`` into ``directory``.

    The files are written to a temporary directory first and renamed into place, so
    a crash never leaves a half-written index behind. ``directory`` must be missing,
    empty or hold an index saved here (:func:`~.owned_dir.check_graph_path`): replacing
    it deletes only the files the previous index wrote.

    Args:
        graph: The index.
        directory: Where to write it.
        fingerprint: What the index was built from (kept in the manifest).
        extra: More named arrays saved alongside (``extra_<name>.npy``, listed in the
            manifest with length and CRC-32 like every file; read back with
            :func:`load_extra`). Names are letters, digits and ``_``; no object arrays.

    Raises:
        ValueError: An extra array has an invalid name or holds Python objects.
        GraphPathError: ``directory`` (or its ``.tmp``/``.old`` sibling) is a file or holds
            files this package did not write (nothing is written).
    """
    target = check_graph_path(directory)  # before anything is written: a folder that is not ours is refused
    tmp, old = siblings(target)
    remove_owned(tmp)  # (left by a crashed save)
    tmp.mkdir(parents=True)
    blob, offsets = graph.passages.arrays()
    blob.decode("utf-8", "surrogatepass").encode("utf-8")  # a lone surrogate is refused (UnicodeEncodeError), as before
    arrays = {
        **{f"entity_{k}": v for k, v in graph.entities.arrays().items()},
        **{f"relation_{k}": v for k, v in graph.relations.arrays().items()},
        "rel_subject": graph.rel_subject,
        "rel_object": graph.rel_object,
        "ent_rel_indptr": graph.ent_rel.indptr,
        "ent_rel_indices": graph.ent_rel.indices,
        "rel_pas_indptr": graph.rel_pas.indptr,
        "rel_pas_indices": graph.rel_pas.indices,
        "pas_rel_indptr": graph.pas_rel.indptr,
        "pas_rel_indices": graph.pas_rel.indices,
        "synonyms_indptr": graph.synonyms.indptr,
        "synonyms_indices": graph.synonyms.indices,
        "passage_blob": np.frombuffer(blob, dtype=np.uint8),
        "passage_offsets": offsets,
    }
    # the push walk's relation lists (a transpose of the node lists): a loaded index does not build them
    walk_lists = push_neighbours(graph)[0]
    arrays.update({f"{_WALK}indptr": walk_lists.indptr, f"{_WALK}indices": walk_lists.indices})
    for name, value in (extra or {}).items():
        if not _EXTRA_NAME.fullmatch(name) or np.asarray(value).dtype.hasobject:
            raise ValueError(f"invalid extra array {name!r}: names are [A-Za-z0-9_]+, values plain arrays")
        arrays[f"{_EXTRA}{name}"] = np.asarray(value)
    files: dict[str, dict[str, int]] = {}
    for name, arr in arrays.items():
        file = tmp / f"{name}.npy"
        np.save(file, np.ascontiguousarray(arr), allow_pickle=False)
        files[file.name] = {"bytes": file.stat().st_size, "crc32": file_checksum(file)}
    manifest = {
        "format": FORMAT_VERSION,
        "entities": graph.n_entities,
        "relations": graph.n_relations,
        "passages": graph.n_passages,
        "fingerprint": fingerprint or {},
        "files": files,
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    if target.exists():
        remove_owned(old)
        target.rename(old)
        tmp.rename(target)
        remove_owned(old)  # only the files the previous index wrote
    else:
        tmp.rename(target)
    return target


def read_manifest(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a saved index (counts, format, fingerprint, files).

    Raises:
        IndexFileError: It is missing, unreadable, not JSON or not of this format.
    """
    file = Path(directory) / "manifest.json"
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexFileError(f"{file} is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexFileError(f"{file} is unreadable: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise IndexFileError(f"{file} is not a format-{FORMAT_VERSION} manifest (format {found!r})")
    if not isinstance(manifest.get("files"), dict) or not manifest["files"]:
        raise IndexFileError(f"{file} lists no files")
    return manifest


def verify(directory: str | os.PathLike[str], manifest: dict[str, Any] | None = None) -> dict[str, Any]:
    """Check every file the manifest lists: present, of its length, with its CRC-32.

    Returns:
        The manifest.

    Raises:
        IndexFileError: Naming the first file that is missing, truncated or altered.
    """
    path = Path(directory)
    manifest = read_manifest(path) if manifest is None else manifest
    for name, meta in manifest["files"].items():
        file = path / str(name)
        if file.parent != path or not isinstance(meta, dict):
            raise IndexFileError(f"the manifest in {path} lists an invalid file entry {name!r}")
        try:
            size = file.stat().st_size
            if size != meta.get("bytes"):
                raise IndexFileError(f"{file} has {size} bytes, the manifest says {meta.get('bytes')}")
            if file_checksum(file) != meta.get("crc32"):
                raise IndexFileError(f"{file} does not match its checksum")
        except OSError as exc:
            raise IndexFileError(f"{file} is missing or unreadable: {exc}") from None
    return manifest


@overload
def load(directory: str | os.PathLike[str], *, mmap: bool = ..., check: bool = ...) -> GraphData: ...
@overload
def load(directory: str | os.PathLike[str], *, mmap: bool = ..., check: bool = ..., cls: type[G]) -> G: ...
def load(
    directory: str | os.PathLike[str], *, mmap: bool = True, check: bool = True, cls: type[GraphData] = GraphData
) -> GraphData:
    """Load a graph written by :func:`save` (memory-mapped by default).

    Args:
        directory: Where :func:`save` wrote it.
        mmap: Memory-map the arrays instead of reading them.
        check: Verify every file's length and checksum first (:func:`verify`).
        cls: The class to build (``GraphIndex.load`` passes ``GraphIndex``); plain
            :class:`~.data.GraphData` by default, which has the arrays and sizes only.

    Raises:
        IndexFileError: The index is damaged, incomplete or inconsistent.
    """
    path = Path(directory)
    manifest = verify(path) if check else read_manifest(path)
    mapped: list[np.ndarray] = []
    try:
        index = _load_arrays(path, manifest, "r" if mmap else None, cls, mapped)
    except IndexFileError:
        raise
    except (OSError, ValueError, EOFError, KeyError, IndexError, UnicodeDecodeError) as exc:
        raise IndexFileError(f"the graph index in {path} cannot be read: {exc}") from None
    if (index.n_entities, index.n_relations, index.n_passages) != (
        manifest.get("entities"),
        manifest.get("relations"),
        manifest.get("passages"),
    ):
        raise IndexFileError(f"graph index in {path} does not match its manifest")
    release_pages(mapped)  # the checks read whole arrays; a query maps back the pages it reads
    return index


def load_extra(
    directory: str | os.PathLike[str],
    manifest: dict[str, Any] | None = None,
    *,
    mmap: bool = True,
    check: bool = True,
) -> dict[str, np.ndarray]:
    """The extra arrays saved with an index (:func:`save`'s ``extra``); ``{}`` if none were.

    Args:
        directory: Where :func:`save` wrote the index.
        manifest: Its manifest, if already read and verified (then nothing is checked again).
        mmap: Memory-map the arrays instead of reading them.
        check: Verify the extra files' lengths and checksums (when no manifest is given).

    Raises:
        IndexFileError: A listed extra file is missing, damaged or unreadable.
    """
    path = Path(directory)
    if manifest is None:
        manifest = read_manifest(path)
        if check:
            extras = {k: v for k, v in manifest["files"].items() if str(k).startswith(_EXTRA)}
            verify(path, {**manifest, "files": extras})
    out: dict[str, np.ndarray] = {}
    for file in manifest["files"]:
        name = str(file)
        if name.startswith(_EXTRA) and name.endswith(".npy"):
            try:
                # a plain ndarray view of the memory map, as the graph's arrays (no per-slice overhead)
                out[name[len(_EXTRA) : -4]] = np.asarray(
                    np.load(path / name, mmap_mode="r" if mmap else None, allow_pickle=False)
                )
            except (OSError, ValueError, EOFError) as exc:
                raise IndexFileError(f"{path / name} cannot be read: {exc}") from None
    return out


def _load_arrays(
    path: Path, manifest: dict[str, Any], mode: Literal["r"] | None, cls: type[G], mapped: list[np.ndarray]
) -> G:
    listed = set(manifest["files"])

    def arr(name: str) -> Any:
        if f"{name}.npy" not in listed:
            raise IndexFileError(f"the manifest in {path} does not list {name}.npy")
        # a plain ndarray view of the memory map: same pages, without np.memmap's per-slice overhead
        # (≈2 ms of a query's library time at 1.8M relations)
        out = np.asarray(np.load(path / f"{name}.npy", mmap_mode=mode, allow_pickle=False))
        mapped.append(out)
        return out

    blob = bytes(arr("passage_blob"))
    blob.decode("utf-8")  # strict, as the ids were saved
    passages = StringIdMap.from_blob(blob, np.asarray(arr("passage_offsets")))
    index = cls(
        entities=KeyMap.from_saved(arr("entity_keys"), arr("entity_sorted_keys"), arr("entity_sorted_index")),
        relations=KeyMap.from_saved(arr("relation_keys"), arr("relation_sorted_keys"), arr("relation_sorted_index")),
        passages=passages,
        rel_subject=arr("rel_subject"),
        rel_object=arr("rel_object"),
        ent_rel=CSR(arr("ent_rel_indptr"), arr("ent_rel_indices")),
        rel_pas=CSR(arr("rel_pas_indptr"), arr("rel_pas_indices")),
        pas_rel=CSR(arr("pas_rel_indptr"), arr("pas_rel_indices")),
        synonyms=CSR(arr("synonyms_indptr"), arr("synonyms_indices")),
    )
    _check_shapes(index, path)
    if f"{_WALK}indptr.npy" in listed and f"{_WALK}indices.npy" in listed:  # (absent from older indexes)
        push_neighbours(index, CSR(arr(f"{_WALK}indptr"), arr(f"{_WALK}indices")))
    return index


def _check_shapes(index: GraphData, path: Path) -> None:
    """Arrays that agree with each other (a consistent but wrong manifest is caught here)."""
    n_e, n_r, n_p = index.n_entities, index.n_relations, index.n_passages
    problems = [
        len(index.rel_subject) != n_r or len(index.rel_object) != n_r,
        len(index.ent_rel.indptr) != n_e + 1,
        len(index.rel_pas.indptr) != n_r + 1,
        len(index.pas_rel.indptr) != n_p + 1,
        len(index.synonyms.indptr) != n_e + 1,
    ]
    for csr in (index.ent_rel, index.rel_pas, index.pas_rel, index.synonyms):
        problems.append(int(csr.indptr[-1]) != len(csr.indices))
    if any(problems):
        raise IndexFileError(f"the arrays of the graph index in {path} disagree with each other")
