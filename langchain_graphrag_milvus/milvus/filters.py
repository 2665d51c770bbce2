"""Turning Milvus' refusal of a filter expression into :class:`InvalidFilterError`.

A string filter is a Milvus expression written by the developer; only Milvus can parse
it. When it does not (a syntax error, an unknown function), the caller gets an
:class:`~langchain_graphrag_milvus.errors.InvalidFilterError` that names the filter and
keeps Milvus' message, instead of a raw ``MilvusException``. Other Milvus errors
(connection, timeout) pass through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from pymilvus import MilvusException

from langchain_graphrag_milvus.errors import InvalidFilterError

__all__ = ["filter_errors"]

# Milvus 2.3: "cannot parse expression: ..."; Milvus Lite 3.x: "... at column 7", "list elements ..."
_PARSE = re.compile(r"expression|parse|at column \d+|syntax|mismatched input|token|literal", re.IGNORECASE)


@contextmanager
def filter_errors(filter_expr: str | None) -> Iterator[None]:
    """Re-raise Milvus' parse errors of ``filter_expr`` as ``InvalidFilterError``."""
    try:
        yield
    except MilvusException as exc:
        message = str(getattr(exc, "message", "") or exc)
        if filter_expr and _PARSE.search(message):
            raise InvalidFilterError(
                f"Milvus cannot use the filter {filter_expr!r:.300}: {message[:300]}; check its syntax "
                '(e.g. tenant == "a"), or pass a {field: value} dict'
            ) from exc
        raise
