"""The one word tokenizer of the package (standard library only).

Three callers tokenise text, each with its own measured rules, and they all use this module:

* the previous no-LLM ranking (``benchmarks/baseline_ranking.py``, outside the package since it
  became a baseline): words casefolded one by one, :data:`QUESTION_STOPWORDS` dropped, crudely stemmed (:func:`stem`);
* the offline entity linker (:mod:`~langchain_graphrag_milvus.retrieval.query_entities`):
  :func:`name_spans` — the cleaned text's words, casefolded, diacritics removed, simple plurals
  folded, a possessive ``'s`` dropped; :data:`NAME_STOPWORDS` mark words that are never a name;
* the sentence matcher of the path linearisation (:mod:`~langchain_graphrag_milvus.retrieval.linearize`):
  the *whole text* casefolded first, then split, :data:`SENTENCE_STOPWORDS` dropped.

The differences are kept on purpose (the eval's numbers depend on them): the stopword sets
are named, and :func:`terms` takes the stemming and the casefolding order as options.
Casefolding the whole text before splitting differs from casefolding each word on a few
letters (``"İ"`` folds to ``"i"`` plus a combining dot, which is not a word character).

Example:
    >>> sorted(terms("What contributions did the sons make?", stopwords=QUESTION_STOPWORDS, stem=True))
    ['contribut', 'make', 'son']
    >>> [t for t, _ in name_spans("Gödel's  Big Eyes")]
    ['godel', 'big', 'eye']
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from langchain_graphrag_milvus.text.names import clean_text

__all__ = [
    "WORD",
    "QUESTION_STOPWORDS",
    "NAME_STOPWORDS",
    "SENTENCE_STOPWORDS",
    "words",
    "terms",
    "stem",
    "fold_name_token",
    "name_spans",
    "name_tokens",
]

#: A word: a run of Unicode word characters.
WORD = re.compile(r"\w+")

#: Words of a question that say nothing about the facts it needs (the no-LLM ranking's list).
QUESTION_STOPWORDS = frozenset(
    """a an the of to in on at for by with and or is was were be been being did do does what who whom which
    when where how why that this these those his her its their it he she they as from into than then there
    also has have had not no""".split()
)

#: Single words that are never useful query entities on their own (the offline linker's list).
NAME_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves one two also may might must shall""".split()
)

#: Words that do not tie a sentence to a relation (the path linearisation's list).
SENTENCE_STOPWORDS = frozenset(
    "a an and are as at be by for from has had have he her his in is it its of on or she the their "
    "they to was were which who with".split()
)

_SUFFIXES = ("ations", "ation", "ions", "ion", "ing", "ers", "er", "es", "ed", "s")


def words(text: str, *, casefold: Literal["words", "text"] = "words") -> list[str]:
    """The casefolded words of ``text``, in order.

    Args:
        text: Any text.
        casefold: ``"words"``: split, then casefold each word; ``"text"``: casefold the whole
            text, then split (the two differ on a few letters, see the module docstring).
    """
    if casefold == "text":
        return WORD.findall(text.casefold())
    return [w.casefold() for w in WORD.findall(text)]


def stem(word: str) -> str:
    """A crude suffix stem: the first of a few English suffixes, if 3 letters remain.

    Example:
        >>> stem("contributions"), stem("sons"), stem("was")
        ('contribut', 'son', 'was')
    """
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def terms(
    text: str,
    *,
    stopwords: frozenset[str] = frozenset(),
    stem: bool = False,
    casefold: Literal["words", "text"] = "words",
) -> set[str]:
    """The set of words of ``text`` without ``stopwords`` (checked before stemming), optionally stemmed.

    Args:
        text: Any text.
        stopwords: Casefolded words to drop.
        stem: Apply :func:`stem` to the words kept.
        casefold: Casefolding order, as for :func:`words`.
    """
    kept = (w for w in words(text, casefold=casefold) if w not in stopwords)
    return {_stem(w) for w in kept} if stem else set(kept)


_stem = stem  # :func:`terms` has a parameter of the same name


def fold_name_token(word: str) -> str:
    """A casefolded word as the linker compares it: diacritics off, a simple plural folded.

    ``"gödel"`` meets ``"godel"``, ``"eyes"`` meets ``"eye"`` (not ``"class"``, not 3-letter words).
    """
    if not word.isascii():  # ASCII has nothing to decompose (a fast path: the same result)
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def name_spans(text: str) -> list[tuple[str, str]]:
    """(folded token, surface word) pairs of the cleaned text; possessive ``s`` tokens are dropped."""
    cleaned = clean_text(text)
    out = []
    for match in WORD.finditer(cleaned):
        word = match.group(0)
        key = word.casefold()
        if key == "s" and match.start() > 0 and cleaned[match.start() - 1] == "'":
            continue
        out.append((fold_name_token(key), word))
    return out


def name_tokens(text: str) -> tuple[str, ...]:
    """The folded tokens of :func:`name_spans` (a name's matching key)."""
    return tuple(t for t, _ in name_spans(text))
