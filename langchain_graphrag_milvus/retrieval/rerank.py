"""The LLM rerank runnable: the seed's one-shot chain-of-thought prompt with JSON output.

Contract of every reranker the retriever accepts (so any ``Runnable`` can replace it):

* input: ``{"question": str, "relations": list[str], "select": int, "candidates": [...]}``
  where ``candidates[i]`` is ``{"id", "text", "passage_ids"}`` of ``relations[i]`` (for
  rerankers that want more than the text; the default one uses only the text);
* output: positions (0-based) into ``relations``, most useful first.

The default, :func:`create_llm_reranker`, numbers the candidates ``[1]..[n]`` (short
numbers instead of ids: fewer tokens, fewer copying mistakes), asks the model to pick
``select`` of them with its reasoning, and parses ``useful_relationships``. Positions the
model invents or repeats are dropped (in one capped pass: see :func:`parse_rerank_answer`);
invalid JSON, a failing model or one slower than the retriever's ``rerank_timeout`` make the
retriever fall back to its own order with a logged warning.

Example:
    >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
    >>> llm = FakeListChatModel(responses=[
    ...     '{"thought_process": "...", "useful_relationships": ["[2] b", "[9] x", "[1] a"]}'])
    >>> create_llm_reranker(llm).invoke({"question": "q?", "relations": ["a", "b"], "select": 2})
    [1, 0]
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.prompts import ChatPromptTemplate, HumanMessagePromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

__all__ = [
    "RERANK_ONE_SHOT_INPUT",
    "RERANK_ONE_SHOT_OUTPUT",
    "RERANK_PROMPT_TEMPLATE",
    "create_rerank_prompt",
    "create_llm_reranker",
    "format_relations",
    "parse_rerank_answer",
]

RERANK_ONE_SHOT_INPUT = """I will provide you with a list of relationship descriptions. Your task is to select 3 relationships that may be useful to answer the given question. Please return a JSON object containing your thought process and a list of the selected relationships in order of their relevance.

Question:
When was the mother of the leader of the Third Crusade born?

Relationship descriptions:
[1] Eleanor was born in 1122.
[2] Eleanor married King Louis VII of France.
[3] Eleanor was the Duchess of Aquitaine.
[4] Eleanor participated in the Second Crusade.
[5] Eleanor had eight children.
[6] Eleanor was married to Henry II of England.
[7] Eleanor was the mother of Richard the Lionheart.
[8] Richard the Lionheart was the King of England.
[9] Henry II was the father of Richard the Lionheart.
[10] Henry II was the King of England.
[11] Richard the Lionheart led the Third Crusade.

"""  # noqa: E501
RERANK_ONE_SHOT_OUTPUT = """{"thought_process": "To answer the question about the birth of the mother of the leader of the Third Crusade, I first need to identify who led the Third Crusade and then determine who his mother was. After identifying his mother, I can look for the relationship that mentions her birth.", "useful_relationships": ["[11] Richard the Lionheart led the Third Crusade", "[7] Eleanor was the mother of Richard the Lionheart", "[1] Eleanor was born in 1122"]}"""  # noqa: E501
RERANK_PROMPT_TEMPLATE = """{select_line}Question:
{question}

Relationship descriptions:
{relation_des_str}

"""
_BRACKET = re.compile(r"\[\s*(\d+)\s*\]")


def create_rerank_prompt() -> ChatPromptTemplate:
    """The seed's one-shot prompt (example in, example out, then the real question)."""
    return ChatPromptTemplate.from_messages(
        [
            HumanMessage(RERANK_ONE_SHOT_INPUT),
            AIMessage(RERANK_ONE_SHOT_OUTPUT),
            HumanMessagePromptTemplate.from_template(RERANK_PROMPT_TEMPLATE),
        ]
    )


def format_relations(relations: list[str]) -> str:
    """``[1] first``, ``[2] second``, ... one per line: the candidate list as the prompt shows it."""
    return "\n".join(f"[{i}] {text}" for i, text in enumerate(relations, start=1)).strip()


def parse_rerank_answer(answer: Any, n_relations: int | None = None, *, limit: int | None = None) -> list[int]:
    """Positions (0-based) from the model's JSON answer, in the model's order.

    Accepts ``{"useful_relationships": [...]}`` whose items are ``"[3] text"`` strings or
    bare numbers (1-based, as numbered in the prompt). Duplicates are dropped; with
    ``n_relations`` given, positions outside the list are dropped too.

    Bounded: one pass with a set (linear), only the first 200 characters of an item are
    read, and the scan stops after ``limit`` valid positions (default: ``n_relations``,
    the pool size), so an answer listing 200,000 ids costs at most one linear pass.

    Raises:
        OutputParserException: The answer has no ``useful_relationships`` list.
    """
    if isinstance(answer, dict):
        items = answer.get("useful_relationships")
    else:
        items = answer
    if not isinstance(items, list):
        raise OutputParserException(f"rerank answer has no 'useful_relationships' list: {str(answer)[:200]!r}")
    cap = limit if limit is not None else n_relations
    positions: list[int] = []
    seen: set[int] = set()
    for item in items:
        if cap is not None and len(positions) >= cap:
            break
        pos = _item_position(item)
        if pos is None or (n_relations is not None and pos >= n_relations) or pos in seen:
            continue
        seen.add(pos)
        positions.append(pos)
    return positions


def _item_position(item: Any) -> int | None:
    number: int | None = None
    if isinstance(item, int) and not isinstance(item, bool):
        number = item
    elif isinstance(item, str):
        head = item[:200]
        match = _BRACKET.search(head)
        if match and len(match.group(1)) <= 18:
            number = int(match.group(1))
        elif head.strip().isdigit() and len(head.strip()) <= 18:
            number = int(head.strip())
    return number - 1 if number is not None and number >= 1 else None


def _parse_payload_answer(value: dict[str, Any]) -> list[int]:
    return parse_rerank_answer(value["answer"], len(value["relations"]))


def _prompt_input(payload: dict[str, Any]) -> dict[str, Any]:
    relations = list(payload["relations"])
    select = int(payload.get("select", 3))
    return {
        "question": payload["question"],
        "relation_des_str": format_relations(relations),
        # the seed's exact prompt when selecting 3; one extra line otherwise
        "select_line": "" if select == 3 else f"Select {select} relationships this time.\n\n",
    }


def _wants_json_mode(llm: BaseChatModel) -> bool:
    module = type(llm).__module__
    return module.startswith("langchain_openai")


def create_llm_reranker(llm: BaseChatModel, *, json_mode: bool | None = None) -> Runnable[dict[str, Any], list[int]]:
    """The seed's rerank chain as a runnable: prompt | llm | JSON parser | positions.

    Args:
        llm: Any chat model.
        json_mode: Bind ``response_format={"type": "json_object"}`` (OpenAI's JSON mode).
            ``None`` enables it for langchain-openai models only, since other providers
            may reject the argument; the parser tolerates fenced or chatty JSON anyway.

    Returns:
        A runnable mapping ``{"question", "relations", "select"}`` to 0-based positions
        (at most ``len(relations)``, each valid and distinct).
    """
    use_json = _wants_json_mode(llm) if json_mode is None else json_mode
    model: Runnable[Any, Any] = llm.bind(response_format={"type": "json_object"}) if use_json else llm
    answer = (
        RunnableLambda(_prompt_input, name="format_relations") | create_rerank_prompt() | model | JsonOutputParser()
    )
    chain = RunnablePassthrough.assign(answer=answer) | RunnableLambda(
        _parse_payload_answer, name="parse_rerank_answer"
    )
    return chain.with_config(run_name="graph_rerank")
