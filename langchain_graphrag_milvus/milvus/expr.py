r"""Safe construction of Milvus boolean expressions (standard library only).

Untrusted text (ids, entity names, metadata values) never enters an expression raw:
strings become double-quoted literals with every backslash, quote and control character
escaped, and field names must be plain identifiers. Milvus Lite 3.x and Milvus 2.3
servers both parse these literals; neither supports ``filter_params`` templates
everywhere, so escaping is the one mechanism that works on both.

Example:
    >>> literal('x" or pk != "')
    '"x\\" or pk != \\""'
    >>> in_list("pk", ["a", 'b"c'])
    'pk in ["a", "b\\"c"]'
    >>> eq_filter({"tenant": "a", "year": 2020})
    '(tenant == "a") and (year == 2020)'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_graphrag_milvus.errors import InvalidFilterError

__all__ = ["literal", "field_name", "in_list", "eq_filter", "and_all", "as_filter"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_TABLE = str.maketrans(_ESCAPES)
_NEEDS_ESCAPE = re.compile(r'[\\"\n\r\t]')


def literal(value: Any) -> str:
    """A Milvus expression literal for a string, number or boolean."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidFilterError(f"cannot compare with {value!r}")
        return repr(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidFilterError(f"{value[:60]!r} is not valid Unicode (lone surrogate)") from None
        # the escapes both Milvus Lite 3.x and Milvus 2.3 parse; other characters (control
        # characters, NUL, U+2028 included; measured on both) are accepted raw inside a
        # double-quoted literal
        return '"' + (value.translate(_ESCAPE_TABLE) if _NEEDS_ESCAPE.search(value) else value) + '"'
    raise InvalidFilterError(f"unsupported value in a filter: {type(value).__name__}")


def field_name(name: str) -> str:
    """Validate a field name for use in an expression (letters, digits, underscore)."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise InvalidFilterError(f"{name!r} is not a usable field name (letters, digits and underscores only)")
    return name


def in_list(field: str, values: Iterable[Any]) -> str:
    """``field in [v1, v2, ...]`` with every value escaped."""
    return f"{field_name(field)} in [{', '.join(literal(v) for v in values)}]"


def eq_filter(conditions: Mapping[str, Any]) -> str:
    """Conjunction of equality tests; a list value means "one of" (``in``).

    Example:
        >>> eq_filter({"tenant": ["a", "b"]})
        '(tenant in ["a", "b"])'
    """
    parts = []
    for key, value in conditions.items():
        if isinstance(value, (list, tuple, set, frozenset)):
            parts.append(f"({in_list(key, sorted(value, key=str) if isinstance(value, (set, frozenset)) else value)})")
        else:
            parts.append(f"({field_name(key)} == {literal(value)})")
    if not parts:
        raise InvalidFilterError("empty filter")
    return " and ".join(parts)


def as_filter(value: str | Mapping[str, Any] | None) -> str | None:
    r"""A filter from an expression string or a ``{field: value}`` dict.

    Strings are trusted Milvus expressions written by the developer; dict values are
    escaped, so they are safe for untrusted input (a value cannot widen the filter).

    Example:
        >>> as_filter({"tenant": 'a" or tenant != "'})
        '(tenant == "a\\" or tenant != \\"")'
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, Mapping):
        return eq_filter(value)
    raise InvalidFilterError(f"a filter must be an expression string or a dict, not {type(value).__name__}")


def and_all(*expressions: str | None) -> str | None:
    """Join non-empty expressions with ``and`` (each parenthesised); None if none."""
    parts = [f"({e})" for e in expressions if e]
    if not parts:
        return None
    return " and ".join(parts)


def any_of(*expressions: str | None) -> str | None:
    """Join non-empty expressions with ``or`` (each parenthesised); None if none."""
    parts = [f"({e})" for e in expressions if e]
    if not parts:
        return None
    return " or ".join(parts)
