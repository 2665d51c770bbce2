"""Untrusted text against the package's patterns: the old expressions (before) and the package (after).

Each case times one adversarial input at 1k, 10k and 100k characters, every run in a new process
with a time limit (``--limit``, seconds; a run over it shows as ``>limit`` and the larger sizes
are skipped). Quadratic growth is ×100 a step, cubic ×1000; linear is ×10.

    PYTHONPATH=. python benchmarks/bench_redos.py [--limit 40] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

#: The code before the change: the expressions, and the two loops that were quadratic.
OLD = r'''
import json, re
SIGNATURE = re.compile(r"^\s*(?:def |class )?([A-Za-z_][\w.]*)\s*\((.*)\)\s*(?:->\s*[\w\[\], .]+)?:?\s*$")
ARGS = re.compile(r"^\s*\(.*[,=*/].*\)\s*(?:->.*)?:?\s*$|^\s*\(\)\s*$")
ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]")
REST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`_{1,2}")
ROLE = re.compile(r":[\w:.-]+:`~?([^`]+)`")
EMPHASIS = re.compile(
    r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)|(?<!\w)(_{1,2})(?=[^\s_])([^_]*?\s[^_]*?)(?<=[^\s_])\3(?!\w)"
)
HINT = re.compile(r"^\s{0,3}(#{1,6}\s|```|~~~|\.\. |[-*+] )|`[^`]+`|\]\(|</?[a-z]+>|^\s*[=\-~]{3,}\s*$", re.M)
JSON_OBJECT = re.compile(r"\{.*\}", re.S)
from langchain_graphrag_milvus.retrieval.linearize import _ABBREVIATION, _SENTENCE_END
def split_sentences(text):
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out
def clean_name_determiners(words):
    while words and words[0].lower() in ("the", "a", "an") and len(words) > 1:
        words = words[1:]
    return words
'''
NEW = (
    "from langchain_graphrag_milvus.ingest import markup as m, markup_scan as s, triplets as t, offline_rules as r\n"
    "from langchain_graphrag_milvus.retrieval import linearize as lin\n"
)
EMPH = "lambda g: g.group(2) or g.group(4)"
#: (case, input of size n, before, after)
CASES = [
    ("signature: f()->, n spaces, !", "'f()->'+' '*n+'!'", "SIGNATURE.match(x)", "s.signature(x)"),
    ("ATX heading: ## x, n spaces, x", "'## x'+' '*n+'x'", "ATX.match(x)", "s.atx_text(m._ATX.match(x).group(1))"),
    ("argument list: ( then ,) n/2 times, !", "'('+',)'*(n//2)+'!'", "ARGS.match(x)", "m._ARGS.match(x)"),
    ("image: ![ n/2 times", "'!['*(n//2)", "IMAGE.sub(r'\\1', x)", "s.sub_images(x)"),
    ("link: [ n times", "'['*n", "LINK.sub(lambda g: g.group(1) or g.group(2), x)", "s.sub_links(x)"),
    ("reST link: `a, n spaces", "'`a'+' '*n", "REST_LINK.sub(r'\\1', x)", "s.sub_rest_links(x)"),
    ("role: : n times", "':'*n", "ROLE.sub(r'\\1', x)", "s.sub_roles(x)"),
    ("emphasis: *a n/2 times", "'*a'*(n//2)", f"EMPHASIS.sub({EMPH}, x)", "s.sub_emphasis(x)"),
    ("emphasis: _a, n spaces", "' _a'+' '*n", f"EMPHASIS.sub({EMPH}, x)", "s.sub_emphasis(x)"),
    ("markup hint: n blank lines", "'\\n'*n", "HINT.search(x)", "m.looks_like_markup(x)"),
    # before: the search alone; after: the whole parse (the search is now find/rfind inside it)
    ("LLM answer: { n times", "'{'*n", "JSON_OBJECT.search(x)", "t.parse_extraction(x)"),
    ("sentences: 'A. ' n/3 times", "'A. '*(n//3)", "split_sentences(x)", "lin.split_sentences(x)"),
    ("name: 'the ' n/4 times, x", "'the '*(n//4)+'x'", "clean_name_determiners(x.split(' '))", "r.clean_name(x)"),
]
SIZES = (1_000, 10_000, 100_000)


def _time(setup: str, make: str, call: str, n: int, limit: float) -> str:
    code = (
        f"import time\n{setup}\nn = {n}\nx = {make}\nt = time.perf_counter()\n"
        f"try:\n    {call}\nexcept Exception:\n    pass\nprint(f'{{time.perf_counter() - t:.4f}}')"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return f">{limit:g}"
    return done.stdout.strip() or "error: " + (done.stderr.strip().splitlines() or ["?"])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=40.0, help="seconds a run may take")
    parser.add_argument("--only", default="", help="cases whose name holds this")
    args = parser.parse_args()
    print("| case | code | " + " | ".join(f"{n:,} chars (s)" for n in SIZES) + " |")
    print("|---|---|" + "---|" * len(SIZES))
    for name, make, before, after in CASES:
        if args.only not in name:
            continue
        for label, setup, call in (("before", OLD, before), ("after", NEW, after)):
            cells: list[str] = []
            for n in SIZES:
                cells.append(_time(setup, make, call, n, args.limit))
                if cells[-1].startswith(">"):
                    break
            cells += ["–"] * (len(SIZES) - len(cells))
            print(f"| {name} | {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
