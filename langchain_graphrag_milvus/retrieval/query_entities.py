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

from collections.abc import Iterable
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.prompts import ChatPromptTemplate, HumanMessagePromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda

from langchain_graphrag_milvus.text.name_table import MAX_NAME_TOKENS, LinkerNames, linker_key
from langchain_graphrag_milvus.text.names import clean_text
from langchain_graphrag_milvus.text.tokens import NAME_STOPWORDS, name_spans, name_tokens

__all__ = [
    "EntityLinker",
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

    Args:
        names: Display names of the graph's entities, or a prepared
            :class:`~langchain_graphrag_milvus.text.name_table.LinkerNames` (keys already
            computed, e.g. loaded with a saved graph index).
        require_capital: Link only mentions written with a capital letter or a digit
            (names, not common nouns such as "country" or "director"), unless the whole
            query is lower case. Measured on musique100: common-noun links add noise.
        fuzzy_cutoff: Lowest rapidfuzz ratio (0-100) for a near miss; ``None`` turns fuzzy
            matching off. Spans shorter than 5 characters are never fuzzy-matched.

    Raises:
        ValueError: ``fuzzy_cutoff`` is outside 0-100.
    """

    def __init__(
        self,
        names: Iterable[str] | LinkerNames,
        *,
        require_capital: bool = False,
        fuzzy_cutoff: float | None = 90.0,
    ) -> None:
        if fuzzy_cutoff is not None and not 0.0 <= fuzzy_cutoff <= 100.0:
            raise ValueError(f"fuzzy_cutoff must be a ratio from 0 to 100 or None, got {fuzzy_cutoff!r}")
        self.require_capital = require_capital
        self.fuzzy_cutoff = fuzzy_cutoff
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

    def find(self, query: str) -> list[str]:
        """Display names of the entities found in ``query``, in order of appearance."""
        spans = _spans(query)
        keys = [t for t, _ in spans]
        check_case = self.require_capital and any(c.isupper() for c in query)
        taken = [False] * len(keys)
        found: list[tuple[int, str]] = []
        for size in range(min(self._longest, len(keys)), 0, -1):
            for start in range(0, len(keys) - size + 1):
                if any(taken[start : start + size]):
                    continue
                name = self._by_key.get(" ".join(keys[start : start + size]))
                if name is not None and self._allowed(spans, start, size, check_case):
                    taken[start : start + size] = [True] * size
                    found.append((start, name))
        if self.fuzzy_cutoff is not None and self._by_key:
            found += self._fuzzy(spans, keys, taken, check_case)
        return list(dict.fromkeys(name for _, name in sorted(found)))

    def _fuzzy(
        self, spans: list[tuple[str, str]], keys: list[str], taken: list[bool], check_case: bool
    ) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        for size in range(min(4, self._longest, len(keys)), 0, -1):
            for start in range(0, len(keys) - size + 1):
                window = keys[start : start + size]
                if any(taken[start : start + size]) or window[0] in STOPWORDS or window[-1] in STOPWORDS:
                    continue
                text = " ".join(window)
                if len(text) < 5 or not self._allowed(spans, start, size, check_case):
                    continue
                best = self.closest(text)
                if best is not None:
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
