"""Triplet extraction from raw passages with an LLM (OpenIE style), with a persistent cache.

The default prompt follows HippoRAG's OpenIE: the model first lists the passage's named
entities, then writes subject–predicate–object triples that use them, as JSON. Models
that support structured output are asked for it; others are parsed tolerantly (markdown
fences, chatter around the JSON, truncated answers: whatever complete triples can be
read are kept, malformed ones are skipped and counted by the ingest).

Contract of every extractor the store accepts (so any ``Runnable`` can replace it):
input the passage text; output ``{"triplets": [[s, p, o], ...], "usage": {...}}`` or just
the list of triplets.

Example:
    >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
    >>> llm = FakeListChatModel(responses=['{"named_entities": ["Euler", "Basel"], '
    ...                                    '"triples": [["Euler", "was born in", "Basel"]]}'])
    >>> create_llm_triplet_extractor(llm).invoke("Euler was born in Basel.")["triplets"]
    [['Euler', 'was born in', 'Basel']]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, HumanMessagePromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.json import parse_partial_json
from pydantic import BaseModel, Field

__all__ = [
    "OPENIE_PROMPT",
    "DEFAULT_ENTITY_TYPES",
    "TripletExtraction",
    "create_llm_triplet_extractor",
    "parse_extraction",
    "TripletCache",
    "TRANSIENT_ERRORS",
    "extract_texts",
    "extractor_name",
]

OPENIE_PROMPT = """Your task is to build a knowledge graph from the passage below.

1. List the named entities of the passage ({entity_types}).
2. Write subject-predicate-object triples stating the facts of the passage. Each triple
   should use at least one, preferably two, of the named entities; resolve pronouns to the
   names they stand for; keep predicates short.

Answer with a JSON object: {{"named_entities": [...], "triples": [["subject", "predicate", "object"], ...]}}

Passage:
{passage}
"""

#: The entity types the default prompt names.
DEFAULT_ENTITY_TYPES: tuple[str, ...] = (
    "people",
    "places",
    "organisations",
    "works",
    "events",
    "dates",
    "numbers",
    "concepts",
)
_EXAMPLE_PASSAGE = (
    "Radio City is India's first private FM radio station and was started on 3 July 2001. "
    "It plays Hindi, English and regional songs."
)
_EXAMPLE_IN = OPENIE_PROMPT.format(passage=_EXAMPLE_PASSAGE, entity_types=", ".join(DEFAULT_ENTITY_TYPES))
_EXAMPLE_OUT = json.dumps(
    {
        "named_entities": ["Radio City", "India", "3 July 2001", "Hindi", "English"],
        "triples": [
            ["Radio City", "located in", "India"],
            ["Radio City", "is", "private FM radio station"],
            ["Radio City", "started on", "3 July 2001"],
            ["Radio City", "plays songs in", "Hindi"],
            ["Radio City", "plays songs in", "English"],
        ],
    }
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.S)

try:  # transient failures worth a retry: network, time-outs, rate limits, server errors
    import openai

    TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
        ConnectionError,
        TimeoutError,
        openai.APIConnectionError,
        openai.APITimeoutError,
        openai.RateLimitError,
        openai.InternalServerError,
    )
except ImportError:  # pragma: no cover - langchain-openai depends on openai
    TRANSIENT_ERRORS = (ConnectionError, TimeoutError)


class TripletExtraction(BaseModel):
    """The structured answer asked of models that support structured output."""

    named_entities: list[str] = Field(description="named entities of the passage")
    triples: list[list[str]] = Field(description="[subject, predicate, object] triples")


def parse_extraction(text: str) -> list[Any]:
    """Triples from a model's answer, tolerantly (fences, chatter, truncation).

    Raises:
        OutputParserException: Nothing resembling the expected JSON was found.
    """
    candidates = [text.strip()]
    fenced = re.search(r"```(?:json)?\s*(.*?)(?:```|$)", text, re.S)
    if fenced:
        candidates.insert(0, fenced.group(1))
    whole = _JSON_OBJECT.search(text)
    if whole:
        candidates.append(whole.group(0))
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start:])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            try:
                data = parse_partial_json(candidate)
            except ValueError:
                continue
        if isinstance(data, dict):
            triples = data.get("triples", data.get("triplets"))
            if isinstance(triples, list):
                return triples
        if isinstance(data, list):
            return data
    raise OutputParserException(f"no triples in the extraction answer: {text[:200]!r}")


def _usage(message: BaseMessage | None) -> dict[str, int]:
    usage = getattr(message, "usage_metadata", None) or {}
    return {"input_tokens": int(usage.get("input_tokens", 0)), "output_tokens": int(usage.get("output_tokens", 0))}


def _from_message(message: BaseMessage) -> dict[str, Any]:
    return {"triplets": parse_extraction(str(message.content)), "usage": _usage(message)}


def _structured_triples(parsed: Any) -> list[list[Any]]:
    """Triples from a structured answer: a ``triples``/``triplets``/``relations`` list of lists or dicts."""
    data = parsed.model_dump() if isinstance(parsed, BaseModel) else parsed
    if not isinstance(data, dict):
        raise OutputParserException(f"structured extraction returned {type(parsed).__name__}, not an object")
    items = next((data[k] for k in ("triples", "triplets", "relations") if isinstance(data.get(k), list)), None)
    if items is None:
        raise OutputParserException(f"structured answer has no triples/triplets/relations list: {sorted(data)}")
    out: list[list[Any]] = []
    for item in items:
        if isinstance(item, dict):
            out.append([item.get("subject"), item.get("predicate", item.get("relation")), item.get("object")])
        else:
            out.append(list(item) if isinstance(item, (list, tuple)) else [item])
    return out


def _from_structured(result: dict[str, Any]) -> dict[str, Any]:
    parsed = result.get("parsed")
    raw = result.get("raw")
    if parsed is None:
        if raw is not None:
            return {"triplets": parse_extraction(str(raw.content)), "usage": _usage(raw)}
        raise OutputParserException(f"structured extraction failed: {result.get('parsing_error')}")
    return {"triplets": _structured_triples(parsed), "usage": _usage(raw)}


def _extraction_prompt(
    prompt: str | None, entity_types: Sequence[str] | None, examples: Sequence[tuple[str, str]] | None
) -> ChatPromptTemplate:
    """The chat prompt: few-shot examples, then the template with ``{passage}`` (and ``{entity_types}``)."""
    template = OPENIE_PROMPT if prompt is None else prompt
    if "{passage}" not in template:
        raise ValueError("the extraction prompt must contain the placeholder {passage}")
    types = list(DEFAULT_ENTITY_TYPES if entity_types is None else entity_types)
    if not types or not all(isinstance(t, str) and t.strip() for t in types):
        raise ValueError("entity_types must be a non-empty list of non-empty strings")
    human = HumanMessagePromptTemplate.from_template(template)
    values = {"entity_types": ", ".join(t.strip() for t in types)} if "{entity_types}" in template else {}
    messages: list[Any] = []
    for passage, answer in examples or ():
        messages += [HumanMessage(human.format(passage=passage, **values).content), AIMessage(answer)]
    return ChatPromptTemplate.from_messages([*messages, human]).partial(**values)


def create_llm_triplet_extractor(
    llm: BaseChatModel,
    *,
    structured: bool | None = None,
    retries: int = 3,
    prompt: str | None = None,
    entity_types: Sequence[str] | None = None,
    schema: type[BaseModel] | None = None,
    examples: Sequence[tuple[str, str]] | None = None,
) -> Runnable[str, dict[str, Any]]:
    """The OpenIE extraction chain: passage text → ``{"triplets", "usage"}``.

    Example (a graph of people and places only, with its own prompt):
        .. code-block:: python

            extractor = create_llm_triplet_extractor(
                llm,
                entity_types=["person", "city", "university"],
                prompt="Extract facts about {entity_types} as JSON "
                '{{"triples": [["subject", "predicate", "object"]]}}. Passage: {passage}',
            )

    Args:
        llm: Any chat model.
        structured: Use ``with_structured_output`` (``None``: when the model supports it).
        retries: Attempts on transient errors (connection, time-out, rate limit), with
            exponential back-off and jitter.
        prompt: The instruction template (default :data:`OPENIE_PROMPT`). It must contain
            ``{passage}``; ``{entity_types}`` is replaced by the types, comma-separated;
            literal braces are doubled (``{{``). Without structured output the answer
            must be JSON with a ``"triples"`` list of ``[subject, predicate, object]``.
        entity_types: The entity types the prompt names (default
            :data:`DEFAULT_ENTITY_TYPES`: people, places, organisations...).
        schema: A pydantic model for structured output (default
            :class:`TripletExtraction`). It needs a ``triples`` (or ``triplets`` /
            ``relations``) list whose items are ``[s, p, o]`` lists or objects with
            ``subject``, ``predicate`` and ``object`` fields.
        examples: Few-shot ``(passage, answer)`` pairs shown before the passage (default:
            HippoRAG's Radio City example with the default schema, none with a custom one).

    Raises:
        ValueError: The prompt lacks ``{passage}`` or ``entity_types`` is empty.
    """
    if examples is None and schema is None:
        examples = [(_EXAMPLE_PASSAGE, _EXAMPLE_OUT)]
    chat_prompt = _extraction_prompt(prompt, entity_types, examples)
    chain: Runnable[Any, dict[str, Any]] | None = None
    if structured is not False:
        try:
            structured_model: Runnable[Any, Any] = llm.with_structured_output(
                schema or TripletExtraction, include_raw=True
            )
            chain = chat_prompt | structured_model | RunnableLambda(_from_structured, name="parse_triplets")
        except NotImplementedError:
            if structured:
                raise
    if chain is None:
        chain = chat_prompt | llm | RunnableLambda(_from_message, name="parse_triplets")
    full: Runnable[str, dict[str, Any]] = RunnableLambda(_as_passage, name="as_passage") | chain
    if retries > 1:
        full = full.with_retry(
            retry_if_exception_type=TRANSIENT_ERRORS, stop_after_attempt=retries, wait_exponential_jitter=True
        )
    model_name = getattr(llm, "model_name", None) or getattr(llm, "model", None) or type(llm).__name__
    custom = (prompt, entity_types, schema and schema.__qualname__, examples)
    if any(x is not None for x in custom[:3]) or examples != [(_EXAMPLE_PASSAGE, _EXAMPLE_OUT)]:
        # another prompt gives other triplets: a cache namespace of its own
        digest = hashlib.sha256(repr(custom).encode()).hexdigest()[:8]
        model_name = f"{model_name}:{digest}"
    return full.with_config(run_name=f"graph_triplet_extraction[{model_name}]")


def _as_passage(text: str) -> dict[str, str]:
    return {"passage": text}


class TripletCache:
    """Extraction results by (extractor name, passage text) in sqlite, or in memory."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._memory: dict[str, str] = {}
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        if path is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False)
            self._conn.execute("CREATE TABLE IF NOT EXISTS triplets (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._conn.commit()

    @staticmethod
    def key(extractor_name: str, text: str) -> str:
        """Cache key of a passage text for an extractor."""
        return hashlib.sha256(f"{extractor_name}\x1f{text}".encode()).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, list[Any]]:
        """Cached triplets for the keys that have them."""
        with self._lock:
            if self._conn is None:
                return {k: json.loads(self._memory[k]) for k in keys if k in self._memory}
            out: dict[str, list[Any]] = {}
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                rows = self._conn.execute(
                    f"SELECT key, value FROM triplets WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                out.update((k, json.loads(v)) for k, v in rows)
            return out

    def put_many(self, items: dict[str, list[Any]]) -> None:
        """Store triplets (JSON) by key."""
        encoded = {k: json.dumps(v, ensure_ascii=False) for k, v in items.items()}
        with self._lock:
            if self._conn is None:
                self._memory.update(encoded)
                return
            self._conn.executemany("INSERT OR REPLACE INTO triplets (key, value) VALUES (?, ?)", encoded.items())
            self._conn.commit()


def extractor_name(extractor: Runnable[Any, Any]) -> str:
    """The cache namespace of an extractor (its run name, which names the model)."""
    config = getattr(extractor, "config", None) or {}
    return str(config.get("run_name") or extractor.get_name())


def _batch_extract(extractor: Any, texts: list[str], titles: dict[str, str]) -> list[Any]:
    """Results of an extractor with ``extract_many`` (one batched call; a failure fails all)."""
    items = [{"text": t, "title": titles[t]} if t in titles else t for t in texts]
    try:
        return list(extractor.extract_many(items))
    except Exception as exc:  # reported per passage, never raised here
        return [exc for _ in texts]


def extract_texts(
    texts: Sequence[str],
    extractor: Runnable[str, Any],
    cache: TripletCache,
    *,
    max_concurrency: int,
    titles: Sequence[str | None] | None = None,
) -> list[tuple[list[Any] | None, dict[str, int], bool, BaseException | None]]:
    """Triplets for each text: ``(triplets, usage, from_cache, error)``.

    The model is called only for texts not in the cache, at most ``max_concurrency`` at a
    time; failures are returned, not raised. An extractor with an ``extract_many`` method
    (the offline one) gets all texts in one call, with their ``titles`` (a title changes
    the cache key); others get the text alone.
    """
    name = extractor_name(extractor)
    batched = callable(getattr(extractor, "extract_many", None))
    given = dict(zip(texts, titles)) if (batched and titles is not None) else {}
    title_of = {t: v for t, v in given.items() if v}
    keys = [TripletCache.key(name, t if t not in title_of else f"{title_of[t]}\x1e{t}") for t in texts]
    cached = cache.get_many(list(dict.fromkeys(keys)))
    todo = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in cached))
    fresh: dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]] = {}
    if todo and batched:
        answers = _batch_extract(extractor, todo, title_of)
        fresh = _fresh_results(todo, answers)
        key_of = dict(zip(texts, keys))
        cache.put_many({key_of[t]: v[0] for t, v in fresh.items() if v[0] is not None})
    elif todo:
        # one invoke per text in a bounded pool (``batch(return_exceptions=True)`` of a
        # runnable with retries mixes up results in langchain-core 1.7, so it is not used)
        def call(text: str) -> Any:
            try:
                return extractor.invoke(text)
            except Exception as exc:  # reported per passage, never raised here
                return exc

        with ThreadPoolExecutor(max_workers=max(1, min(max_concurrency, len(todo)))) as pool:
            answers = list(pool.map(call, todo))
        fresh = _fresh_results(todo, answers)
        cache.put_many({TripletCache.key(name, t): v[0] for t, v in fresh.items() if v[0] is not None})
    return _in_order(texts, keys, cached, fresh)


def _fresh_results(
    todo: Sequence[str], answers: Sequence[Any]
) -> dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]]:
    fresh: dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]] = {}
    for text, answer in zip(todo, answers):
        if isinstance(answer, BaseException):
            fresh[text] = (None, {}, answer)
        elif isinstance(answer, dict):
            fresh[text] = (list(answer.get("triplets") or []), dict(answer.get("usage") or {}), None)
        elif isinstance(answer, list):
            fresh[text] = (answer, {}, None)
        else:
            fresh[text] = (None, {}, OutputParserException(f"extractor returned {type(answer).__name__}"))
    return fresh


def _in_order(
    texts: Sequence[str],
    keys: Sequence[str],
    cached: dict[str, list[Any]],
    fresh: dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]],
) -> list[tuple[list[Any] | None, dict[str, int], bool, BaseException | None]]:
    out: list[tuple[list[Any] | None, dict[str, int], bool, BaseException | None]] = []
    seen: set[str] = set()
    for text, key in zip(texts, keys):
        if key in cached:
            out.append((cached[key], {}, True, None))
        else:
            triplets, usage, error = fresh[text]
            out.append((triplets, usage if text not in seen else {}, False, error))  # count usage once
            seen.add(text)
    return out
