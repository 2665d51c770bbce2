"""Runnable calls with an optional time limit (the reranker's and the query-entity extractor's).

``invoke`` runs the call in a worker thread and stops *waiting* after ``timeout`` seconds
(a blocking call cannot be interrupted from outside; the thread finishes on its own and
its answer is dropped). ``ainvoke`` cancels the awaited call. Either way the caller gets
a :class:`TimeoutError` and applies its documented fallback.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import Future
from typing import Any

from langchain_core.runnables import Runnable

__all__ = ["invoke_with_timeout", "ainvoke_with_timeout", "check_timeout"]


def check_timeout(name: str, value: Any) -> float | None:
    """``value`` as a timeout in seconds (``None``: no limit); anything else is a ``ValueError``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds or None, got {value!r}")
    return float(value)


def invoke_with_timeout(runnable: Runnable[Any, Any], value: Any, config: Any, timeout: float | None) -> Any:
    """``runnable.invoke(value, config)``, raising ``TimeoutError`` after ``timeout`` seconds."""
    if timeout is None:
        return runnable.invoke(value, config=config)
    future: Future[Any] = Future()
    context = contextvars.copy_context()  # tracing context follows the call into the thread

    def target() -> None:
        try:
            future.set_result(context.run(runnable.invoke, value, config=config))
        except BaseException as exc:  # handed to the caller through the future
            future.set_exception(exc)

    threading.Thread(target=target, name="graphrag-timed-call", daemon=True).start()
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        raise TimeoutError(f"no answer within {timeout:g} s") from None


async def ainvoke_with_timeout(runnable: Runnable[Any, Any], value: Any, config: Any, timeout: float | None) -> Any:
    """``await runnable.ainvoke(value, config)``, cancelled after ``timeout`` seconds (``TimeoutError``)."""
    if timeout is None:
        return await runnable.ainvoke(value, config=config)
    try:
        return await asyncio.wait_for(runnable.ainvoke(value, config=config), timeout)
    except TimeoutError:
        raise TimeoutError(f"no answer within {timeout:g} s") from None
