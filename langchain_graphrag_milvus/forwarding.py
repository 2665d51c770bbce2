"""The facade's forwarding, kept out of ``store.py``.

A public method of :class:`~langchain_graphrag_milvus.store.MilvusGraphStore` calls the same
method on one of its parts and keeps the part's signature, docs and async-ness.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

__all__ = ["forward"]

P = ParamSpec("P")
R = TypeVar("R")


def forward(part: str, method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A facade method that calls ``method`` on the part held in attribute ``part`` (same signature and docs)."""
    name = method.__name__
    if inspect.iscoroutinefunction(method):

        async def acall(self: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
            return await getattr(getattr(self, part), name)(*args, **kwargs)

        return cast("Callable[Concatenate[Any, P], R]", functools.wraps(method)(acall))

    def call(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        return cast(R, getattr(getattr(self, part), name)(*args, **kwargs))

    return cast("Callable[Concatenate[Any, P], R]", functools.wraps(method)(call))
