"""Rules on one mention of the offline linker: code-like names, capitalised runs, partial-name spans.

Example:
    >>> looks_like_code("init.defaultBranch"), looks_like_code("keyring")
    (True, False)
"""

from __future__ import annotations

import re

from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS

__all__ = ["looks_like_code", "capitalised_run", "partial_window"]

STOPWORDS = NAME_STOPWORDS


def capitalised_run(spans: list[tuple[str, str]], start: int, size: int) -> bool:
    """The words are a whole run of capitalised words, not the question's first word alone.

    "Barry Wesson" is one name: neither "Barry" nor "Wesson" is matched on its own.
    """

    def capital(i: int) -> bool:
        return 0 <= i < len(spans) and spans[i][1][:1].isupper() and not (i == 0 and size == 1 and start == 0)

    inside = all(capital(i) for i in range(start, start + size))
    return inside and start > 0 and not capital(start - 1) and not capital(start + size)


def partial_window(window: list[str]) -> bool:
    """A span that may stand for a longer name: no stopword at its ends, no bare number, 3+ letters."""
    if window[0] in STOPWORDS or window[-1] in STOPWORDS or any(t.isdigit() for t in window):
        return False
    return sum(len(t) for t in window) >= 3


#: An identifier inside a name: a dotted or underscored word, a digit, camelCase, ``--option``.
_CODE = re.compile(r"\w[._/]\w|[A-Za-z]\d|\d[A-Za-z]|[a-z][A-Z]|^-{1,2}\w|\(\)")


def looks_like_code(name: str) -> bool:
    """True for names written as code or versions (``init.defaultBranch``, ``sha256``, ``--user``).

    Such a name is a name however the query writes it: ``"sha256"`` needs no capital.
    """
    return bool(_CODE.search(name))
