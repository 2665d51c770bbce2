"""pypdf's warnings while the CLI reads a PDF: counted per file for the summary, not dumped on the terminal.

pypdf logs what it worked around in a non-compliant PDF (``logging`` warnings under ``pypdf.*``).
With no logging set up, Python prints each on stderr: the techdocs PDFs give dozens of lines of
font dictionaries ("fontTools is required to fully parse the encoding of a CFF Type1 font in
font dictionary {...}") in the middle of the progress output, none naming the file. While the
CLI loads a file, :func:`pdf_warnings` collects them instead; the ingest summary then says, per
file, how many there were and the first one (cut to one short line, escaped for the terminal).
Outside a capture (another thread, or after it), they reach the usual handlers as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["pdf_warnings", "describe"]

#: The first warning is shown cut to this many characters.
SHOWN_CHARS = 120

_LOCK = threading.Lock()
_LOCAL = threading.local()


class _Collector(logging.Handler):
    """Keeps the records of a capturing thread; hands the others to the logger's parent, as before."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = getattr(_LOCAL, "sink", None)
        if sink is not None:
            sink.append(record)
            return
        parent = logging.getLogger("pypdf").parent
        if parent is not None:
            parent.handle(record)
        elif logging.lastResort is not None:  # pragma: no cover - the root logger is always a parent
            logging.lastResort.handle(record)


_HANDLER: _Collector | None = None


def _install() -> None:
    global _HANDLER
    with _LOCK:
        if _HANDLER is None:
            _HANDLER = _Collector(logging.WARNING)
            logger = logging.getLogger("pypdf")
            logger.addHandler(_HANDLER)
            logger.propagate = False  # the collector passes on what it does not keep


@contextmanager
def pdf_warnings() -> Iterator[list[logging.LogRecord]]:
    """Collect the pypdf warnings this thread logs inside the block (the list is filled as they come)."""
    _install()
    records: list[logging.LogRecord] = []
    previous = getattr(_LOCAL, "sink", None)
    _LOCAL.sink = records
    try:
        yield records
    finally:
        _LOCAL.sink = previous


def describe(records: list[logging.LogRecord]) -> str:
    """``"12 warnings from pypdf, first: fontTools is required to fully parse …"`` (one line)."""
    first = " ".join(records[0].getMessage().split())
    if len(first) > SHOWN_CHARS:
        first = first[:SHOWN_CHARS].rstrip() + "…"
    count = f"{len(records)} warning{'s' if len(records) != 1 else ''}"
    return f"{count} from pypdf (read anyway), first: {first}"
