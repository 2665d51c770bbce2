"""Query entities: an LLM extraction runnable and an offline linker.

Both are runnables from a query string to a list of entity names, so the retriever
treats them alike and either can be replaced by any ``Runnable[str, list[str]]``.

* :func:`create_llm_entity_extractor` — a one-shot prompt asking a chat model for the
  named entities of the question as JSON (``{"entities": [...]}``).
* :class:`EntityLinker` — no model: finds the names of known graph entities inside the
  query (case-insensitive, on word boundaries, longest match first, non-overlapping).

Example:
    >>> linker = EntityLinker(["Leonhard Euler", "Euler", "Johann Bernoulli", "the"])
    >>> linker.find("What contribution did the son of Euler's teacher make?")
    ['Euler']
    >>> linker.find("Was leonhard euler a student of Johann  Bernoulli?")
    ['Leonhard Euler', 'Johann Bernoulli']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.prompts import ChatPromptTemplate, HumanMessagePromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda

from langchain_graphrag_milvus.text.mention_rules import capitalised_run, looks_like_code, partial_window
from langchain_graphrag_milvus.text.name_table import MAX_NAME_TOKENS, LinkerNames, linker_key
from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS, name_spans, name_tokens

__all__ = [
    "EntityLinker",
    "NameFrequency",
    "GENERIC_SHARE",
    "SPECIFIC_PASSAGES",
    "looks_like_code",
    "create_llm_entity_extractor",
    "parse_entities",
    "MAX_QUERY_ENTITIES",
    "ENTITY_PROMPT_ONE_SHOT_INPUT",
    "ENTITY_PROMPT_ONE_SHOT_OUTPUT",
]

MAX_NGRAM = MAX_NAME_TOKENS
#: Most query entities a retrieval uses (extractor answers and ``entities=`` are cut there).
MAX_QUERY_ENTITIES = 32
#: Single words that are never useful query entities on their own.
STOPWORDS = NAME_STOPWORDS
_spans = name_spans
_tokens = name_tokens
#: A lower-case mention links an entity found in at most this share of the graph's passages.
GENERIC_SHARE = 0.01
#: ... and always one found in at most this many passages.
SPECIFIC_PASSAGES = 3
#: Names → (passages mentioning each name, passages in the graph).
NameFrequency = Callable[[Sequence[str]], tuple[Sequence[int], int]]


class EntityLinker:
    """Find known entity names in a query without any model.

    Matching is on normalised word sequences (NFKC, casefold, diacritics, punctuation and
    possessive "'s" ignored, simple plurals folded), so "Euler's" matches "Euler", "Big
    Eye's" matches "Big Eyes" and "Godel" matches "Gödel". Longer matches win and matches do
    not overlap. Spans left unmatched are then compared with the names by edit-distance
    similarity (rapidfuzz), so near misses such as "Leonard Euler" still link. Entities made
    only of stopwords ("the", "he") are never linked.

    Exact matches are dictionary lookups. Near misses are found through a character q-gram
    index (:class:`~langchain_graphrag_milvus.text.name_index.NameIndex`, built on the first
    near-miss search): only the names it returns as candidates are scored, and the answer is
    exactly the one a scan of every name would give (the best ratio, the first name among
    equals).

    Lower-case and partial names (the store's linker turns both on):

    * With ``frequency`` (how many passages mention each name), in a question written all
      in lower case, a lower-case mention ("pip", "keyring", "country") links when its
      entity is *specific*: in at most ``generic_share`` of the graph's passages (and
      always when in at most :data:`SPECIFIC_PASSAGES`). In a question that capitalises
      its names, a lower-case word is a common noun and is not linked (musique100: linking
      the specific ones there cost 6 R@5). Mentions with a capital or a digit, and names written as
      code (``init.defaultBranch``, ``sha256``, ``make_archive``), link as before. Without
      ``frequency``, ``require_capital`` keeps its older rule (capitals only, unless the
      whole query is lower case).
    * ``partial=True``: a span that is no name links to the one name that ends with it
      ("Euler" → "Leonhard Euler"; "trust store" → "system trust store"); when several
      names end with it ("Smith": "Adam Smith", "Will Smith"), nothing is linked.

    Args:
        names: Display names of the graph's entities, or a prepared
            :class:`~langchain_graphrag_milvus.text.name_table.LinkerNames` (keys already
            computed, e.g. loaded with a saved graph index).
        require_capital: Link lower-case mentions only when they are specific (with
            ``frequency``) or, without it, only mentions written with a capital letter or
            a digit unless the whole query is lower case. Measured on musique100:
            common-noun links ("country", "director") add noise.
        fuzzy_cutoff: Lowest rapidfuzz ratio (0-100) for a near miss; ``None`` turns fuzzy
            matching off. Spans shorter than 5 characters are never fuzzy-matched.
        frequency: Names → (passages mentioning each, passages in the graph); called at
            :meth:`find` time with the names of lower-case candidates only.
        partial: Link a span to the one name of several words that ends with it.
        generic_share: The largest share of passages a lower-case mention's entity may
            appear in.
        text_frequency: Names → (passages whose *text* holds each one-word name, passages);
            with it (and ``frequency``), a one-word lower-case mention links only when its
            keyphraseness — the share of the passages holding the word whose relations name
            it (Mihalcea & Csomai's link probability) — is at least the graph's own: the
            pooled share over all its one-word names (:meth:`link_rate`). "pip" is an
            entity in most passages that hold it; "runs" or "main" is plain text in most.

    Raises:
        ValueError: ``fuzzy_cutoff`` is outside 0-100 or ``generic_share`` outside 0-1.
    """

    def __init__(
        self,
        names: Iterable[str] | LinkerNames,
        *,
        require_capital: bool = False,
        fuzzy_cutoff: float | None = 90.0,
        frequency: NameFrequency | None = None,
        partial: bool = False,
        generic_share: float = GENERIC_SHARE,
        text_frequency: NameFrequency | None = None,
    ) -> None:
        if fuzzy_cutoff is not None and not 0.0 <= fuzzy_cutoff <= 100.0:
            raise ValueError(f"fuzzy_cutoff must be a ratio from 0 to 100 or None, got {fuzzy_cutoff!r}")
        if not 0.0 <= generic_share <= 1.0:
            raise ValueError(f"generic_share must be a share from 0 to 1, got {generic_share!r}")
        self.require_capital = require_capital
        self.fuzzy_cutoff = fuzzy_cutoff
        self.frequency = frequency
        self.partial = partial
        self.generic_share = generic_share
        self.text_frequency = text_frequency
        self._rate: float | None = None
        if not isinstance(names, LinkerNames):
            first: dict[str, str] = {}
            for name in names:
                key = linker_key(name)
                if key and key not in first:
                    first[key] = clean_text(name)
            names = LinkerNames(list(first), list(first.values()))
        self._names = names
        self._by_key = names.by_key
        self._longest = names.longest

    def __len__(self) -> int:
        return len(self._by_key)

    def _allowed(self, spans: list[tuple[str, str]], start: int, size: int, check_case: bool) -> bool:
        if not check_case:
            return True
        words = [w for _, w in spans[start : start + size]]
        capital = any(c.isupper() or c.isdigit() for w in words for c in w)
        # a common noun, or just the sentence's capitalised first word, is not a name
        return capital and not (start == 0 and size == 1 and not any(c.isdigit() for c in words[0]))

    def _accept(
        self, ctx: _Find, start: int, size: int, name: str, *, whole: bool = True, near: bool = False
    ) -> bool:
        """Whether the mention ``spans[start:start+size]`` may link ``name`` (case and specificity rules).

        ``whole``: the mention is the whole name (not a part of it, as a partial match is).
        ``near``: a fuzzy match; the mention is another word than the name's, so the name's own
        word is judged ("configured" near "./configure": how often *configure* is an entity
        where it is written, not how rare *configured* is).
        """
        if self._allowed(ctx.spans, start, size, ctx.check_case) or (whole and looks_like_code(name)):
            return True
        if self.frequency is None or not self.require_capital or not ctx.lower_query:
            return False  # a question that capitalises its names: a lower-case word is a common noun
        # a one-word mention is judged as the word it is, also when it is part of a longer name ("make" of
        # "GNU Make"): its keyphraseness is the word's, the passages naming the entity over those holding the word
        word = ctx.spans[start][1] if size == 1 and not near else name
        key = name if word == name else f"{name}\x00{word}"
        if key not in ctx.specific:
            counts, total = self.frequency([name])
            count = int(counts[0]) if len(counts) else 0
            ctx.specific[key] = (
                0 < count
                and (count <= SPECIFIC_PASSAGES or count <= self.generic_share * max(int(total), 1))
                and self._keyphrase(word, count)
            )
        return ctx.specific[key]

    def _keyphrase(self, name: str, count: int) -> bool:
        """A one-word name is an entity in at least :meth:`link_rate` of the passages holding the word."""
        if self.text_frequency is None or len(_tokens(name)) != 1:
            return True
        texts, _ = self.text_frequency([name])
        held = int(texts[0]) if len(texts) else 0
        return held == 0 or count >= self.link_rate() * held

    def link_rate(self) -> float:
        """The graph's keyphraseness: passages naming its one-word names / passages whose text holds them.

        Pooled over every one-word name whose word some passage holds (0 without both counts);
        computed once per linker (one count per name).
        """
        if self._rate is None:
            if self.frequency is None or self.text_frequency is None:
                return 0.0
            words = [name for key, name in zip(self._names.choices, self._names.names) if " " not in key]
            named, _ = self.frequency(words)
            held, _ = self.text_frequency(words)
            pairs = [(int(n), int(h)) for n, h in zip(named, held) if h > 0]
            total = sum(h for _, h in pairs)
            self._rate = sum(n for n, _ in pairs) / total if total else 0.0
        return self._rate

    def find(self, query: str) -> list[str]:
        """Display names of the entities found in ``query``, in order of appearance."""
        spans = _spans(query)
        keys = [t for t, _ in spans]
        if self.frequency is not None:
            check_case = self.require_capital
        else:
            check_case = self.require_capital and any(c.isupper() for c in query)
        ctx = _Find(spans, keys, check_case, [False] * len(keys), not any(c.isupper() for c in query))
        taken = ctx.taken
        found: list[tuple[int, str]] = []
        for size in range(min(self._longest, len(keys)), 0, -1):
            for start in range(0, len(keys) - size + 1):
                if any(taken[start : start + size]):
                    continue
                name = self._by_key.get(" ".join(keys[start : start + size]))
                if name is not None and self._accept(ctx, start, size, name):
                    taken[start : start + size] = [True] * size
                    found.append((start, name))
        if self.partial and self._by_key:
            found += self._partial(ctx)
        if self.fuzzy_cutoff is not None and self._by_key:
            found += self._fuzzy(ctx)
        return list(dict.fromkeys(name for _, name in sorted(found)))

    def _partial(self, ctx: _Find) -> list[tuple[int, str]]:
        """Spans (up to 3 words) that end exactly one name of more words: that name."""
        found: list[tuple[int, str]] = []
        index = self._names.token_index()
        keys, taken = ctx.keys, ctx.taken
        for size in range(min(3, len(keys)), 0, -1):
            for start in range(0, len(keys) - size + 1):
                window = keys[start : start + size]
                if any(taken[start : start + size]) or not partial_window(window):
                    continue
                if not ctx.lower_query and not capitalised_run(ctx.spans, start, size):
                    continue
                ends = [i for i, at_end in index.containing(window) if at_end]
                if len(ends) != 1:
                    continue
                name = self._names.names[ends[0]]
                if self._accept(ctx, start, size, name, whole=False):
                    taken[start : start + size] = [True] * size
                    found.append((start, name))
        return found

    def _fuzzy(self, ctx: _Find) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        keys, taken = ctx.keys, ctx.taken
        for size in range(min(4, self._longest, len(keys)), 0, -1):
            for start in range(0, len(keys) - size + 1):
                window = keys[start : start + size]
                if any(taken[start : start + size]) or window[0] in STOPWORDS or window[-1] in STOPWORDS:
                    continue
                text = " ".join(window)
                if len(text) < 5:
                    continue
                if self.frequency is None and not self._allowed(ctx.spans, start, size, ctx.check_case):
                    continue
                best = self.closest(text)
                if best is not None and self._accept(ctx, start, size, self._names.names[best], near=True):
                    taken[start : start + size] = [True] * size
                    found.append((start, self._names.names[best]))
        return found

    def closest(self, text: str) -> int | None:
        """Index (into the linker's distinct keys) of the key most similar to ``text``, or None.

        The same answer as ``rapidfuzz.process.extractOne(text, keys, scorer=fuzz.ratio,
        score_cutoff=fuzzy_cutoff)`` over all keys: the highest ratio at or above the cutoff,
        the first key among equals; only the index's candidates are scored.
        """
        from rapidfuzz import fuzz, process

        cutoff = self.fuzzy_cutoff
        if cutoff is None:
            return None
        candidates = self._names.index().candidates(text, cutoff).tolist()
        if not candidates:
            return None
        choices = self._names.choices
        best = process.extractOne(text, [choices[i] for i in candidates], scorer=fuzz.ratio, score_cutoff=cutoff)
        return None if best is None else candidates[best[2]]

    def as_runnable(self) -> Runnable[str, list[str]]:
        """This linker as a ``Runnable[str, list[str]]``."""
        return RunnableLambda(self.find, name="offline_entity_linker")


@dataclass
class _Find:
    """The state of one :meth:`EntityLinker.find`."""

    spans: list[tuple[str, str]]
    keys: list[str]
    check_case: bool
    taken: list[bool]
    lower_query: bool
    specific: dict[str, bool] = field(default_factory=dict)


ENTITY_PROMPT_ONE_SHOT_INPUT = """Extract the named entities (people, places, organisations, works, events, dates, concepts) that the question is about. Return a JSON object {"entities": [...]} with the entity names exactly as they appear in the question.

Question:
When was the mother of the leader of the Third Crusade born?
"""  # noqa: E501
ENTITY_PROMPT_ONE_SHOT_OUTPUT = '{"entities": ["Third Crusade"]}'


def parse_entities(answer: Any, *, limit: int | None = None) -> list[str]:
    """Entity names from ``{"entities": [...]}`` (or a bare list); blanks and repeats dropped.

    Linear; with ``limit``, the scan stops after that many distinct names.

    Raises:
        OutputParserException: The answer holds no list of entities.
    """
    items = answer.get("entities") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise OutputParserException(f"entity answer has no 'entities' list: {str(answer)[:200]!r}")
    names: dict[str, None] = {}
    for item in items:
        if limit is not None and len(names) >= limit:
            break
        if isinstance(item, str) and (name := clean_text(item)):
            names.setdefault(name, None)
    return list(names)


def _parse_capped(answer: Any) -> list[str]:
    return parse_entities(answer, limit=MAX_QUERY_ENTITIES)


def _as_question(query: str) -> dict[str, str]:
    return {"question": query}


def create_llm_entity_extractor(llm: BaseChatModel, *, json_mode: bool | None = None) -> Runnable[str, list[str]]:
    """A runnable that asks ``llm`` for the entities of a question, as JSON.

    Args:
        llm: Any chat model.
        json_mode: Bind OpenAI's JSON mode (``None``: only for langchain-openai models).
    """
    prompt = ChatPromptTemplate.from_messages(
        [
            HumanMessage(ENTITY_PROMPT_ONE_SHOT_INPUT),
            AIMessage(ENTITY_PROMPT_ONE_SHOT_OUTPUT),
            HumanMessagePromptTemplate.from_template("Question:\n{question}\n"),
        ]
    )
    use_json = type(llm).__module__.startswith("langchain_openai") if json_mode is None else json_mode
    model: Runnable[Any, Any] = llm.bind(response_format={"type": "json_object"}) if use_json else llm
    chain: Runnable[str, list[str]] = (
        RunnableLambda(_as_question, name="as_question")
        | prompt
        | model
        | JsonOutputParser()
        | RunnableLambda(_parse_capped, name="parse_entities")
    )
    return chain.with_config(run_name="graph_query_entities")
