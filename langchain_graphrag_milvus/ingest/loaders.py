"""Files and folders → chunked LangChain ``Document``s ready for :class:`MilvusGraphStore`.

Text, Markdown and reStructuredText go through ``TextLoader`` (a file of no known suffix is
read as text when its first bytes are UTF-8 text: ``README``, ``copyright``,
``changelog.Debian``; ``SourceFile.by_content`` says so; a ``.gz`` file is read decompressed,
``README.Debian.gz`` as text, up to 64 MiB), PDF through ``PyPDFLoader`` (one Document per
page), HTML through ``BSHTMLLoader`` (the standard-library parser, scripts and styles
dropped); each is then split with ``RecursiveCharacterTextSplitter`` (Markdown-aware for
``.md``). These need the ``files`` extra::

    pip install "langchain-graphrag-milvus[files]"

Every chunk carries:

* ``metadata["source"]``: the file's absolute POSIX path (the same file reached from another
  working directory is the same source), also set as ``source_id`` so
  ``store.upsert_documents`` replaces every chunk of a changed file and
  ``store.delete_documents([source])`` removes a file;
* ``page`` (PDF, counted from 0 as ``PyPDFLoader`` does) and ``title`` (HTML) where the loader
  gives them; other loader metadata (PDF producer, dates...) is dropped;
* ``file_type``, ``file_fingerprint`` (a hash of the file's bytes and the chunking settings)
  and ``file_chunks`` (how many chunks the file gave): a re-ingest skips a file whose stored
  chunks all carry its current fingerprint and are all there.

Chunk ids are ``"{hash of source}-{hash of chunk text}"`` (``-2``, ``-3``... for repeated
text): a chunk that did not change keeps its id when text before it changes, so it is
neither re-embedded nor re-extracted.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("Euler was a student of Johann Bernoulli.")
    >>> _ = (folder / "skip.bin").write_bytes(bytes(range(8)))
    >>> found = discover_files([folder])
    >>> [f.path.name for f in found.files], [Path(s).name for s, _ in found.skipped]
    (['a.txt'], ['skip.bin'])
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.ingest.compressed import MAX_GUNZIPPED, gunzip_head, gunzipped
from langchain_graphrag_milvus.ingest.markup import junk_title
from langchain_graphrag_milvus.ingest.records import MAX_ID_BYTES

if TYPE_CHECKING:
    from langchain_core.documents import Document

__all__ = [
    "FILE_TYPES",
    "ChunkSettings",
    "SourceFile",
    "Discovery",
    "LoadedFile",
    "discover_files",
    "sniff_text",
    "sniff_bytes",
    "file_kind",
    "unsupported",
    "MAX_GUNZIPPED",
    "load_file",
    "source_key",
    "is_under",
]

#: File suffix → loader kind.
FILE_TYPES: dict[str, str] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".rst": "rst",
}
#: Bytes read to tell a text file from a binary one (a file of another suffix, or none).
SNIFF_BYTES = 8192
_KEPT_METADATA = ("page", "title")
#: Bumped when loading or splitting changes, so stored fingerprints no longer match.
_LOADER_VERSION = "2"


@dataclass(frozen=True)
class ChunkSettings:
    """How files are split into passages."""

    chunk_size: int = 1000
    chunk_overlap: int = 150

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be positive")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError("chunk_overlap must be at least 0 and smaller than chunk_size")


@dataclass(frozen=True)
class SourceFile:
    """A file found under one of the given paths."""

    path: Path
    source: str
    kind: str
    #: The kind was told from the file's first bytes (no known suffix): ``README``, ``changelog.Debian``.
    by_content: bool = False
    #: The file is gzip-compressed (``.gz``): read decompressed (:mod:`.compressed`).
    compressed: bool = False

    @property
    def read_as(self) -> str:
        """How the file is read, as the CLI summary says it: ``"text by content (gzip)"``."""
        return self.kind + (" by content" if self.by_content else "") + (" (gzip)" if self.compressed else "")


@dataclass
class Discovery:
    """Files to load, and the files skipped with the reason."""

    files: list[SourceFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class LoadedFile:
    """A file's chunks, with the fingerprint that says whether it changed."""

    file: SourceFile
    fingerprint: str
    documents: list[Document]


def source_key(path: Path) -> str:
    """The source id of a file: its absolute POSIX path (symlinks not resolved)."""
    return Path(os.path.abspath(path)).as_posix()


def is_under(source: str, root: str) -> bool:
    """True if ``source`` is ``root`` itself or a file below the folder ``root``."""
    return source == root or source.startswith(root.rstrip("/") + "/")


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    pure = PurePosixPath(relative)
    return any(pure.match(p) or fnmatch.fnmatchcase(relative, p) for p in patterns)


def _consider(
    path: Path, relative: str, found: Discovery, include: Sequence[str] | None, exclude: Sequence[str]
) -> None:
    source = source_key(path)
    if exclude and _matches(relative, exclude):
        return
    if include and not _matches(relative, include):
        return
    kind, by_content, compressed = file_kind(path)
    if kind is None:
        found.skipped.append((source, unsupported(path.name)))
    elif len(source.encode("utf-8")) > MAX_ID_BYTES:
        found.skipped.append((source, f"path longer than {MAX_ID_BYTES} bytes"))
    else:
        found.files.append(SourceFile(path, source, kind, by_content, compressed))


def unsupported(name: str) -> str:
    """Why a file of this name is skipped (its suffix named)."""
    suffixes = "".join(Path(name).suffixes[-2:]) if name.lower().endswith(".gz") else Path(name).suffix
    return f"not a text, Markdown, reST, HTML or PDF file ({suffixes or 'no suffix'})"


def file_kind(path: Path, *names: str) -> tuple[str | None, bool, bool]:
    """How to read ``path``: ``(kind or None, told from its first bytes, gzip-compressed)``.

    The kind comes from the suffix of the file's name (or of ``names``, e.g. the symbolic link
    it was reached by), else from its first bytes (:func:`sniff_text`). A ``.gz`` file is read
    decompressed: ``notes.md.gz`` as Markdown, ``README.Debian.gz`` by its content (a compressed
    PDF is not read).
    """
    for name in (path.name, *names):
        if name.lower().endswith(".gz"):
            inner = FILE_TYPES.get(Path(name[:-3]).suffix.lower())
            if inner is None:
                inner = sniff_bytes(gunzip_head(path, SNIFF_BYTES))
                return (None if inner == "pdf" else inner), True, True
            return (None if inner == "pdf" else inner), False, True
        kind = FILE_TYPES.get(Path(name).suffix.lower())
        if kind is not None:
            return kind, False, False
    return sniff_text(path), True, False


def sniff_text(path: Path) -> str | None:
    """The kind of a file without a known suffix, from its first bytes: ``"text"``, ``"html"`` or ``"pdf"``.

    None for a binary file (a NUL byte, or not UTF-8 text), an empty or unreadable one.
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return None
    return sniff_bytes(head)


def sniff_bytes(head: bytes) -> str | None:
    """:func:`sniff_text` of a file's first bytes."""
    if head.startswith(b"%PDF-"):
        return "pdf"
    if not head.strip() or b"\0" in head:
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a character cut at the end of the sample
            return None
        text = head[: exc.start].decode("utf-8")
    printable = sum(c.isprintable() or c in "\n\r\t\f" for c in text)
    if printable < 0.95 * len(text):
        return None
    lower = text.lstrip()[:200].lower()
    if lower.startswith(("<!doctype html", "<html")):
        return "html"
    return "text"


def discover_files(
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
) -> Discovery:
    """Files under ``paths`` (folders recursively, hidden files and folders left out).

    Args:
        paths: Files and folders. A missing path raises ``FileNotFoundError``.
        include: Glob patterns a file's path (relative to the folder given) must match,
            e.g. ``["*.md", "docs/*"]``; ``None``: every supported type.
        exclude: Glob patterns of files to leave out (checked first).

    Returns:
        The supported files, sorted and without duplicates, and the skipped ones with why.
    """
    found = Discovery()
    for raw in paths:
        root = Path(raw)
        if root.is_file():
            _consider(root, root.name, found, include, exclude)
            continue
        if not root.is_dir():
            raise FileNotFoundError(f"no such file or folder: {str(raw)!r}")
        for folder, dirs, names in os.walk(root):  # does not follow symlinked folders (no loops)
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.startswith("."):
                    continue
                path = Path(folder) / name
                if path.is_file():
                    _consider(path, path.relative_to(root).as_posix(), found, include, exclude)
    unique = {f.source: f for f in found.files}
    found.files = sorted(unique.values(), key=lambda f: f.source)
    return found


def fingerprint(path: Path, settings: ChunkSettings) -> str:
    """Hash of the file's bytes and the settings that shape its chunks."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{_LOADER_VERSION}:{settings.chunk_size}:{settings.chunk_overlap}\0".encode())
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _loader(file: SourceFile) -> Any:
    with warnings.catch_warnings():  # langchain-community announces its own sunset on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.document_loaders import BSHTMLLoader, PyPDFLoader, TextLoader
    if file.kind == "pdf":
        return PyPDFLoader(str(file.path))
    if file.kind == "html":
        return BSHTMLLoader(
            str(file.path), open_encoding="utf-8", bs_kwargs={"features": "html.parser"}, get_text_separator="\n"
        )
    return TextLoader(str(file.path), encoding="utf-8")


def _splitter(kind: str, settings: ChunkSettings) -> Any:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    language = {"markdown": Language.MARKDOWN, "rst": Language.RST}.get(kind)
    if language is not None:
        return RecursiveCharacterTextSplitter.from_language(
            language, chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap
        )
    return RecursiveCharacterTextSplitter(chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap)


def _clean(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines (HTML and PDF text is full of them)
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _short_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def load_file(file: SourceFile, settings: ChunkSettings) -> LoadedFile:
    """Load one file with its LangChain loader and split it into chunk Documents.

    Raises:
        ImportError: The ``files`` extra is not installed.
        Exception: Whatever the loader raises for an unreadable file (the caller skips it).
    """
    from langchain_core.documents import Document

    stamp = fingerprint(file.path, settings)
    pages = gunzipped(file.path, file.kind) if file.compressed else _loader(file).load()
    splitter = _splitter(file.kind, settings)
    texts: list[tuple[str, dict[str, Any]]] = []
    for page in pages:
        kept = {k: page.metadata[k] for k in _KEPT_METADATA if isinstance(page.metadata.get(k), (str, int))}
        if isinstance(kept.get("title"), str) and junk_title(str(kept["title"])):
            del kept["title"]  # "Enscript Output", "Microsoft Word - x.doc": the tool, not the file
        text = _clean(page.page_content)
        title = kept.get("title")
        if file.kind == "html" and isinstance(title, str) and title and text.startswith(title + "\n"):
            text = text[len(title) + 1 :].lstrip()  # BSHTMLLoader's text starts with the <title>
        for chunk in splitter.split_text(text):
            if chunk.strip():
                texts.append((chunk, kept))
    prefix = _short_hash(file.source)
    seen: dict[str, int] = {}
    documents = []
    for text, kept in texts:
        key = _short_hash(text)
        seen[key] = seen.get(key, 0) + 1
        chunk_id = f"{prefix}-{key}" + (f"-{seen[key]}" if seen[key] > 1 else "")
        metadata = {
            **kept,
            "source": file.source,
            "source_id": file.source,
            "file_type": file.kind,
            "file_fingerprint": stamp,
            "file_chunks": len(texts),
        }
        documents.append(Document(id=chunk_id, page_content=text, metadata=metadata))
    return LoadedFile(file=file, fingerprint=stamp, documents=documents)
