r"""Linear-time forms of the markup patterns of :mod:`.markup` that backtracked on long lines.

Each function gives the result of the regular expression in its docstring on a line of a file
(no line break in it), in time linear in the line. The expressions themselves took quadratic or
cubic time on a line an ingested file can hold: a run of white space after ``->`` in
``f() ->     !`` (cubic), ``# x     x`` (cubic), or many openers and no closer (``[[[[``,
``![![![``, ``::::``, ``*a*a*a``: each opener rescanned the rest of the line). Here each closer
is looked up once (:class:`_After` remembers the last answer, positions only grow), so every
character is read a bounded number of times.

The results are the same as the expressions' on every line (``tests/unit/test_markup_redos.py``
compares both on random lines and real pages).
"""

from __future__ import annotations

import re
from bisect import bisect_left

__all__ = ["atx_text", "signature", "sub_emphasis", "sub_images", "sub_links", "sub_rest_links", "sub_roles"]

_SIGNATURE_HEAD = re.compile(r"\s*(?:def |class )?([A-Za-z_][\w.]*)\s*\(")
_RETURN_TYPE = re.compile(r"[\w\[\], .]+")
_ROLE_NAME = re.compile(r"[\w:.-]*")
_TICK_OR_LT = re.compile(r"[`<]")
_EMPHASIS_OPEN = re.compile(r"[*_]")
_SPACE = re.compile(r"\s")
_WORD = re.compile(r"\w")
#: Where ``k`` stars close an emphasis: after a non-space, and no word character after them.
_STAR_CLOSERS = {k: re.compile(rf"(?<=\S)(?=\*{{{k}}}(?!\w))") for k in (1, 2, 3)}


class _After:
    """The next index of ``char`` at or after a position; linear over positions that never decrease."""

    __slots__ = ("text", "char", "low", "found")

    def __init__(self, text: str, char: str) -> None:
        self.text = text
        self.char = char
        self.low = 0
        self.found = text.find(char)

    def __call__(self, pos: int) -> int:
        if pos < self.low or (self.found >= 0 and pos > self.found):
            self.low, self.found = pos, self.text.find(self.char, pos)
        return self.found


def _signature_end(rest: str) -> bool:
    r"""``re.match(r"\s*(?:->\s*[\w\[\], .]+)?:?\s*$", rest)``: what may follow a signature's ")"."""
    rest = rest.lstrip()
    if not rest.startswith("->"):
        return rest[:1] in ("", ":") and not rest[1:].strip()
    body, colon, after = rest[2:].partition(":")
    if after.strip():
        return False
    if colon:  # body is \s*[...]+: white space, then type characters (a space is both)
        typed = body.lstrip()
        return bool(_RETURN_TYPE.fullmatch(typed)) if typed else body.endswith(" ")
    core = body.strip()  # body is \s*[...]+\s*
    return bool(_RETURN_TYPE.fullmatch(core)) if core else " " in body


def signature(line: str) -> tuple[str, str] | None:
    r"""``(name, arguments)`` of a call signature line, or None.

    Groups 1, 2 of ``^\s*(?:def |class )?([A-Za-z_][\w.]*)\s*\((.*)\)\s*(?:->\s*[\w\[\], .]+)?:?\s*$``.
    What follows the closing parenthesis holds no ")", so only the line's last ")" can close.
    """
    head = _SIGNATURE_HEAD.match(line)
    if not head:
        return None
    close = line.rfind(")")
    if close < head.end() or not _signature_end(line[close + 1 :]):
        return None
    return head.group(1), line[head.end() : close]


def atx_text(rest: str) -> str:
    r"""The heading text of ``rest`` (what follows ``## ``): the closing white space and ``#`` run taken off.

    Group 1 of ``(.*?)\s*#*\s*$``: the lazy group leaves them to the tail.
    """
    return rest.rstrip().rstrip("#").rstrip()


def sub_images(line: str) -> str:
    r"""``re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", line)``: an image becomes its alt text."""
    start = line.find("![")
    if start < 0:
        return line
    bracket, paren = _After(line, "]"), _After(line, ")")
    out: list[str] = []
    done = 0
    while start >= 0:
        close = bracket(start + 2)
        if close < 0:
            break
        end = paren(close + 2) if line.startswith("(", close + 1) else -1
        if end >= 0:
            out += (line[done:start], line[start + 2 : close])
            done = end + 1
        start = line.find("![", done if end >= 0 else start + 1)
    out.append(line[done:])
    return "".join(out)


def sub_links(line: str) -> str:
    r"""``re.sub(r"\[([^\]]+)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]", label, line)``: a link becomes its label."""
    start = line.find("[")
    if start < 0:
        return line
    bracket, paren, ref = _After(line, "]"), _After(line, ")"), _After(line, "]")
    out: list[str] = []
    done = 0
    while start >= 0:
        close = bracket(start + 1)
        if close < 0:
            break
        end = -1
        if close > start + 1:
            after = line[close + 1 : close + 2]
            end = paren(close + 2) if after == "(" else ref(close + 2) if after == "[" else -1
        if end >= 0:
            out += (line[done:start], line[start + 1 : close])
            done = end + 1
        start = line.find("[", done if end >= 0 else start + 1)
    out.append(line[done:])
    return "".join(out)


def sub_rest_links(line: str) -> str:
    r"""``re.sub(r"`([^`<]+?)\s*<[^>]+>`_{1,2}", r"\1", line)``: a reST link becomes its text."""
    start = line.find("`")
    if start < 0:
        return line
    greater = _After(line, ">")
    out: list[str] = []
    done = 0
    while start >= 0:
        stop = _TICK_OR_LT.search(line, start + 1)
        end = -1
        if stop and line[stop.start()] == "<" and stop.start() > start + 1:
            lt = stop.start()
            gt = greater(lt + 1)
            if gt > lt + 1 and line.startswith("`_", gt + 1):
                end = gt + 4 if line.startswith("_", gt + 3) else gt + 3
                text = line[start + 1 : lt]
                out += (line[done:start], text.rstrip() or text[:1])
                done = end
        start = line.find("`", done if end >= 0 else start + 1)
    out.append(line[done:])
    return "".join(out)


def sub_roles(line: str) -> str:
    r"""``re.sub(r":[\w:.-]+:`~?([^`]+)`", r"\1", line)``: a reST role becomes its target."""
    start = line.find(":")
    if start < 0 or "`" not in line:
        return line
    tick = _After(line, "`")
    run_from, run_end = -1, -1
    out: list[str] = []
    done = 0
    while start >= 0:
        if not run_from <= start + 1 <= run_end:  # the [\w:.-] run from start + 1 ends at run_end
            run_from, run_end = start + 1, _ROLE_NAME.match(line, start + 1).end()  # type: ignore[union-attr]
        close = -1
        if run_end - 1 >= start + 2 and line[run_end - 1] == ":" and line.startswith("`", run_end):
            target = run_end + 1
            close = tick(target)
            if close >= 0 and line.startswith("~", target) and close > target + 1:
                target += 1  # "~name": the ~ is no part of the target (but "~" alone is)
            if close > target:
                out += (line[done:start], line[target:close])
                done = close + 1
            else:
                close = -1
        start = line.find(":", done if close >= 0 else start + 1)
    out.append(line[done:])
    return "".join(out)


def sub_emphasis(line: str) -> str:
    r"""Emphasis becomes its words: ``*em*``, ``**strong**``, ``_two words_`` (not ``__dunder__``).

    ``re.sub`` by group 2 or 4 of ``(\*{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)``
    ``|(?<!\w)(_{1,2})(?=[^\s_])([^_]*?\s[^_]*?)(?<=[^\s_])\3(?!\w)``. A star run opens with as
    many stars as it has (three at most), then fewer; it closes at the first place the same
    number of stars closes (found by bisection in the closers' positions). An underscore span
    ends at the next underscore.
    """
    if "*" not in line and "_" not in line:
        return line
    closers: dict[int, list[int]] = {}
    underscore, newline = _After(line, "_"), _After(line, "\n")
    out: list[str] = []
    done = pos = 0
    while (opener := _EMPHASIS_OPEN.search(line, pos)) is not None:
        i = opener.start()
        match = _star_at(line, i, closers, newline) if line[i] == "*" else _underscore_at(line, i, underscore)
        if match is None:
            pos = i + 1
            continue
        inner, end = match
        out += (line[done:i], inner)
        done = pos = end
    out.append(line[done:])
    return "".join(out)


def _star_at(line: str, i: int, closers: dict[int, list[int]], newline: _After) -> tuple[str, int] | None:
    run = 1
    while run < 3 and line.startswith("*", i + run):
        run += 1
    for k in range(run, 0, -1):
        if i + k >= len(line) or line[i + k].isspace():
            continue
        if k not in closers:
            closers[k] = [m.start() for m in _STAR_CLOSERS[k].finditer(line)]
        at = closers[k]
        j = bisect_left(at, i + k + 1)
        if j < len(at) and not 0 <= newline(i) < at[j]:  # "." takes no line break
            return line[i + k : at[j]], at[j] + k
    return None


def _underscore_at(line: str, i: int, underscore: _After) -> tuple[str, int] | None:
    if i > 0 and _WORD.match(line, i - 1):
        return None
    k = 2 if line.startswith("_", i + 1) else 1
    first = line[i + k : i + k + 1]
    if not first or first.isspace() or first == "_":
        return None
    close = underscore(i + k)
    if close < 0 or line[close - 1].isspace() or not line.startswith("_" * k, close):
        return None
    if _WORD.match(line, close + k):
        return None
    inner = line[i + k : close]
    return (inner, close + k) if _SPACE.search(inner) else None
