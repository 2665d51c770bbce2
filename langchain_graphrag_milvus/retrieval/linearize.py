"""Paths as readable text: the second seed's linearised subgraph.

Two forms of one path (the Elastic article's pseudo-documents):

* ``"triplets"``: a header naming the entities along the path, then one line per
  relation, edge by edge in path order;
* ``"sentences"``: the same, each relation followed by the sentence of its source
  passage that supports it (the sentence naming both of its entities if there is one).

Example:
    >>> edge = [PathRelation("r1", "Leonhard Euler was a student of Johann Bernoulli",
    ...     0.8, ["p4"], "Leonhard Euler", "Johann Bernoulli")]
    >>> print(linearize_path(["Leonhard Euler", "Johann Bernoulli"], [edge]))
    Leonhard Euler → Johann Bernoulli
    - Leonhard Euler was a student of Johann Bernoulli
    >>> print(linearize_path(["Leonhard Euler", "Johann Bernoulli"], [edge],
    ...     {"p4": "Euler was born in Basel. He was a student of Johann Bernoulli."}))
    Leonhard Euler → Johann Bernoulli
    - Leonhard Euler was a student of Johann Bernoulli
      [p4] He was a student of Johann Bernoulli.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.tokens import SENTENCE_STOPWORDS, terms

__all__ = ["PathRelation", "split_sentences", "supporting_sentence", "linearize_path"]

_SENTENCE_END = re.compile(r"(?<=[.!?][\"')\]])\s+|(?<=[.!?])\s+(?=[\"'(\[]*[A-Z0-9À-Ý])")
_ABBREVIATION = re.compile(r"(?:\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Mt|No|vs|etc|e\.g|i\.e|ca|c)|\b[A-Z])\.$")


@dataclass
class PathRelation:
    """A relation on one edge of a path, with what is needed to show it."""

    id: str
    text: str
    similarity: float
    passage_ids: list[str]
    subject: str
    object: str


def split_sentences(text: str) -> list[str]:
    """Split a passage into sentences (a punctuation rule, no model).

    A period after a common abbreviation or a single capital (an initial) ends no sentence.

    Example:
        >>> split_sentences("J. S. Bach (1685–1750) was born in Eisenach. He met Dr. Smith. Did he?")
        ['J. S. Bach (1685–1750) was born in Eisenach.', 'He met Dr. Smith.', 'Did he?']
    """
    # Pieces of one sentence are gathered in a list and joined once, and the abbreviation test
    # reads the last piece only (a piece has no white space at either end, so a match ending the
    # joined sentence lies within its last piece): a run of 50,000 "A. " stays linear.
    out: list[list[str]] = []
    for piece in _SENTENCE_END.split(clean_text(text)):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREVIATION.search(out[-1][-1]):
            out[-1].append(piece)
        else:
            out.append([piece])
    return [" ".join(pieces) for pieces in out]


def _words(text: str) -> set[str]:
    return terms(text, stopwords=SENTENCE_STOPWORDS, casefold="text")


def _mentions(sentence: str, name: str) -> bool:
    words = _words(name)
    if not words:
        return False
    found = _words(sentence)
    return words <= found or (len(words) > 1 and len(words & found) >= len(words) - 1)


def supporting_sentence(passage: str, relation: PathRelation) -> str | None:
    """The sentence of ``passage`` that best supports ``relation``, if any.

    Rule: most of the relation's two entities mentioned (a name counts when its words,
    all but one for longer names, appear), then most words shared with the relation
    text, then the earlier sentence. ``None`` when no sentence shares a word with it.
    """
    rel_words = _words(relation.text)
    best: tuple[int, int, int] | None = None
    chosen = None
    for pos, sentence in enumerate(split_sentences(passage)):
        named = _mentions(sentence, relation.subject) + _mentions(sentence, relation.object)
        overlap = len(rel_words & _words(sentence))
        key = (named, overlap, -pos)
        if (named or overlap) and (best is None or key > best):
            best, chosen = key, sentence
    return chosen


def linearize_path(
    entities: Sequence[str],
    edges: Sequence[Sequence[PathRelation]],
    passages: Mapping[str, str] | None = None,
    *,
    sentences_per_relation: int = 1,
) -> str:
    """A path as text: the entity chain, then each edge's relations in path order.

    Args:
        entities: Display names along the path.
        edges: For each consecutive pair of entities, the relations shown for that edge.
        passages: Passage id → text; when given, each relation is followed by its
            supporting sentence from up to ``sentences_per_relation`` of its passages.
        sentences_per_relation: Passages quoted per relation.

    Returns:
        The linearised path.
    """
    lines = [" → ".join(entities)]
    for relations in edges:
        for rel in relations:
            lines.append(f"- {rel.text}")
            if passages is None:
                continue
            quoted = 0
            for pid in rel.passage_ids:
                if quoted >= sentences_per_relation:
                    break
                text = passages.get(pid)
                sentence = supporting_sentence(text, rel) if text else None
                if sentence:
                    lines.append(f"  [{pid}] {sentence}")
                    quoted += 1
    return "\n".join(lines)
