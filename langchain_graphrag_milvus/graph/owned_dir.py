"""Which folders a saved graph index may use, and removing only the files it wrote.

A ``graph_path`` is the package's to write, rename and delete only if it is

- missing (it is created), or an empty directory;
- a directory holding this package's ``manifest.json`` (format, list of files) and no
  entry the manifest does not list;
- a directory holding only regular files named as this package names them
  (``manifest.json``, the index's ``.npy`` arrays): an index of ours whose manifest is
  damaged or missing, or one a crash left half-written (it is rebuilt, see
  :mod:`.persist`).

Anything else (a file, a symbolic link, a folder holding other files or folders) is not
ours: :class:`~langchain_graphrag_milvus.errors.GraphPathError`, naming the path and what
it holds, before anything is written. The same holds for the ``.tmp`` and ``.old``
siblings a save uses. Replacing an index deletes only the files listed (or named) as
ours, then the empty directory: never a tree of unknown files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from langchain_graphrag_milvus.errors import GraphPathError

__all__ = ["check_graph_path", "owned_files", "remove_owned", "siblings", "MANIFEST"]

MANIFEST = "manifest.json"
#: The names :func:`~.persist.save` gives the files of an index.
_OUR_NAME = re.compile(
    r"manifest\.json|(?:(?:entity|relation)_(?:keys|sorted_keys|sorted_index)|rel_(?:subject|object)"
    r"|(?:ent_rel|rel_pas|pas_rel|synonyms|walk_rel_nbr)_(?:indptr|indices)|passage_(?:blob|offsets)"
    r"|extra_[A-Za-z0-9_]+)\.npy"
)
_SHOWN = 5


def siblings(path: Path) -> tuple[Path, Path]:
    """The temporary and previous directories a save of ``path`` uses (``x.tmp``, ``x.old``)."""
    return path.with_name(path.name + ".tmp"), path.with_name(path.name + ".old")


def _listed(directory: Path) -> set[str] | None:
    """The files a readable manifest of this package lists (None: none such)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not isinstance(manifest.get("format"), int):
        return None
    return {str(name) for name in files} | {MANIFEST}


def owned_files(directory: Path) -> list[Path] | None:
    """The entries of ``directory`` if all of them are this package's index files, else None.

    ``[]`` for an empty directory. Only regular files count: a sub-directory or a symbolic
    link makes the directory not ours.
    """
    entries = list(directory.iterdir())
    if not entries:
        return []
    if any(e.is_symlink() or not e.is_file() for e in entries):
        return None
    listed = _listed(directory)
    if listed is not None and all(e.name in listed for e in entries):
        return entries
    if all(_OUR_NAME.fullmatch(e.name) for e in entries):  # damaged, missing manifest or half-written
        return entries
    return None


def _describe(path: Path) -> str:
    """What a path holds, for a message."""
    if path.is_symlink():
        return f"a symbolic link to {os.readlink(path)!r}"
    if not path.is_dir():
        return "a file"
    names = sorted(e.name + ("/" if e.is_dir() else "") for e in path.iterdir())
    foreign = [n for n in names if not _OUR_NAME.fullmatch(n)] or names
    shown = ", ".join(repr(n) for n in foreign[:_SHOWN]) + (", ..." if len(foreign) > _SHOWN else "")
    return f"a folder of {len(names)} entries this package did not write ({shown})"


def _check_ours(path: Path, label: str) -> None:
    if not os.path.lexists(path):
        return
    if not path.is_symlink() and path.is_dir() and owned_files(path) is not None:
        return
    raise GraphPathError(
        f"{label} is {_describe(path)}; a graph_path must be missing, an empty folder "
        "or a graph index saved by langchain-graphrag-milvus (which never deletes files it did not write): "
        "choose another path"
    )


def _inside(path: Path, other: Path) -> bool:
    return path == other or other in path.parents


def check_graph_path(path: str | os.PathLike[str], *, forbidden: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Check that the package may save a graph index at ``path``; return it as an absolute path.

    Nothing is written. Call it before anything else writes (the store does so at
    construction and :func:`~.persist.save` before each save); the CLI passes its ingest
    roots as ``forbidden``.

    Args:
        path: The ``graph_path``.
        forbidden: Paths the index may neither be, lie inside nor contain (the Milvus Lite
            data directory, folders being ingested). Compared after resolving symbolic links.

    Raises:
        GraphPathError: ``path`` (or its ``.tmp``/``.old`` sibling) is a file, a symbolic
            link or a folder holding anything but this package's index files, or it is,
            contains or lies inside a ``forbidden`` path.
    """
    target = Path(os.path.abspath(Path(path).expanduser()))
    real = target.resolve()
    tmp, old = siblings(target)
    for item in forbidden:
        other = Path(item).expanduser().resolve()
        where = [p for p in (real, tmp.resolve(), old.resolve()) if _inside(p, other) or _inside(other, p)]
        if where:
            relation = "lies inside" if _inside(where[0], other) else "contains"
            raise GraphPathError(
                f"graph_path={str(target)!r} {relation} {str(Path(item))!r}, which the store does not own as an index "
                "folder (the Milvus Lite database or a folder being ingested); choose a separate folder for graph_path"
            )
    _check_ours(target, f"graph_path={str(target)!r}")
    for sibling in (tmp, old):
        _check_ours(sibling, f"{str(sibling)!r} (where a save of graph_path={str(target)!r} writes)")
    return target


def remove_owned(directory: Path) -> None:
    """Delete the index files of ``directory``, then the directory (nothing if it is missing).

    Raises:
        GraphPathError: It holds anything this package did not write (nothing is deleted).
    """
    if not os.path.lexists(directory):
        return
    _check_ours(directory, repr(str(directory)))
    for entry in owned_files(directory) or []:
        entry.unlink()
    directory.rmdir()
