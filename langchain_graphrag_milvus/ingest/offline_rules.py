"""Dependency-parse rules that turn one parsed passage into (subject, predicate, object) triplets.

Used by :mod:`langchain_graphrag_milvus.ingest.offline`; works on any spaCy ``Doc``
parsed by an English pipeline with a tagger, a dependency parser and NER. The rules:

* clause facts: each verb's subjects (inherited along coordinated verbs, relative clauses
  and participles) with its direct objects, prepositional objects (``"was born in"``),
  passive agents (``"was created by"``) and copular complements (``"is"``, ``"was a
  student of"``); a common-noun object followed by a preposition folds into the predicate
  (``"made major contributions to" → "fluid dynamics"``), coordinated objects each get a
  triplet;
* appositions: ``"X, the son of Y"`` gives ``(X, "is the son of", Y)``;
* references: ``he``/``she`` resolve to the passage subject when it is a person, ``it`` when
  it is not, ``"the journal"`` when its noun names the subject (in the title or in the
  first sentence's ``"is a journal"``); anything else unresolved is dropped;
* title links: the passage subject ``"mentions"`` each named entity no clause connects it to.

Entity names are normalised: determiners and possessive pronouns stripped, double quotes
removed, punctuation trimmed (a bracket only when its pair is not in the name), whitespace
collapsed, at most :data:`MAX_NAME_TOKENS` tokens. A title's bracketed qualifier is dropped when
the text names the rest (``Mark King (musician)`` → ``Mark King``; :func:`title_name`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PassageFacts", "extract_facts", "title_name", "generic_name", "GENERIC_NAMES", "MAX_NAME_TOKENS"]

MAX_NAME_TOKENS = 10
_SUBJ = {"nsubj", "nsubjpass"}
_OBJ = {"dobj", "dative", "oprd"}
_DETS = {"the", "a", "an", "this", "that", "these", "those", "his", "her", "its", "their", "our", "my", "your"}
_REL_PRONOUNS = {"who", "which", "that", "whom", "whose"}
_MALE_FEMALE = {"he", "she", "him", "her", "his", "hers", "himself", "herself"}
_NEUTER = {"it", "its", "itself"}
_NO_LINK_LABELS = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "DATE", "TIME"}
_SPACED_HYPHEN = re.compile(r"(\w) - (\w)")
_STRIP = " \t\n\"'`“”‘’()[]{},;:.!?-–—"
_LEAD = "$#>%*|•"  # shell prompts, comment marks, quote marks and bullets before a name
_DOUBLE_QUOTES = re.compile('["“”]')
_OPENS = {"(": ")", "[": "]", "{": "}"}
_CLOSES = {v: k for k, v in _OPENS.items()}
_BRACKET = re.compile(r"[()\[\]{}]")
_MAX_BASE = 200  # a title's rest longer than this is kept whole (bounds the word search in the text)
#: One-word names that say how documentation is laid out, never what it is about (plurals too).
GENERIC_NAMES = frozenset(
    """self cls use usage method function class module data example note option argument parameter default
    value attribute object see following type name thing way case part section chapter page file""".split()
)


@dataclass
class PassageFacts:
    """What the rules found in one passage."""

    subject: str | None
    triplets: list[tuple[str, str, str]] = field(default_factory=list)
    #: Every named entity the subject could link to (in text order; dates and numbers left out),
    #: whether or not a clause already links it: the passage's title ↔ mention links.
    mentions: list[str] = field(default_factory=list)


def clean_name(text: str) -> str:
    """A normalised entity name: no leading determiner, trimmed punctuation, single spaces.

    Double quotes go wherever they are (``"Nick" Hexum`` → ``Nick Hexum``), and a bracket at
    either end is trimmed only when the name holds no partner for it (``Mark King (musician)``
    keeps its ``)``; ``(AAAS)`` → ``AAAS``).
    """
    text = " ".join(_DOUBLE_QUOTES.sub(" ", text).split())
    words = _trim(_SPACED_HYPHEN.sub(r"\1-\2", text).lstrip(_LEAD)).split(" ")
    lead = 0  # leading determiners, the last word kept (an index, not words[1:] again: linear)
    while lead < len(words) - 1 and words[lead].lower() in _DETS:
        lead += 1
    name = _trim(" ".join(words[lead:]))
    if name.endswith(("'s", "’s")):
        name = name[:-2].rstrip()
    return name


def _trim(text: str) -> str:
    """``text`` without :data:`_STRIP` characters at its ends, a bracket kept where its partner is inside.

    Linear in ``len(text)``: one pass pairs the brackets; trimming only drops unpaired ones or a
    pair around the whole name, so the pairs found stay the window's pairs.
    """
    if not _BRACKET.search(text):
        return text.strip(_STRIP)  # the common case, and the same result
    opens = _pairs(text)
    closes = {close: open_ for open_, close in opens.items()}
    start, end = 0, len(text)
    while start < end:
        first, last = text[start], text[end - 1]
        if opens.get(start) == end - 1:  # "(AAAS)": the whole name in brackets
            start, end = start + 1, end - 1
        elif first in _STRIP and start not in opens:
            start += 1
        elif last in _STRIP and end - 1 not in closes:
            end -= 1
        else:
            break
    return text[start:end]


def _pairs(text: str) -> dict[int, int]:
    """Index of each bracket that opens a pair → index of the bracket that closes it."""
    stacks: dict[str, list[int]] = {opener: [] for opener in _OPENS}
    pairs: dict[int, int] = {}
    for at, ch in enumerate(text):
        if ch in _OPENS:
            stacks[ch].append(at)
        elif ch in _CLOSES and stacks[_CLOSES[ch]]:
            pairs[stacks[_CLOSES[ch]].pop()] = at
    return pairs


def title_name(title: str, body: str) -> str:
    """The passage subject a title names: ``Mark King (musician)`` → ``Mark King`` when the body says ``Mark King``.

    A trailing bracketed qualifier (Wikipedia's disambiguation, ``Freak Out (311 song)``) is
    dropped when the passage's own text names the rest of the title as a whole word (``Art`` in
    "Art is …", not in "Artists"), so the subject is the name the text, the other passages and a
    question use; otherwise the title is kept whole.
    """
    name = clean_name(title)
    cut = name.rfind(" (")
    base, qualifier = name[:cut].strip(), name[cut + 2 : -1]
    if name.endswith(")") and cut > 0 and qualifier and not set("()") & set(qualifier) and 1 < len(base) <= _MAX_BASE:
        if _says(body, base):
            return clean_name(base)
    return name


def _says(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` with no letter or digit touching either end."""
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(name, at + 1)
    return False


def generic_name(name: str) -> bool:
    """True for a one-word name of :data:`GENERIC_NAMES` (``use``, ``self``, ``Methods``), any case."""
    word = name.strip().lower()
    if " " in word:
        return False
    return word in GENERIC_NAMES or (word.endswith("s") and (word[:-1] in GENERIC_NAMES or word[:-2] in GENERIC_NAMES))


class _Passage:
    """One parsed passage with its subject, entity spans and reference rules."""

    def __init__(self, doc: Any, title: str | None) -> None:
        self.doc = doc
        self.ent_of: dict[int, Any] = {t.i: e for e in doc.ents for t in e}
        self.chunk_of: dict[int, Any] = {t.i: c for c in doc.noun_chunks for t in c}
        self.subject = title_name(title, doc.text) if title else None
        self.subject_label: str | None = None
        first = next(iter(doc.sents), None)
        if self.subject is None and first is not None:
            self.subject = self._first_subject(first)
        if self.subject:
            key = self.subject.lower()
            self.subject_label = next((e.label_ for e in doc.ents if clean_name(e.text).lower() == key), None)
        self.subject_words = {w.lower() for w in (self.subject or "").replace("-", " ").split()}
        if self.subject and self.subject_label is None:  # "Euler" in a passage titled "Leonhard Euler"
            parts = (e for e in doc.ents if {w.lower() for w in e.text.split()} <= self.subject_words)
            self.subject_label = next((e.label_ for e in parts), None)
        self.category = self._category(first) if first is not None else None

    def _first_subject(self, sent: Any) -> str | None:
        lead = [t for t in sent if not (t.is_punct or t.lower_ in _DETS)][:1]
        if lead and lead[0].i in self.ent_of:
            return clean_name(self.ent_of[lead[0].i].text) or None
        for token in sent:
            if token.dep_ in _SUBJ and token.pos_ != "PRON":
                return self.name(token, resolve=False)
        return None

    def _category(self, sent: Any) -> str | None:
        """The noun of the first sentence's ``"<subject> is a <noun>"``, e.g. ``journal``."""
        for token in sent:
            if token.dep_ == "attr" and token.head.lemma_ == "be" and token.pos_ == "NOUN":
                return str(token.lemma_).lower()
        return None

    def reference(self, token: Any) -> str | None:
        """The passage subject if ``token`` safely refers to it, else None."""
        if not self.subject:
            return None
        lower = token.lower_
        if lower in _MALE_FEMALE:
            return self.subject if self.subject_label == "PERSON" else None
        if lower in _NEUTER:
            return self.subject if self.subject_label not in ("PERSON", "NORP") else None
        if token.pos_ == "NOUN" and token.i not in self.ent_of:
            dets = [c for c in token.children if c.dep_ == "det" and c.lower_ in ("the", "this")]
            others = [c for c in token.children if c.dep_ not in ("det", "punct")]
            noun = str(token.lemma_).lower()
            if dets and not others and (noun in self.subject_words or noun == self.category):
                return self.subject
        return None

    def name(self, token: Any, *, resolve: bool = True) -> str | None:
        """The normalised entity name a token stands for (None: a pronoun or nothing nameable)."""
        if resolve:
            ref = self.reference(token)
            if ref is not None:
                return ref
        if token.pos_ == "PRON" or token.lower_ in _REL_PRONOUNS:
            return None
        span = self.ent_of.get(token.i)
        if span is None:
            chunk = self.chunk_of.get(token.i)
            if chunk is not None and chunk.root.i == token.i:
                span = chunk
        if span is None:
            parts = [c for c in token.children if c.dep_ in ("compound", "amod", "nummod") and c.i < token.i]
            start = min([token.i, *(p.i for p in parts)])
            span = self.doc[start : token.i + 1]
        elif token.pos_ == "NOUN" and span.root.i == token.i:
            span = self._of_phrase(span)
        if len(span) > MAX_NAME_TOKENS or all(t.is_stop or t.is_punct for t in span):
            return None
        name = clean_name(span.text)
        is_date = token.i in self.ent_of and self.ent_of[token.i].label_ in ("DATE", "TIME")
        if name.lower() in _REL_PRONOUNS or not (is_date or any(ch.isalpha() for ch in name)) or generic_name(name):
            return None  # a bare number is no entity (a year is); nor is "use" or "Methods"
        return self.canonical(name, token)

    def _of_phrase(self, span: Any) -> Any:
        """``"law"`` → ``"law of large numbers"``: a common noun keeps its ``of`` complement."""
        root = span.root
        for prep in (c for c in root.children if c.dep_ == "prep" and c.lower_ == "of"):
            for pobj in (c for c in prep.children if c.dep_ == "pobj"):
                end = self.chunk_of[pobj.i].end if pobj.i in self.chunk_of else pobj.i + 1
                if end - span.start <= MAX_NAME_TOKENS:
                    return self.doc[span.start : end]
        return span

    def canonical(self, name: str, token: Any) -> str:
        """The passage subject for its own name in any case, or for a part of a person's name."""
        if not self.subject:
            return name
        if name.lower() == self.subject.lower():
            return self.subject
        if not name:
            return name
        words = {w.lower() for w in name.split()}
        if self.subject_label == "PERSON" and token.pos_ == "PROPN" and words < self.subject_words:
            return self.subject
        return name


def _conjuncts(token: Any) -> list[Any]:
    return [token, *(c for c in token.conjuncts if c.i > token.i)]


def _subjects(p: _Passage, verb: Any, depth: int = 0) -> list[str]:
    """Subjects of a verb: its own, else inherited from the clause it hangs on."""
    names: list[str] = []
    for child in verb.children:
        if child.dep_ in _SUBJ:
            if child.lower_ in _REL_PRONOUNS and verb.dep_ == "relcl":
                names += [n for n in [p.name(verb.head)] if n]
            else:
                names += [n for c in _conjuncts(child) if (n := p.name(c))]
    if names or depth > 3:
        return names
    if verb.dep_ in ("conj", "advcl", "xcomp") and verb.head.pos_ in ("VERB", "AUX"):
        return _subjects(p, verb.head, depth + 1)
    if verb.dep_ in ("relcl", "acl") and verb.head.pos_ in ("NOUN", "PROPN"):
        head = verb.head
        if head.dep_ == "attr" and head.head.lemma_ == "be":  # "X is a game created by Y"
            return _subjects(p, head.head, depth + 1)
        return [n for n in [p.name(head)] if n]
    return names


def _verb_phrase(verb: Any) -> list[str]:
    aux = [c for c in verb.children if c.dep_ in ("auxpass", "neg") and c.i < verb.i]
    if verb.lemma_ == "be" or verb.tag_ == "VBN" and not aux:
        aux += [c for c in verb.children if c.dep_ == "aux" and c.i < verb.i and c.lemma_ == "have"]
    words = [c.lower_ for c in sorted(aux, key=lambda t: t.i)] + [verb.lower_]
    words += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    for acomp in (c for c in verb.children if c.dep_ == "acomp"):  # "is most famous" (for ...)
        words += [t.lower_ for t in acomp.subtree if t.i <= acomp.i and t.dep_ in ("advmod", "acomp")]
    return words


def _noun_words(p: _Passage, noun: Any) -> list[str] | None:
    """The words of a common-noun phrase to fold into a predicate (None: too long or a name)."""
    if noun.i in p.ent_of or noun.pos_ == "PROPN":
        return None
    chunk = p.chunk_of.get(noun.i)
    words = [t.lower_ for t in chunk] if chunk is not None else [noun.lower_]
    return words if len(words) <= 5 else None


def _objects(p: _Passage, head: Any, phrase: list[str], depth: int = 0) -> Iterable[tuple[str, str]]:
    """(predicate, object) pairs of a verb (or of a folded noun) and its complements."""
    for child in head.children:
        if child.dep_ in _OBJ or (child.dep_ in ("attr", "acomp") and depth == 0):
            preps = [c for c in child.children if c.dep_ == "prep"]
            if child.dep_ == "acomp":  # already in the phrase: "is fundamental" (to ...)
                if preps and depth == 0:
                    yield from _objects(p, child, phrase, depth + 1)
                continue
            folded = _noun_words(p, child)
            if folded and preps and depth == 0:
                yield from _objects(p, child, phrase + folded, depth + 1)
            else:
                for conj in _conjuncts(child):
                    if (name := p.name(conj)) is not None:
                        yield " ".join(phrase), name
        elif child.dep_ in ("prep", "agent"):
            for pobj in (c for c in child.children if c.dep_ == "pobj"):
                for conj in _conjuncts(pobj):
                    if (name := p.name(conj)) is not None:
                        yield " ".join([*phrase, child.lower_]), name


def _appositions(p: _Passage, token: Any) -> Iterable[tuple[str, str, str]]:
    for app in (c for c in token.children if c.dep_ == "appos"):
        subject = p.name(token)
        if subject is None:
            continue
        folded = _noun_words(p, app)
        preps = [c for c in app.children if c.dep_ == "prep"]
        if folded and preps:
            for pred, name in _objects(p, app, ["is", *folded], 1):
                yield subject, pred, name
        elif (obj := p.name(app)) is not None and any(ch.isalpha() for ch in obj):  # not "(1707–1783)"
            yield subject, "is", obj


def extract_facts(doc: Any, title: str | None = None) -> PassageFacts:
    """Triplets of one parsed passage (see the module docstring for the rules).

    Args:
        doc: A spaCy ``Doc`` (tagger, parser, NER).
        title: The passage title, if known; otherwise the subject of the first sentence
            stands for the passage.

    Returns:
        The passage subject and its triplets, deduplicated, in text order.
    """
    p = _Passage(doc, title)
    out: dict[tuple[str, str, str], None] = {}

    def add(s: str, pred: str, o: str) -> None:
        if s and o and pred and s.lower() != o.lower():
            out.setdefault((s, pred, o), None)

    for token in doc:
        if token.pos_ in ("VERB", "AUX") and (token.pos_ == "VERB" or token.dep_ in ("ROOT", "conj", "relcl")):
            subjects = _subjects(p, token)
            if subjects:
                pairs = list(_objects(p, token, _verb_phrase(token)))
                for subject in subjects:
                    for pred, obj in pairs:
                        add(subject, pred, obj)
        if token.pos_ in ("NOUN", "PROPN"):
            for triplet in _appositions(p, token):
                add(*triplet)
    mentions: dict[str, str] = {}
    if p.subject:
        for ent in doc.ents:
            name = p.canonical(clean_name(ent.text), ent.root)
            if ent.label_ not in _NO_LINK_LABELS and any(ch.isalpha() for ch in name) and not generic_name(name):
                if name.lower() != p.subject.lower():
                    mentions.setdefault(name.lower(), name)
        linked = {o.lower() for s, _, o in out if s == p.subject} | {s.lower() for s, _, o in out if o == p.subject}
        for key, name in mentions.items():
            if key not in linked:
                add(p.subject, "mentions", name)
    return PassageFacts(p.subject, list(out), list(mentions.values()))
