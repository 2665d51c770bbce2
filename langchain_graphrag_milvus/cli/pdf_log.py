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
from dataclasses import dataclass

__all__ = ["Captured", "pdf_warnings", "describe"]

#: The first warning is shown cut to this many characters.
SHOWN_CHARS = 120

_LOCK = threading.Lock()
_LOCAL = threading.local()


@dataclass
class Captured:
    """One capture's warnings: how many, and the first (the others are counted, not kept).

    A broken PDF can log a warning per object; keeping every record held ≈ 0.5 KB each.
    """

    count: int = 0
    first: logging.LogRecord | None = None

    def add(self, record: logging.LogRecord) -> None:
        """Count ``record``; keep it if it is the first."""
        self.count += 1
        if self.first is None:
            self.first = record

    def __len__(self) -> int:
        return self.count


class _Collector(logging.Handler):
    """Keeps the records of a capturing thread; hands the others to the logger's parent, as before."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = getattr(_LOCAL, "sink", None)
        if sink is not None:
            sink.add(record)
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
def pdf_warnings() -> Iterator[Captured]:
    """Count the pypdf warnings this thread logs inside the block (filled as they come; the first is kept)."""
    _install()
    captured = Captured()
    previous = getattr(_LOCAL, "sink", None)
    _LOCAL.sink = captured
    try:
        yield captured
    finally:
        _LOCAL.sink = previous


def describe(captured: Captured) -> str:
    """``"12 warnings from pypdf, first: fontTools is required to fully parse …"`` (one line)."""
    record = captured.first
    try:
        text = record.getMessage() if record is not None else ""
    except Exception:  # a record whose arguments do not format: its bare message, never an error
        text = str(record.msg) if record is not None else ""
    first = " ".join(text.split())
    if len(first) > SHOWN_CHARS:
        first = first[:SHOWN_CHARS].rstrip() + "…"
    count = f"{captured.count} warning{'s' if captured.count != 1 else ''}"
    return f"{count} from pypdf (read anyway), first: {first}"
