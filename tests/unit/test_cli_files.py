"""The CLI's file rules and terminal output, without Milvus (issue 23, "The CLI and files").

Symbolic links (each file once, none leaving the roots), gitignore-style patterns,
undecodable names, ``--graph-path`` collisions, chunk ids no other source may take, and
the one function every printed line goes through (property-based).
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.cli.discovery import display_path, find_files
from langchain_graphrag_milvus.cli.ingest_files import own_chunk_ids
from langchain_graphrag_milvus.cli.output import terminal_json, terminal_text
from langchain_graphrag_milvus.cli.summary import IngestSummary
from langchain_graphrag_milvus.cli.tenancy import check_graph_path, tenant_filter
from langchain_graphrag_milvus.errors import InvalidIdError
from langchain_graphrag_milvus.ingest.identity import check_chunk_form, chunk_source
from langchain_graphrag_milvus.ingest.loaders import source_key

pytest.importorskip("pathspec")


def _names(found: object, root: Path) -> list[str]:
    return sorted(Path(f.source).relative_to(root).as_posix() for f in found.files)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- symbolic links


def test_each_file_once_and_links_leaving_the_roots_are_skipped(tmp_path: Path) -> None:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    (docs / "sub").mkdir(parents=True)
    outside.mkdir()
    (docs / "a.txt").write_text("alpha")
    (outside / "secret.txt").write_text("secret")
    (docs / "leak.txt").symlink_to(outside / "secret.txt")
    (docs / "sub" / "alias.txt").symlink_to(docs / "a.txt")  # a second name of a file of docs
    (docs / "secrets").symlink_to(outside, target_is_directory=True)
    (docs / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    (tmp_path / "docs_link").symlink_to(docs, target_is_directory=True)

    found = find_files([docs, tmp_path / "docs_link"])
    assert [f.source for f in found.files] == [source_key(docs / "a.txt")]  # once, under its real name
    skipped = dict(found.skipped)
    assert "outside the given folders" in skipped[source_key(docs / "leak.txt")]
    assert "outside the given folders" in skipped[source_key(docs / "secrets")]
    assert "broken symbolic link" in skipped[source_key(docs / "dangling.txt")]
    assert source_key(docs / "leak.txt") in found.outside and source_key(docs / "secrets") in found.outside
    assert source_key(docs / "sub" / "alias.txt") in found.aliases
    assert not any("secret" in f.source for f in found.files)
    # the order of the roots does not change the source ids
    assert [f.source for f in find_files([tmp_path / "docs_link", docs]).files] == [source_key(docs / "a.txt")]
    # through the link alone: one file, named as reached (its real path was not seen)
    assert [f.source for f in find_files([tmp_path / "docs_link"]).files] == [source_key(tmp_path / "docs_link/a.txt")]
    # a link named on the command line is read: it was asked for by name
    assert [f.source for f in find_files([docs / "leak.txt"]).files] == [source_key(docs / "leak.txt")]
    # both roots given: the link into "outside" no longer leaves them
    both = find_files([docs, outside])
    assert _names(both, tmp_path) == ["docs/a.txt", "outside/secret.txt"]


def test_files_without_a_known_suffix_are_read_by_content_and_the_summary_says_so(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("Polkit is a toolkit for defining authorizations.\n")
    (tmp_path / "copyright").write_text("Files: *\nCopyright: 2008 David Zeuthen\n")
    (tmp_path / "changelog.Debian").write_text("polkit (122-3) unstable; urgency=medium\n")
    (tmp_path / "guide.rst").write_text("Title\n=====\n\nSome *text*.\n")
    (tmp_path / "notes.md").write_text("# Notes\n")
    (tmp_path / "index").write_text("<!DOCTYPE html><html><body><p>Hi</p></body></html>")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tmp_path / "empty").write_text("")
    found = find_files([tmp_path])
    kinds = {Path(f.source).name: (f.kind, f.by_content) for f in found.files}
    assert kinds == {
        "README": ("text", True),
        "copyright": ("text", True),
        "changelog.Debian": ("text", True),
        "guide.rst": ("rst", False),
        "notes.md": ("markdown", False),
        "index": ("html", True),
    }
    skipped = {Path(s).name: reason for s, reason in found.skipped}
    assert set(skipped) == {"logo.png", "empty"} and "(.png)" in skipped["logo.png"]
    summary = IngestSummary(files_found=len(found.files))
    summary.count_read(found.files)
    line = next(x for x in summary.text().splitlines() if x.startswith("files read as: "))
    assert line == "files read as: 1 html by content, 1 markdown, 1 rst, 3 text by content"
    # a Milvus Lite store inside the folder holds text files too (manifest.json): never read as documents
    (tmp_path / "milvus.db" / "collections").mkdir(parents=True)
    (tmp_path / "milvus.db" / "collections" / "manifest.json").write_text('{"segments": []}')
    own = find_files([tmp_path], own=[tmp_path / "milvus.db"])
    assert len(own.files) == 6
    assert dict(own.skipped)[source_key(tmp_path / "milvus.db")] == "the store's own data (--uri)"
    assert "manifest.json" in {Path(f.source).name for f in find_files([tmp_path]).files}


# ---------------------------------------------------------------------------- gitignore patterns


@pytest.mark.parametrize(
    ("include", "exclude", "expected"),
    [
        (None, ["drafts"], ["keep.md", "notes/a.txt", "notes/b.md"]),
        (None, ["drafts/"], ["keep.md", "notes/a.txt", "notes/b.md"]),
        (None, ["/drafts"], ["keep.md", "notes/a.txt", "notes/b.md", "notes/drafts/z.txt"]),
        (None, ["*.md", "!keep.md"], ["drafts/x.txt", "keep.md", "notes/a.txt", "notes/drafts/z.txt"]),
        (["*.md"], [], ["drafts/y.md", "keep.md", "notes/b.md"]),
        (["notes/"], ["drafts"], ["notes/a.txt", "notes/b.md"]),
        (["notes/*.md"], [], ["notes/b.md"]),
    ],
)
def test_include_exclude_follow_gitignore(
    tmp_path: Path, include: list[str] | None, exclude: list[str], expected: list[str]
) -> None:
    for name in ("keep.md", "drafts/x.txt", "drafts/y.md", "notes/a.txt", "notes/b.md", "notes/drafts/z.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert _names(find_files([tmp_path], include=include, exclude=exclude), tmp_path) == expected


def test_an_invalid_pattern_is_a_usage_error_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--exclude: not a valid .gitignore pattern"):
        find_files([tmp_path], exclude=["!"])
    with pytest.raises(ValueError, match="--include"):
        find_files([tmp_path], include=["\\"])


def test_fifos_are_skipped_not_read(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "a.txt").write_text("a")
    found = find_files([tmp_path])
    assert [Path(f.source).name for f in found.files] == ["a.txt"]
    assert dict(found.skipped)[source_key(tmp_path / "pipe.txt")] == "not a regular file"


# ---------------------------------------------------------------------------- undecodable names


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses names that are not UTF-8")
def test_undecodable_names_are_skipped_and_named(tmp_path: Path) -> None:
    base = os.fsencode(tmp_path)
    with open(base + b"/caf\xe9.txt", "wb") as handle:
        handle.write(b"latin-1 name")
    os.mkdir(base + b"/dossi\xe9")
    with open(base + b"/dossi\xe9/inside.txt", "wb") as handle:
        handle.write(b"in a latin-1 folder")
    (tmp_path / "ok.txt").write_text("fine")
    found = find_files([tmp_path])
    assert [Path(f.source).name for f in found.files] == ["ok.txt"]
    reasons = dict(found.skipped)
    assert "not valid UTF-8" in reasons[f"{display_path(tmp_path)}/caf\\xe9.txt"]
    assert "not valid UTF-8" in reasons[f"{display_path(tmp_path)}/dossi\\xe9"]
    for source, reason in found.skipped:  # every name is printable and JSON-safe
        json.dumps([source, reason], ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------- --graph-path


def test_graph_path_may_not_collide_with_the_roots_or_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.chdir(tmp_path)
    for bad, roots in (
        (str(docs), [docs]),  # the root itself
        (str(docs / "index"), [docs]),  # inside it
        (str(tmp_path), [docs]),  # contains it (and is the working folder)
        (".", []),  # the working folder
        ("..", []),  # contains the working folder
    ):
        with pytest.raises(ValueError, match="--graph-path"):
            check_graph_path(bad, roots)
    check_graph_path(str(tmp_path / "index"), [docs])  # a sibling is fine
    check_graph_path(None, [docs])
    assert os.listdir(tmp_path) == ["docs"]  # nothing was created


# ---------------------------------------------------------------------------- chunk ids


def test_cli_chunk_ids_are_reserved_for_their_file() -> None:
    from langchain_core.documents import Document

    docs = [Document(page_content=t) for t in ("one", "two", "one")]
    own_chunk_ids(docs, "/docs/a.txt", None)
    ids = [d.id for d in docs]
    assert len(set(ids)) == 3 and all(chunk_source(str(i)) == "/docs/a.txt" for i in ids)
    again = [Document(page_content=t) for t in ("new first chunk", "one", "two", "one")]
    own_chunk_ids(again, "/docs/a.txt", None)
    assert [d.id for d in again][1:] == ids  # unchanged text keeps its id
    scoped = [Document(page_content="one")]
    own_chunk_ids(scoped, "/docs/a.txt", "tenant a")
    assert scoped[0].id != ids[0] and chunk_source(str(scoped[0].id)) == "/docs/a.txt"
    for passage_id in ids + [scoped[0].id]:
        check_chunk_form(str(passage_id), "/docs/a.txt", "ok")
        with pytest.raises(InvalidIdError, match="chunk id"):
            check_chunk_form(str(passage_id), "/api/other", "an API document")


def test_tenant_filter() -> None:
    assert tenant_filter(None, "tenant", "a") == {"tenant": "a"}
    assert tenant_filter({"lang": "en"}, "tenant", "a") == {"lang": "en", "tenant": "a"}
    assert tenant_filter('lang == "en"', "tenant", 'a" or "1') == '(lang == "en") and ((tenant == "a\\" or \\"1"))'
    with pytest.raises(ValueError, match="--tenant"):
        tenant_filter({"tenant": "b"}, "tenant", "a")
    assert tenant_filter({"x": 1}, None, None) == {"x": 1}


# ---------------------------------------------------------------------------- terminal output


_BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in _BIDI


@given(st.text(alphabet=st.characters(codec=None), max_size=200))
def test_no_control_character_reaches_the_terminal(text: str) -> None:
    one_line = terminal_text(text)
    assert not any(_unsafe(c) for c in one_line) and "\x1b" not in one_line
    kept = terminal_text(text, newlines=True)
    assert kept.count("\n") == text.count("\n")
    assert not any(_unsafe(c) for c in kept.replace("\n", ""))
    assert terminal_text(text) == text or any(_unsafe(c) for c in text)  # safe text is unchanged


@given(st.recursive(st.text() | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)))
def test_json_output_is_safe_and_decodes_to_the_same_value(value: object) -> None:
    out = terminal_json(value)
    assert json.loads(out) == value
    for line in out.split("\n"):
        assert not any(_unsafe(c) for c in line)


def test_summary_and_errors_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_graphrag_milvus.cli.ingest import IngestSummary
    from langchain_graphrag_milvus.cli.output import emit, emit_error

    summary = IngestSummary(skipped=[("/d/\x1b]0;owned\x07.txt", "bad\rline")], cleared=[("/d/\x9b2J", "no text")])
    emit(summary.text())
    emit_error("error: file '\x1b[2J\ud800'")
    out, err = capsys.readouterr()
    for line in (out + err).splitlines():
        assert not any(_unsafe(c) for c in line)
    assert "\\x1b]0;owned\\x07.txt" in out and "\\x9b2J" in out and "\\ud800" in err


@given(
    st.text(alphabet=st.characters(codec=None), max_size=80),
    st.text(alphabet=st.characters(codec=None), max_size=40),
    st.lists(st.text(alphabet=st.characters(codec=None), max_size=30), max_size=3),
)
def test_printed_query_rows_and_summaries_hold_no_control_characters(
    text: str, source: str, relations: list[str]
) -> None:
    import contextlib
    import io

    from langchain_graphrag_milvus.cli.ingest import IngestSummary
    from langchain_graphrag_milvus.cli.output import emit
    from langchain_graphrag_milvus.cli.query import _print_row

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        _print_row({"rank": 1, "score": 0.5, "source": source, "text": text, "relations": relations})
        _print_row({"rank": 2, "source": source, "text": text, "path": True})
        summary = IngestSummary(skipped=[(source, text)], cleared=[(text, source)], deleted=[source], tenant=text)
        emit(summary.text())
        emit(terminal_json({"skipped": summary.skipped}))
    for line in buffer.getvalue().split("\n"):
        assert not any(_unsafe(c) for c in line), repr(line)


def test_gzip_compressed_files_are_read_decompressed_and_the_summary_says_so(tmp_path: Path, monkeypatch) -> None:
    import gzip

    from langchain_graphrag_milvus.ingest import compressed
    from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, load_file

    def gz(name: str, data: bytes) -> None:
        (tmp_path / name).write_bytes(gzip.compress(data))

    gz("README.Debian.gz", b"polkit for Debian\n\nThe polkitd daemon runs as its own user.\n")
    gz("notes.md.gz", b"# Notes\n\nUse `init.defaultBranch`.\n")
    gz("page.html.gz", b"<html><head><title>Guide</title></head><body><p>Hello <b>world</b></p></body></html>")
    gz("logo.png.gz", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    gz("manual.pdf.gz", b"%PDF-1.4 ...")
    (tmp_path / "broken.gz").write_bytes(b"not gzip at all")
    found = find_files([tmp_path])
    kinds = {Path(f.source).name: f.read_as for f in found.files}
    assert kinds == {
        "README.Debian.gz": "text by content (gzip)",
        "notes.md.gz": "markdown (gzip)",
        "page.html.gz": "html (gzip)",
    }
    skipped = {Path(s).name: reason for s, reason in found.skipped}
    assert set(skipped) == {"logo.png.gz", "manual.pdf.gz", "broken.gz"}
    assert "(.png.gz)" in skipped["logo.png.gz"] and "(.pdf.gz)" in skipped["manual.pdf.gz"]
    summary = IngestSummary(files_found=len(found.files))
    summary.count_read(found.files)
    line = next(x for x in summary.text().splitlines() if x.startswith("files read as: "))
    assert line == "files read as: 1 html (gzip), 1 markdown (gzip), 1 text by content (gzip)"
    by_name = {Path(f.source).name: f for f in found.files}
    readme = load_file(by_name["README.Debian.gz"], ChunkSettings())
    assert [d.page_content for d in readme.documents] == [
        "polkit for Debian\n\nThe polkitd daemon runs as its own user."
    ]
    assert readme.documents[0].metadata["source"] == by_name["README.Debian.gz"].source
    page = load_file(by_name["page.html.gz"], ChunkSettings())
    assert page.documents[0].page_content == "Hello\nworld" and page.documents[0].metadata["title"] == "Guide"
    monkeypatch.setattr(compressed, "MAX_GUNZIPPED", 10)  # a file that decompresses past the limit
    with pytest.raises(ValueError, match="MiB once decompressed"):
        load_file(by_name["README.Debian.gz"], ChunkSettings())
