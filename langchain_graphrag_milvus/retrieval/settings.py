"""Declared settings: one field per setting with its default, description and validation rules.

The building blocks of :mod:`.params` and :mod:`.rankings`: :func:`param` declares a frozen
dataclass field once (default, description, :class:`Rule` s); :func:`check_fields` runs every
rule (a dataclass' ``__post_init__``); :func:`check_setting` checks one value under the name a
caller gave it (``ppr_damping`` for the walk's ``damping``), so the error names what was typed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_graphrag_milvus.retrieval.timeouts import check_timeout

__all__ = [
    "Rule",
    "param",
    "check_fields",
    "check_setting",
    "POSITIVE",
    "NON_NEGATIVE",
    "POSITIVE_OR_NONE",
    "EXPRESSION",
    "TIMEOUT",
    "at_most",
    "one_of",
    "is_int",
    "is_real",
]


@dataclass(frozen=True)
class Rule:
    """One validation rule: ``ok(value)`` per call; ``constraints`` on the retriever's pydantic field.

    Attributes:
        ok: True when the value is valid.
        message: What a valid value is (``"must be a positive integer"``); the error reads
            ``"<name> <message>, got <value>"``.
        constraints: pydantic ``Field`` constraints (``ge``, ``le``...) checked at construction.
        show_value: Append ``", got <value>"`` to the error.
    """

    ok: Callable[[Any], bool]
    message: str
    constraints: Mapping[str, Any] = field(default_factory=dict)
    show_value: bool = True

    def check(self, name: str, value: Any) -> None:
        """Raise ``ValueError`` if ``value`` breaks this rule."""
        if not self.ok(value):
            got = f", got {value!r}" if self.show_value else ""
            raise ValueError(f"{name} {self.message}{got}")


def is_int(value: Any) -> bool:
    """An int that is not a bool."""
    return not isinstance(value, bool) and isinstance(value, int)


def is_real(value: Any) -> bool:
    """A finite int or float that is not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


POSITIVE = Rule(lambda v: is_int(v) and v >= 1, "must be a positive integer", {"ge": 1})
NON_NEGATIVE = Rule(lambda v: is_int(v) and v >= 0, "must be a non-negative integer", {"ge": 0})
POSITIVE_OR_NONE = Rule(lambda v: v is None or (is_int(v) and v >= 1), "must be a positive integer or None")
EXPRESSION = Rule(lambda v: v is None or isinstance(v, str), "must be a Milvus expression string", show_value=False)


def at_most(limit: int, note: str = "") -> Rule:
    """At most ``limit`` (pydantic ``le``)."""
    return Rule(lambda v: v <= limit, f"must be at most {limit}{note}", {"le": limit})


def one_of(*choices: str) -> Rule:
    """One of ``choices`` (``must be 'a', 'b' or 'c'``)."""
    words = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
    return Rule(lambda v: v in choices, f"must be {words}")


def _timeout_ok(value: Any) -> bool:
    try:
        check_timeout("", value)
    except ValueError:
        return False
    return True


TIMEOUT = Rule(_timeout_ok, "must be a positive number of seconds or None")


def param(default: Any, description: str, *rules: Rule) -> Any:
    """A settings field: its default, its description and its rules (checked in this order)."""
    return field(default=default, metadata={"description": description, "rules": rules})


def check_setting(f: dataclasses.Field[Any], value: Any, name: str | None = None) -> None:
    """Run the rules of field ``f`` on ``value``; the error names ``name`` (default: the field's)."""
    for rule in f.metadata.get("rules", ()):
        rule.check(name or f.name, value)


def check_fields(settings: Any) -> None:
    """Run every field's rules on a settings dataclass (in field order)."""
    for f in dataclasses.fields(settings):
        check_setting(f, getattr(settings, f.name))
