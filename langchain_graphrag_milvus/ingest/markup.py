r"""Plain prose for the offline parser: Markdown, reST and HTML markup and code syntax taken out.

The passages stored keep their text as written; only what spaCy parses is cleaned, so a
dependency parse sees sentences, not ``## headings``, ``$ pip install`` prompts or
``copy2(src, dst, *, follow_symlinks=True)`` signatures:

* fenced code blocks, shell and Python prompt lines (``$ ...``, ``>>> ...``) and lines that
  are mostly code symbols are dropped; a bare call signature keeps its callable's name
  (``file_digest(fileobj, digest)`` → ``file_digest.``), so code identifiers stay names;
* inline code keeps its text (```init.defaultBranch``` → ``init.defaultBranch``), links
  their label, reST roles their target (``:func:`os.walk``` → ``os.walk``), emphasis its
  words; HTML tags and entities are removed;
* the lines of a paragraph are joined (hard-wrapped prose; HTML text with one tag per line);
* headings (``## Using system certificate stores``, underlined reST/setext headings) become
  a sentence of their section (ending with a period), so they are context, never the
  passage's title line; list bullets, quote marks and table bars are removed;
* a paragraph ends a sentence: one followed by another that ends with a word or a closing
  bracket gets a full stop (an HTML heading, a list line), so it is not read into the next
  paragraph's sentence (a text of one paragraph is left as it is).

:func:`junk_title` recognises titles that name the tool that made a file rather than the
file (``"Enscript Output"``, ``"Microsoft Word - x.doc"``, ``"untitled"``).

Example:
    >>> print(clean_markup("## Using `keyring`\n\n```\n$ pip install keyring\n```\nSee **pip**\n[docs](https://x)."))
    Using keyring.
    <BLANKLINE>
    See pip docs.
"""

from __future__ import annotations

import html
import re

from langchain_graphrag_milvus.ingest.markup_scan import (
    atx_text,
    signature,
    sub_emphasis,
    sub_images,
    sub_links,
    sub_rest_links,
    sub_roles,
)

__all__ = ["clean_markup", "looks_like_markup", "is_underline", "junk_title", "JUNK_TITLES"]

#: Titles that tools write into every file they make (lower case, compared after trimming).
JUNK_TITLES = frozenset(
    t.strip()
    for t in """enscript output|untitled|untitled document|document|no title|title|slide 1|powerpoint presentation|
    microsoft word document|pdf document|page 1|index|home|readme""".split("|")
)
_JUNK_PREFIXES = re.compile(
    r"^(microsoft (word|powerpoint|excel) - |untitled[- ]\d*$|document\d*$|\S+\.(docx?|pptx?|txt|tex)$)", re.I
)

_FENCE = re.compile(r"^\s*(```|~~~)")
_PROMPT = re.compile(r"^\s*(\$|%|#|>>>|\.\.\.|C:\\>|PS>)\s")
# A line's patterns never backtrack over one run twice (a long line of a file stays linear): the
# first [,=*/] is the one to take, and the white space possessive where giving some back cannot help.
# Call signatures, ATX headings, images, links, reST links, roles and emphasis: see .markup_scan.
_ARGS = re.compile(  # "(src, dst, *, follow_symlinks=True)"
    r"^\s*\([^,=*/\n]*+[,=*/].*\)\s*+(?:->.*)?:?\s*+$|^\s*\(\)\s*$"
)
_IDENT = re.compile(r"^\s*[A-Za-z_][\w.]*\s*$")
_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.*)")  # the heading text: atx_text(group 1)
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_])\1{2,}\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w-]+::.*$|^\s*\.\.\s+_[^:]+:.*$|^\s*:[\w -]+:\s*$|^\s*\([^()]+\)=\s*$")
_MYST_ROLE = re.compile(r"\{[\w-]+\}(?=\S)")
_INLINE_CODE = re.compile(r"`{1,2}([^`]+)`{1,2}_{0,2}")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_CODE_CHARS = re.compile(r"[{}()\[\]=;<>$|&\\@^~]")
# an underline's white space stays on its line ([^\S\n], not \s, which took every line start to the
# end of a run of blank lines: quadratic); whether the text holds a match is the same
_MARKUP_HINT = re.compile(
    r"^\s{0,3}(#{1,6}\s|```|~~~|\.\. |[-*+] )|`[^`]+`|\]\(|</?[a-z]+>|^[^\S\n]*[=\-~]{3,}[^\S\n]*$", re.M
)


def looks_like_markup(text: str) -> bool:
    """True if ``text`` shows Markdown, reST or HTML syntax (a heading, a fence, inline code, a tag...)."""
    return bool(_MARKUP_HINT.search(text))


def is_underline(line: str) -> bool:
    """True for a reST or setext heading underline (``=====``, ``-----``, ``~~~~~``)."""
    return bool(_UNDERLINE.match(line))


def junk_title(title: str) -> bool:
    """True for a title that names the tool or template that made the file, not its content."""
    t = " ".join(title.split()).strip().lower()
    return not t or t in JUNK_TITLES or bool(_JUNK_PREFIXES.match(t))


def _code_line(line: str) -> bool:
    """Mostly code: many code symbols for its letters, and not ending like a sentence."""
    stripped = line.strip()
    if not stripped or stripped.endswith((".", "?", "!")) and not stripped.endswith(("..", "();")):
        return False
    symbols = len(_CODE_CHARS.findall(stripped))
    letters = sum(c.isalpha() for c in stripped)
    return symbols >= 2 and symbols * 6 >= letters


def _inline(line: str) -> str:
    line = html.unescape(_TAG.sub(" ", line))
    line = sub_images(line)
    line = sub_rest_links(line)
    line = sub_links(line)
    line = sub_roles(line)
    line = _MYST_ROLE.sub("", line)
    line = _INLINE_CODE.sub(r"\1", line)
    line = sub_emphasis(line)  # *em*, **strong**, _two words_ (not __dunder__)
    return line.replace("|", ", ") if line.count("|") >= 2 else line


def _sentence(text: str) -> str:
    text = text.strip().rstrip(":")
    return text if not text or text.endswith((".", "?", "!")) else text + "."


def clean_markup(text: str) -> str:
    """``text`` as plain prose for a parser (see the module docstring); line structure kept."""
    out: list[str] = []
    fenced = False
    for raw in text.splitlines():
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        if fenced or _PROMPT.match(raw) or _DIRECTIVE.match(raw):
            continue
        if _UNDERLINE.match(raw):  # the line above was a heading
            if out and out[-1].strip():
                out[-1] = _sentence(out[-1])
            continue
        heading = _ATX.match(raw)
        if heading:
            out.append(_sentence(_inline(atx_text(heading.group(1)))))
            continue
        if _ARGS.match(raw):  # the argument list of the callable named on the line above (pydoc pages)
            if out and _IDENT.match(out[-1]):
                out[-1] = out[-1].strip() + "."
            continue
        call = signature(raw)
        if call and ("," in call[1] or "=" in call[1] or not call[1]):
            out.append(call[0] + ".")
            continue
        line = _BULLET.sub(r"\1", raw)
        line = line.lstrip("> ") if line.lstrip().startswith(">") else line
        if _code_line(line):
            continue
        out.append(_inline(line))
    paragraphs: list[list[str]] = [[]]
    for line in out:  # lines of one paragraph join (hard-wrapped prose, one HTML tag per line)
        words = " ".join(line.split())
        if words:
            paragraphs[-1].append(words)
        elif paragraphs[-1]:
            paragraphs.append([])
    texts = [" ".join(p).replace(" .", ".") for p in paragraphs if p]
    return "\n\n".join([*map(_paragraph_end, texts[:-1]), *texts[-1:]])  # a paragraph before another ends


def _paragraph_end(text: str) -> str:
    """A paragraph is a sentence's end: a heading or list line without a full stop gets one.

    HTML headings (``<h2>7.7. Helgrind Monitor Commands</h2>``) reach the text as a paragraph
    of their own, with no ``#`` to mark them; unended, the parser reads them into the next
    sentence's subject ("Helgrind Monitor Commands The Helgrind tool provides …").
    """
    return text + "." if text[-1:].isalnum() or text[-1:] in ")]\"'’”" else text
