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
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, HumanMessagePromptTemplate
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig, RunnableLambda
from langchain_core.utils.json import parse_partial_json
from pydantic import BaseModel, Field

from langchain_graphrag_milvus.ingest.extract import TripletCache, extract_texts, extractor_name
from langchain_graphrag_milvus.ingest.markup import clean_markup, looks_like_markup

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
    "LLM_EXTRACTOR_KEY",
]

#: Metadata key of the runnable :func:`create_llm_triplet_extractor` returns (value ``"llm"``): a store's
#: ``supplement="auto"`` (the default) adds spaCy's title links to the triplets of such an extractor.
LLM_EXTRACTOR_KEY = "langchain_graphrag_milvus_extractor"

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
    # the span ``\{.*\}`` (DOTALL) matches, from the first "{" to the last "}", found in linear time:
    # the regular expression rescanned the text from every "{" (100,000 "{" took 4.1 s)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
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
    marker = {LLM_EXTRACTOR_KEY: "llm"}
    # the marker on an inner binding too: a user's ``.with_config(metadata=...)`` replaces the outer's
    # metadata (LangChain merges config keys shallowly) but keeps its ``bound``
    config: RunnableConfig = {"run_name": f"graph_triplet_extraction[{model_name}]", "metadata": marker}
    return RunnableBinding(bound=full.with_config(metadata=marker), config=config)


def _as_passage(text: str) -> dict[str, str]:
    """The prompt's passage: Markdown, reST, HTML and code syntax taken out (:mod:`.markup`), as for spaCy.

    The stored passage keeps its text; the model reads prose with the code identifiers kept as
    names. A passage that is nothing but markup or code is sent as it is.
    """
    if looks_like_markup(text) and (clean := clean_markup(text)).strip():
        return {"passage": clean}
    return {"passage": text}
