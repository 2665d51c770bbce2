"""A scripted executor: drives a sans-IO pipeline with canned answers, checking each request.

A script is a list of :class:`Step` s: the request the pipeline must make next (its type and,
optionally, a check of its fields) and the answer to send back (or an exception to throw
into the pipeline). :func:`run_script` fails if the pipeline asks for anything else, asks
for more, or stops before the script is done; it returns the pipeline's result and every
request made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_graphrag_milvus.retrieval.effects import Effect, SearchHeld, Steps


def _past_held(pipeline: Steps[Any], request: Any, expected: type[Any] | None) -> Any:
    """The next request past any :class:`SearchHeld` the script does not expect (answered None: nothing held)."""
    while isinstance(request, SearchHeld) and expected is not SearchHeld:
        request = pipeline.send(None)
    return request


@dataclass
class Step:
    """One expected request and its answer."""

    kind: type[Any]
    answer: Any = None
    check: Callable[[Any], bool] | None = None
    raises: BaseException | None = None
    reply: Callable[[Any], Any] | None = None
    """Computes the answer from the request instead of ``answer`` (e.g. rows for the ids fetched)."""


def run_script(pipeline: Steps[Any], script: Sequence[Step]) -> tuple[Any, list[Effect]]:
    """Run ``pipeline`` against ``script``; its result and the requests it made."""
    requests: list[Effect] = []
    value: object = None
    error: BaseException | None = None
    for i, step in enumerate(script):
        try:
            request = pipeline.throw(error) if error is not None else pipeline.send(value)
            request = _past_held(pipeline, request, step.kind)
        except StopIteration as stop:
            raise AssertionError(f"pipeline returned after {i} of {len(script)} steps: {stop.value!r}") from None
        requests.append(request)
        assert isinstance(request, step.kind), f"step {i}: expected {step.kind.__name__}, got {request!r}"
        if step.check is not None:
            assert step.check(request), f"step {i}: unexpected {request!r}"
        if step.raises is not None:
            value, error = None, step.raises
        else:
            value, error = (step.reply(request) if step.reply is not None else step.answer), None
    try:
        extra = pipeline.throw(error) if error is not None else pipeline.send(value)
        extra = _past_held(pipeline, extra, None)
    except StopIteration as stop:
        return stop.value, requests
    raise AssertionError(f"pipeline asked for more than the script: {extra!r}")
