"""pypdf's warnings while the CLI reads a PDF: collected per file, not printed (``cli/pdf_log.py``).

A real non-compliant PDF (the nano corpus' PDF with a wrong ``startxref`` offset) read by the real
loader; pypdf works around it and logs warnings.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import pytest

from langchain_graphrag_milvus.cli.pdf_log import SHOWN_CHARS, Captured, describe, pdf_warnings
from langchain_graphrag_milvus.cli.summary import IngestSummary
from langchain_graphrag_milvus.datasets import write_nano_files
from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, SourceFile, load_file

pytest.importorskip("pypdf")
pytest.importorskip("langchain_community")


def broken_pdf(folder: Path) -> Path:
    """The nano corpus' PDF with its ``startxref`` pointing 7 bytes off: pypdf reads it and warns."""
    write_nano_files(folder)
    pdf = next(folder.rglob("*.pdf"))
    fixed = re.sub(
        rb"startxref\s+(\d+)", lambda m: b"startxref\n" + str(int(m.group(1)) + 7).encode(), pdf.read_bytes()
    )
    broken = pdf.with_name("broken.pdf")
    broken.write_bytes(fixed)
    return broken


def _load(path: Path) -> int:
    return len(load_file(SourceFile(path=path, source=str(path), kind="pdf"), ChunkSettings()).documents)


def test_warnings_of_a_read_are_collected_and_not_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = broken_pdf(tmp_path)
    with pdf_warnings() as logged:
        assert _load(pdf) == 2  # read anyway: both pages
    assert logged.count >= 1 and logged.first is not None and logged.first.name.startswith("pypdf")
    assert capsys.readouterr().err == ""
    line = describe(logged)
    assert line.startswith(f"{len(logged)} warning") and "from pypdf (read anyway), first: " in line
    assert "startxref" in line


def test_outside_a_capture_and_in_other_threads_warnings_reach_the_handlers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pdf = broken_pdf(tmp_path)
    with pdf_warnings():
        pass  # installs the collector
    with caplog.at_level(logging.WARNING):
        _load(pdf)
    assert any(r.name.startswith("pypdf") for r in caplog.records)  # as before: not swallowed
    caplog.clear()
    seen: list[int] = []
    with caplog.at_level(logging.WARNING), pdf_warnings() as logged:
        other = threading.Thread(target=lambda: seen.append(_load(pdf)))
        other.start()
        other.join()
    assert seen == [2] and logged.count == 0 and logged.first is None  # another thread's read is not this capture's
    assert any(r.name.startswith("pypdf") for r in caplog.records)


def test_the_summary_line_is_one_short_escaped_line() -> None:
    record = logging.LogRecord(
        "pypdf._cmap", logging.WARNING, "x", 1, "font \x1b[31m{" + "600, " * 100 + "}", None, None
    )
    captured = Captured()
    captured.add(record)
    captured.add(record)
    line = describe(captured)
    assert line.startswith("2 warnings from pypdf") and line.endswith("…")
    assert len(line.split("first: ", 1)[1]) <= SHOWN_CHARS + 1
    summary = IngestSummary(read_with_warnings=[("docs/a\x1b[2J.pdf", line)])
    text = summary.text()
    assert "\x1b" not in text and "read docs/a" in text and "\n" not in text.split("read docs/a", 1)[1].strip()


def test_a_capture_keeps_one_record_however_many_are_logged() -> None:
    """A PDF that logs a warning per object is counted, not held: one record is kept."""
    logger = logging.getLogger("pypdf._reader")
    with pdf_warnings() as logged:
        for i in range(10_000):
            logger.warning("object %d is broken", i)
    assert logged.count == 10_000 and logged.first is not None
    assert describe(logged) == "10000 warnings from pypdf (read anyway), first: object 0 is broken"


def test_a_record_that_does_not_format_is_described_by_its_message() -> None:
    """describe never raises (it runs for a file that was read): a bad format falls back to the bare message."""
    captured = Captured()
    captured.add(logging.LogRecord("pypdf", logging.WARNING, "x", 1, "bad %d format", ("not a number",), None))
    assert describe(captured) == "1 warning from pypdf (read anyway), first: bad %d format"


def test_a_summary_of_many_warned_files_says_how_many_it_leaves_out() -> None:
    """Past 50 files the text summary says how many more were read with warnings (as for skipped files)."""
    warned = [(f"docs/{i}.pdf", "1 warning from pypdf (read anyway), first: x") for i in range(53)]
    text = IngestSummary(read_with_warnings=warned).text()
    assert "read docs/49.pdf" in text and "read docs/50.pdf" not in text
    assert "... and 3 more read with warnings" in text
