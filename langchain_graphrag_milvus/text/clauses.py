"""A compound question's own sub-questions, found by its punctuation and connectives (no model).

People ask two things at once: "how do i ship a node.js script as a single executable file, and
what is the python standard library way to bundle an app into one runnable archive?". One vector
for the whole question lands near the passages of whichever part dominates it; the other part's
file is often not in the top 20 at all. :func:`split_clauses` returns the parts a question asks
separately, so the retriever can search each one too (query decomposition without an LLM):

* sentence ends: ``?``, ``!`` or ``;``, and a full stop after a word of two characters or more
  (not an initial: "E. B. White"), followed by white space and more text (so "shutil.make_archive"
  and "3.11" are not split). A statement before a question is a part of its own: "pip's docs pack
  a wheelhouse into a tarball. which compression does that example use?" names the first file in
  its first sentence;
* a coordinating ``and``/``but``/``or`` (optionally after a comma) directly followed by a
  question word or an auxiliary verb that starts a new question (``and what``, ``, and is``,
  ``and how``, ``but can``...): "A and B" between two names is never split, because the word
  after ``and`` must be one of those.

A part shorter than :data:`MIN_WORDS` words is joined to the part before it (a fragment such as
"and why?" is not a question of its own). What is searched for each part is :func:`clause_queries`:
a part with a personal pronoun ("what is the unit i restart for *it*?") is searched after the
question's first part, where the pronoun's antecedent most likely is. One part (the usual case:
"Who taught Euler?", 49 of the 50 HotpotQA and 50 of the 51 MuSiQue dev questions here) returns ``[]``: nothing to add.

Plain Python, no dependency; the text is only split, never evaluated.

    >>> split_clauses("how do i get pip to use the system trust store, and what python version does that need?")
    ['how do i get pip to use the system trust store', 'what python version does that need?']
    >>> split_clauses("Who taught Euler?")
    []
"""

from __future__ import annotations

import re

__all__ = ["MAX_CLAUSES", "MIN_WORDS", "clause_queries", "refers_back", "split_clauses"]

#: At most this many parts are returned (the first ones); a longer question's rest stays in the last.
MAX_CLAUSES = 3
#: A part of fewer words is joined to the part before it.
MIN_WORDS = 4

_STARTS = (
    "what|which|how|where|when|who|whom|whose|why|is|are|was|were|does|do|did|can|could|should|"
    "will|would|has|have|may|must|shall"
)
#: Applied to the question with its white space collapsed to single spaces: every alternative then
#: matches at most a few characters from where it starts (no ``\s+`` to backtrack over), so a split
#: is linear in the question's length whatever it holds (a run of 20,000 spaces took 8.9 s before).
_SPLIT = re.compile(
    r"(?<=[?!;]) "  # a question's end (or a clause's) with more text after it
    r"|(?<=\w\w[.]) "  # a sentence's full stop (not an initial's: "E. B. White") before more text
    rf"|,? (?:and|but|or) (?=(?:{_STARTS})\b(?!['’-]))",  # "…, and what …"
    re.IGNORECASE,
)


def split_clauses(question: str, *, max_clauses: int = MAX_CLAUSES) -> list[str]:
    """The sub-questions of ``question`` (``[]`` when it asks one thing); see the module docstring.

    Args:
        question: The user's question (any text; only split, never evaluated).
        max_clauses: At most this many parts (the last one keeps the rest of the text).

    Returns:
        Two or more non-empty parts in the question's order, their white space collapsed to single
        spaces; or ``[]``.
    """
    if not isinstance(question, str) or max_clauses < 2:
        return []
    parts: list[str] = []
    for raw in _SPLIT.split(" ".join(question.split())):
        part = raw.strip()
        if not part:
            continue
        if parts and len(part.split()) < MIN_WORDS:
            parts[-1] = f"{parts[-1]} {part}"
        else:
            parts.append(part)
    if len(parts) > 1 and len(parts[0].split()) < MIN_WORDS:  # a short opening ("Hi.") joins the next
        parts[:2] = [f"{parts[0]} {parts[1]}"]
    if len(parts) > max_clauses:
        parts[max_clauses - 1 :] = [" ".join(parts[max_clauses - 1 :])]
    return parts if len(parts) > 1 else []


#: Personal pronouns whose antecedent is outside their own part ("what does *it* block?"). Demonstratives
#: ("that", "this") are left out: "that" is as often a conjunction or a relative ("tells dpkg that the lock
#: is held"), and on techdocs dev adding them lost a two-file R@2 and gained nothing.
_BACK = re.compile(
    r"\b(?:it|its|itself|they|them|their|theirs|he|him|his|himself|she|her|hers|herself)\b(?!['’-])",
    re.IGNORECASE,
)


def refers_back(part: str) -> bool:
    """True when ``part`` uses a personal pronoun (``it``, ``they``, ``his``...): its antecedent is elsewhere.

    >>> refers_back("what is the systemd unit i restart for it?"), refers_back("which port does it get? no: itself")
    (True, True)
    >>> refers_back("which port will the new cluster get"), refers_back("what is Item 4?")
    (False, False)
    """
    return bool(_BACK.search(part))


def clause_queries(question: str, *, max_clauses: int = MAX_CLAUSES) -> list[str]:
    """What to search for each part of a compound question (:func:`split_clauses`; ``[]`` for one part).

    A part that :func:`refers_back` is searched after the question's first part, where its pronoun's
    antecedent most likely is.

    "i installed postgresql-16 on a debian server that already runs a 15/main cluster. which port will
    the new default cluster get, and what is the systemd unit i restart for it?": searched alone, the last
    part finds systemd's own documentation; after the first part ("…postgresql-16…"), the unit file of
    postgresql's packaging. The first part is searched as it is; parts without a pronoun too.

    >>> clause_queries("what does openssh set PermitRootLogin to, and what does it block?")
    ['what does openssh set PermitRootLogin to', 'what does openssh set PermitRootLogin to what does it block?']
    """
    parts = split_clauses(question, max_clauses=max_clauses)
    return [p if i == 0 or not refers_back(p) else f"{parts[0]} {p}" for i, p in enumerate(parts)]
