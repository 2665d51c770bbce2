"""Test doubles for what cannot run offline: OpenAI chat models (and a lexical embedding).

* ``LexicalEmbeddings``: deterministic bag-of-words vectors (feature hashing), so texts
  that share words are similar. Lets fast tests exercise real similarity ordering
  without a model.
* ``SelectingChatModel``: a fake chat model that answers the rerank prompt the way the
  seed notebook's LLM did: it reads the numbered relation lines of the prompt and
  returns, as JSON, the lines whose text it was told to select.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

_STOP = set(
    "a an the of to in on at for by with and or is was were be been did do does what who whom "
    "which when where how make made his her its their this that s".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    for suffix in ("ions", "ion", "ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


class LexicalEmbeddings(Embeddings):
    """Deterministic hashed bag-of-words embeddings (unit length)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.calls: list[int] = []

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.size
        for word in _WORD.findall(text.lower().replace("’", "'")):
            if word in _STOP:
                continue
            h = int.from_bytes(hashlib.blake2b(_stem(word).encode(), digest_size=8).digest(), "big")
            vec[h % self.size] += 1.0 if (h >> 63) else -1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        if norm == 1.0 and not any(vec):
            vec[0] = 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class SelectingChatModel(BaseChatModel):
    """Answers the rerank prompt by selecting relation lines, like a reasoning LLM would.

    ``select`` holds regular expressions, in the order of the model's reasoning; for each,
    the first matching relation line of the prompt is chosen.
    """

    select: list[str]
    prompts: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "selecting-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = str(messages[-1].content)
        self.prompts.append(prompt)
        lines = re.findall(r"^\[(\d+)\] (.*)$", prompt, flags=re.M)
        chosen: list[str] = []
        for pattern in self.select:
            for n, text in lines:
                line = f"[{n}] {text}"
                if re.search(pattern, text) and line not in chosen:
                    chosen.append(line)
                    break
        answer = {
            "thought_process": "Euler's teacher was Johann Bernoulli; his son is Daniel.",
            "useful_relationships": chosen,
        }
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=json.dumps(answer)))])


class FailingChatModel(BaseChatModel):
    """A chat model whose every call raises (an outage)."""

    @property
    def _llm_type(self) -> str:
        return "failing-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise ConnectionError("LLM service unavailable")


class ScriptedExtractionModel(BaseChatModel):
    """Answers OpenIE prompts from a script: passage substring → raw answer text.

    Counts calls and tracks the most calls in flight at once; an answer that is an
    exception instance is raised (a transient error the first ``fail_first`` times).
    """

    script: dict[str, Any]
    calls: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    fail_first: int = 0
    delay: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "scripted-extraction"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        import threading
        import time

        lock = self.__dict__.setdefault("_lock", threading.Lock())
        with lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            call = self.calls
        try:
            if self.delay:
                time.sleep(self.delay)
            if call <= self.fail_first:
                raise ConnectionError("temporary network failure")
            prompt = str(messages[-1].content)
            for needle, answer in self.script.items():
                if needle in prompt:
                    if isinstance(answer, BaseException):
                        raise answer
                    message = AIMessage(
                        content=answer,
                        usage_metadata={
                            "input_tokens": len(prompt) // 4,
                            "output_tokens": len(answer) // 4,
                            "total_tokens": 0,
                        },
                    )
                    return ChatResult(generations=[ChatGeneration(message=message)])
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="I cannot help with that."))])
        finally:
            with lock:
                self.in_flight -= 1
