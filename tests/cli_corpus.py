"""The CLI tests' folder of files: the nano corpus (``write_nano_files``) plus a file of an unsupported type."""

from __future__ import annotations

from pathlib import Path

from langchain_graphrag_milvus.datasets import write_nano_files

OLD_JOHANN = "brachistochrone"  # only in the first version of johann.md
NEW_JOHANN = "Johann Bernoulli taught at the University of Groningen and later held the chair in Basel."


def write_corpus(folder: Path) -> dict[str, Path]:
    """The seed's four passages as four kinds of file, plus one file of an unsupported type."""
    files = write_nano_files(folder)
    (folder / "image.bin").write_bytes(b"\x00\x01")
    return files
