r"""The files ``ingest`` reads: each file once, never outside the given roots, gitignore patterns.

Rules (what a team keeping its own folders next to the store expects):

* **Each file once.** Every file is identified by its resolved path (symbolic links
  followed). A file reached twice (``ingest docs docs_link``, or a link inside ``docs``
  to another file of ``docs``) is read once; its source id is the path it has without
  links if that path was seen, else the smallest path that reached it, so the choice
  does not depend on the order of the arguments.
* **Never outside the roots.** A symbolic link found inside a folder whose target is
  not below one of the given roots (resolved) is skipped and listed, as is a broken
  link. A path named on the command line is always read (it was asked for by name).
  Linked folders are not descended (their content is read where it lives, if that is
  under a root).
* **gitignore patterns.** ``--include`` and ``--exclude`` follow ``.gitignore`` syntax
  (the ``pathspec`` library): ``drafts`` and ``drafts/`` leave out a folder ``drafts``
  at any depth, ``/drafts`` only at the root, ``*.md`` any Markdown file, ``!keep.md``
  re-includes. Patterns match paths relative to the folder given.
* **Undecodable names.** A file or folder whose name is not valid UTF-8 cannot be a
  source id (Milvus stores UTF-8): it is skipped and named with backslash escapes
  (``caf\xe9.txt``); the rest of the ingest goes on.
* Hidden files and folders (a name starting with ``.``) are left out, and so is the
  store's own data (``own``: the Milvus Lite folder of ``--uri``), which files read by
  content would otherwise take for documents.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.ingest.identity import MAX_ID_BYTES

__all__ = ["FoundFiles", "display_path", "find_files", "is_within"]

#: Room kept in a source id for the chunk suffix (``#`` + 22 digits + ``@`` + 12 hex).
_CHUNK_ID_ROOM = 40


@dataclass
class FoundFiles:
    """Files to load (``SourceFile``), files skipped with why, links that left the roots.

    ``aliases``: source ids of paths that reached a file read under another source id, or
    that leave the roots; ``ingest --sync`` deletes what the store holds under them
    (copies an earlier version of the CLI ingested).
    """

    files: list[Any] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    aliases: set[str] = field(default_factory=set)


def display_path(path: str | os.PathLike[str]) -> str:
    r"""A path as text a terminal and JSON can hold: undecodable bytes as ``\xNN`` escapes."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "backslashreplace")


def _decodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_within(path: Path, roots: Sequence[Path]) -> bool:
    """True if the resolved ``path`` is one of ``roots`` or below one of them."""
    return any(path == root or root in path.parents for root in roots)


def _spec(patterns: Sequence[str] | None, option: str) -> Any:
    if not patterns:
        return None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except Exception as exc:  # pathspec's pattern errors: a usage error naming the option
        raise ValueError(f"{option}: not a valid .gitignore pattern ({exc})") from None


class _Walk:
    def __init__(
        self, roots: Sequence[Path], include: Sequence[str] | None, exclude: Sequence[str], own: Sequence[Path]
    ) -> None:
        self.resolved_roots = [r.resolve() for r in roots]
        self.own = {p.resolve() for p in own}
        self.include = _spec(include, "--include")
        self.exclude = _spec(exclude, "--exclude")
        self.found = FoundFiles()
        self.by_target: dict[Path, list[Path]] = {}

    def skip(self, path: str | os.PathLike[str], reason: str) -> None:
        self.found.skipped.append((display_path(os.path.abspath(path)), reason))

    def excluded(self, relative: str, is_dir: bool) -> bool:
        if self.exclude is not None and self.exclude.match_file(relative + ("/" if is_dir else "")):
            return True
        return not is_dir and self.include is not None and not self.include.match_file(relative)

    def consider(self, path: Path, relative: str, named: bool) -> None:
        if not named and self.excluded(relative, is_dir=False):
            return
        if not _decodable(str(path)):
            self.skip(path, "its name is not valid UTF-8 (rename the file to ingest it)")
            return
        target = path.resolve()
        if target in self.own:
            self.skip(path, "the store's own data (--uri)")
            return
        if not target.is_file():
            self.skip(path, "broken symbolic link" if path.is_symlink() else "not a regular file")
            return
        if not named and path.is_symlink() and not is_within(target, self.resolved_roots):
            self.found.outside.append(display_path(os.path.abspath(path)))
            self.found.aliases.add(os.path.abspath(path))
            self.skip(path, f"symbolic link to {display_path(target)}, outside the given folders")
            return
        self.by_target.setdefault(target, []).append(path)

    def walk(self, root: Path) -> None:
        def unlisted(error: OSError) -> None:  # a folder that cannot be listed is named, never fatal
            self.skip(error.filename or root, f"folder cannot be read ({error.strerror or error})")

        for folder, dirs, names in os.walk(root, onerror=unlisted):
            base = Path(folder)
            kept = []
            for name in sorted(dirs):
                path = base / name
                relative = path.relative_to(root).as_posix()
                if name.startswith(".") or self.excluded(relative, is_dir=True):
                    continue
                if not _decodable(name):
                    self.skip(path, "folder name is not valid UTF-8 (its files are not read)")
                elif path.resolve() in self.own:
                    self.skip(path, "the store's own data (--uri)")
                elif path.is_symlink():  # not descended: its files are read where they live
                    target = path.resolve()
                    if not is_within(target, self.resolved_roots):
                        self.found.outside.append(display_path(os.path.abspath(path)))
                        self.skip(path, f"symbolic link to {display_path(target)}, outside the given folders")
                else:
                    kept.append(name)
            dirs[:] = kept
            for name in sorted(names):
                if not name.startswith("."):
                    path = base / name
                    self.consider(path, path.relative_to(root).as_posix(), named=False)


def _source(paths: list[Path], target: Path) -> str:
    from langchain_graphrag_milvus.ingest.loaders import source_key

    keys = sorted({source_key(p) for p in paths})
    real = source_key(target)
    return real if real in keys else keys[0]


def find_files(
    paths: Sequence[str | os.PathLike[str]],
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    own: Sequence[str | os.PathLike[str]] = (),
) -> FoundFiles:
    """The files under ``paths`` to ingest, by the rules of this module.

    Args:
        paths: Files and folders (must exist).
        include: gitignore-style patterns a file must match (``None``: all).
        exclude: gitignore-style patterns of files and folders to leave out.
        own: Files and folders this package writes (a Milvus Lite store): skipped and listed.

    Returns:
        The files (sorted by source id), the skipped paths with the reason, and the
        symbolic links that were skipped because they leave the roots.
    """
    from langchain_graphrag_milvus.ingest.loaders import SourceFile, file_kind, source_key, unsupported

    roots = [Path(p) for p in paths]
    walk = _Walk(roots, include, exclude, [Path(p) for p in own])
    for root in roots:
        if not _decodable(str(root)):
            walk.skip(root, "its name is not valid UTF-8")
        elif root.is_dir():
            walk.walk(root)
        elif root.exists():
            walk.consider(root, root.name, named=True)
        else:
            raise FileNotFoundError(f"no such file or folder: {display_path(root)!r}")
    for target, reached in walk.by_target.items():
        source = _source(reached, target)
        walk.found.aliases.update(p for p in (source_key(r) for r in reached) if p != source)
        # by suffix; README, copyright, changelog.Debian...: by their first bytes; README.Debian.gz decompressed
        kind, by_content, compressed = file_kind(target, Path(source).name)
        if kind is None:
            walk.found.skipped.append((source, unsupported(Path(source).name)))
        elif len(source.encode("utf-8")) > MAX_ID_BYTES - _CHUNK_ID_ROOM:
            walk.found.skipped.append((source, f"path longer than {MAX_ID_BYTES - _CHUNK_ID_ROOM} bytes"))
        else:
            walk.found.files.append(SourceFile(Path(source), source, kind, by_content, compressed))
    walk.found.files.sort(key=lambda f: f.source)
    walk.found.skipped.sort()
    return walk.found


def check_graph_path(graph_path: str | None, roots: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Refuse a ``--graph-path`` that is, contains or sits inside the working folder or a root.

    Raises:
        ValueError: Naming ``--graph-path`` and the folder it collides with.
    """
    if not graph_path:
        return
    where = Path(graph_path).resolve()
    cwd = Path.cwd().resolve()
    if where == cwd or where in cwd.parents:
        raise ValueError(
            f"--graph-path {display_path(graph_path)!r} is the working folder or contains it; the index's files "
            "would be written among yours: name a new folder, e.g. --graph-path .graphrag-index"
        )
    for root in roots:
        resolved = Path(root).resolve()
        if is_within(where, [resolved]) or where in resolved.parents:
            raise ValueError(
                f"--graph-path {display_path(graph_path)!r} is inside or contains the ingest path "
                f"{display_path(root)!r}; keep the index outside the folders you ingest"
            )
