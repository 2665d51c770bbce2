"""Gzip-compressed documents (``README.Debian.gz``, ``changelog.gz``, ``notes.md.gz``), read decompressed.

Debian ships most of ``/usr/share/doc`` compressed. A ``.gz`` file is read like the file it
holds: by the suffix under ``.gz`` or by its first bytes (:func:`~.loaders.file_kind`); its
text is read whole, up to :data:`MAX_GUNZIPPED` bytes (a larger one, or one that is not
UTF-8, is skipped with the reason), as one page.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

__all__ = ["MAX_GUNZIPPED", "gunzip_head", "gunzipped"]

#: Most bytes a gzip-compressed file may hold once decompressed; a larger one is skipped.
MAX_GUNZIPPED = 64 << 20


def gunzip_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a gzip file, decompressed (``b""``: not gzip, or unreadable)."""
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read(size)
    except (OSError, EOFError, zlib.error):
        return b""


def gunzipped(path: Path, kind: str) -> list[Any]:
    """The one page of a gzip-compressed text, Markdown, reST or HTML file (HTML: its text and title).

    Raises:
        ValueError: It holds more than :data:`MAX_GUNZIPPED` bytes once decompressed, or is not UTF-8.
        OSError: It is not a readable gzip file.
    """
    from langchain_core.documents import Document

    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read(MAX_GUNZIPPED + 1)
    except (EOFError, zlib.error) as exc:
        raise OSError(f"not a readable gzip file ({exc})") from None
    if len(raw) > MAX_GUNZIPPED:
        raise ValueError(f"more than {MAX_GUNZIPPED >> 20} MiB once decompressed")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text once decompressed") from None
    if kind != "html":
        return [Document(page_content=text, metadata={"source": str(path)})]
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    title = soup.title.get_text() if soup.title else ""
    return [Document(page_content=soup.get_text("\n"), metadata={"source": str(path), "title": title})]
