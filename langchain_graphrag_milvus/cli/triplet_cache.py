"""Where ``ingest`` keeps extracted triplets between runs: a sqlite file beside the store.

* A Milvus Lite store ``DIR/NAME.db`` gets ``DIR/NAME.db.triplets.sqlite`` beside it.
* A server store gets ``triplets-<hash>.sqlite`` under the user's cache folder
  (``$XDG_CACHE_HOME/langchain-graphrag-milvus``, else ``~/.cache/langchain-graphrag-milvus``),
  the hash being of the server URI, the database and the collection prefix: one file per store.
* ``--extraction-cache PATH`` names the file; ``--no-extraction-cache`` keeps extractions in
  memory for the run only.

Entries are keyed by the extractor's identity and the passage text (and title)
(:mod:`langchain_graphrag_milvus.ingest.extraction_cache`): switching extractors (offline,
an LLM, another model or prompt) never reuses another extractor's triplets. The file is
this package's own: a file at that path that is not one of its caches (another program's
sqlite database, a text file, a folder) is refused with
:class:`~langchain_graphrag_milvus.errors.ExtractionCacheError` before anything is
written, never overwritten. Deleting the file is always safe: it only costs extractions.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path
from typing import Any

__all__ = ["CACHE_SUFFIX", "add_cache_arguments", "default_cache_path", "extraction_cache_path"]

#: Appended to a Lite store's path to name its cache file.
CACHE_SUFFIX = ".triplets.sqlite"
_APP = "langchain-graphrag-milvus"


def add_cache_arguments(parser: Any) -> None:
    """``--extraction-cache PATH`` and ``--no-extraction-cache``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--extraction-cache",
        metavar="PATH",
        help="sqlite file of extracted triplets kept between runs (default: beside a Lite store, "
        f"NAME.db{CACHE_SUFFIX}; for a server, per store under ~/.cache/{_APP})",
    )
    group.add_argument(
        "--no-extraction-cache",
        action="store_true",
        help="keep extracted triplets in memory for this run only",
    )


def _user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / _APP


def default_cache_path(uri: str, prefix: str, db_name: str = "") -> Path:
    """The cache file of a store: beside a Lite ``.db``, else in the user's cache folder."""
    from langchain_graphrag_milvus.milvus.lite import is_lite

    if is_lite(uri):
        lite = Path(uri).expanduser().absolute()
        return lite.with_name(lite.name + CACHE_SUFFIX)
    digest = hashlib.sha256("\0".join((uri, db_name, prefix)).encode("utf-8", "surrogatepass")).hexdigest()
    return _user_cache_dir() / f"triplets-{digest[:24]}.sqlite"


def extraction_cache_path(args: argparse.Namespace, extractor: Any) -> Path | None:
    """The cache file of this ``ingest`` (None: in memory, or no extractor to cache)."""
    if extractor is None or getattr(args, "no_extraction_cache", False):
        return None
    given = getattr(args, "extraction_cache", None)
    if given:
        return Path(given).expanduser()
    return default_cache_path(str(args.uri), str(args.prefix), str(getattr(args, "db_name", "") or ""))
