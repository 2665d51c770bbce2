"""Offline extraction of technical text (real snippets of the machine's docs) and files read by content.

The spaCy parser runs (no mocks); snippets are short excerpts of pip's Markdown docs, git's
release notes, a ``pydoc -w`` page and a PDF's metadata.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus.ingest.loaders import discover_files, sniff_text
from langchain_graphrag_milvus.ingest.markup import clean_markup, junk_title, looks_like_markup
from langchain_graphrag_milvus.ingest.offline import OfflineTripletExtractor, split_title
from langchain_graphrag_milvus.ingest.offline_rules import clean_name, generic_name

PIP_MD = """## Using system certificate stores

```{versionadded} 22.2
Experimental support, behind `--use-feature=truststore`.
```

It is possible to use the system trust store, instead of the bundled certifi
certificates for verifying HTTPS certificates. Python uses the `truststore` package.

```console
$ python -m pip install SomePackage --use-feature=truststore
```
"""

GIT_TXT = """Git 2.23 Release Notes
======================

 * Two new commands "git switch" and "git restore" are introduced to
   split "checking out a branch to work on advancing its history" and
   "checking out paths out of the index and/or a tree-ish to work on
   advancing the current history" out of the single "git checkout"
   command.
"""

PYDOC_HTML_TEXT = """Functions

file_digest
(fileobj, digest, /, *, _bufsize=262144)
Hash the contents of a file-like
object
. Returns a digest
object
.

Methods defined here:

update
(self, data, /)
Update this hash
object
's state with the provided bytes-like
object
."""


@pytest.fixture(scope="module")
def extractor() -> OfflineTripletExtractor:
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor

    return create_offline_triplet_extractor()


def names(triplets: list[list[str]]) -> set[str]:
    return {t[0] for t in triplets} | {t[2] for t in triplets}


def test_markdown_heading_is_context_not_subject_and_code_is_gone(extractor: OfflineTripletExtractor) -> None:
    text, title = split_title(PIP_MD)
    assert title is None  # "## Using ..." is a heading, not the passage's title line
    assert text.startswith("Using system certificate stores.")
    assert "$" not in text and "```" not in text and "`" not in text and "{versionadded}" not in text
    assert "truststore package" in text
    found = extractor.invoke(PIP_MD)["triplets"]
    assert found, "the prose still gives facts"
    every = names(found)
    assert not any(n.startswith(("#", "$", "`")) for n in every)
    assert "## Using system certificate stores" not in every and "Using system certificate stores" not in every


def test_release_notes_title_and_quoted_commands(extractor: OfflineTripletExtractor) -> None:
    text, title = split_title(GIT_TXT)
    assert title is None  # an underlined heading is a heading
    assert text.startswith("Git 2.23 Release Notes.")
    assert "=====" not in text and "*" not in text
    assert "introduced to split" in text  # the bullet's wrapped lines are one sentence
    every = names(extractor.invoke(GIT_TXT)["triplets"])
    assert not any(generic_name(n) for n in every)


# valgrind's Helgrind manual as BSHTMLLoader gives it: the <h2> is a paragraph of its own, with no "#" to mark it
HTML_SECTION = (
    "aches many objects and reuses them for different threads and that confuses\nHelgrind.\n\n"
    "7.7. Helgrind Monitor Commands\n\nThe Helgrind tool provides monitor commands handled by Valgrind's\n"
    "built-in gdbserver.\n\ninfo locks [lock_addr]\n\nshows the list of locks and their status:"
)


def test_a_paragraph_before_another_ends_a_sentence(extractor: OfflineTripletExtractor) -> None:
    text = clean_markup(HTML_SECTION)
    assert "\n\n7.7. Helgrind Monitor Commands.\n\nThe Helgrind tool provides" in text
    assert "info locks [lock_addr].\n\n" in text  # a closing bracket ends it too
    assert text.endswith("their status:")  # the last paragraph is left as it is
    assert clean_markup("Demon Dice") == "Demon Dice"  # one paragraph: unchanged (title lines, records)
    assert clean_markup("see the list:\n\nfirst item") == "see the list:\n\nfirst item"  # a lead-in stays
    subjects = {t[0] for t in extractor.invoke(HTML_SECTION)["triplets"]}
    assert not any("Commands The" in s or s.startswith("Helgrind Monitor Commands") for s in subjects), subjects


def test_pydoc_signatures_keep_the_callable_name(extractor: OfflineTripletExtractor) -> None:
    text = clean_markup(PYDOC_HTML_TEXT)
    assert "file_digest. Hash the contents of a file-like object." in text
    assert "_bufsize" not in text and "(self" not in text
    every = names(extractor.invoke(PYDOC_HTML_TEXT)["triplets"])
    assert not {"self", "Methods", "use"} & every


def test_pdf_metadata_title_is_ignored(extractor: OfflineTripletExtractor) -> None:
    doc = Document(
        page_content="OpenSSH contains support for verifying host keys using DNS as described in RFC 4255.",
        metadata={"title": "Enscript Output"},
    )
    assert split_title(doc)[1] is None
    found = extractor.invoke(doc)["triplets"]
    assert "Enscript Output" not in names(found)
    assert junk_title("Enscript Output") and junk_title("Microsoft Word - notes.docx") and junk_title("untitled")
    assert not junk_title("OpenSSH README.dns") and not junk_title("Python: module shutil")


def test_titles_of_records_still_hold() -> None:
    assert split_title("Leonhard Euler\nLeonhard Euler was a Swiss mathematician.") == (
        "Leonhard Euler was a Swiss mathematician.",
        "Leonhard Euler",
    )
    # a hard-wrapped sentence is no title line
    assert split_title("the corresponding PIP_CERT environment variable\nallow users to specify a store.")[1] is None


def test_generic_names_and_prompts() -> None:
    assert clean_name("$ pip") == "pip" and clean_name("# apt-get") == "apt-get"
    assert generic_name("use") and generic_name("Methods") and generic_name("self") and generic_name("classes")
    assert not generic_name("pip") and not generic_name("keyring") and not generic_name("use case study")
    assert looks_like_markup(PIP_MD) and not looks_like_markup("Euler was born in Basel.")
    plain = "Leonhard Euler was a Swiss mathematician. He was born in Basel."
    assert clean_markup(plain) == plain


def test_files_are_recognised_by_content(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("Polkit is a toolkit for defining authorizations.\n")
    (tmp_path / "changelog.Debian").write_text("polkit (122-3) unstable; urgency=medium\n")
    (tmp_path / "guide.rst").write_text("Title\n=====\n\nSome *text*.\n")
    (tmp_path / "page").write_text("<!DOCTYPE html><html><body><p>Hi</p></body></html>")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin1").write_bytes("caf\xe9 au lait, ".encode("latin-1") * 10)
    (tmp_path / "empty").write_text("")
    found = discover_files([tmp_path])
    kinds = {f.path.name: (f.kind, f.by_content) for f in found.files}
    assert kinds == {
        "README": ("text", True),
        "changelog.Debian": ("text", True),
        "guide.rst": ("rst", False),
        "page": ("html", True),
    }
    assert {Path(s).name for s, _ in found.skipped} == {"blob.bin", "latin1", "empty"}
    assert sniff_text(tmp_path / "missing") is None
