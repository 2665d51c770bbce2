r"""Text normalisation and deterministic ids (standard library only).

Entity names are normalised so that surface variants become one node:

* Unicode NFKC (full-width letters, ligatures, non-breaking spaces, ...),
* typographic apostrophes and quotes folded to ASCII (``’`` → ``'``),
* runs of whitespace collapsed to one space, ends stripped,
* a case-insensitive key (``str.casefold``).

``"leonhard Euler"`` and ``"Leonhard  Euler"`` share the key ``"leonhard euler"``; the
display name kept is the first cleaned form seen.

Ids are 16 lowercase hex digits (64 bits of BLAKE2b) of the normalised parts, so
ingesting the same data twice produces the same ids and adds nothing. The graph keys
entities and relations by the integers these digits spell; the one place that converts
(id ↔ key ↔ graph row) is :mod:`langchain_graphrag_milvus.graph.ids`.

Example:
    >>> entity_key("  Leonhard\u00a0EULER ")
    'leonhard euler'
    >>> entity_id("leonhard Euler") == entity_id("Leonhard Euler")
    True
    >>> len(relation_id("a", "b", "c"))
    16
    >>> entity_id("Acme", tenant="a") != entity_id("Acme", tenant="b") != entity_id("Acme")
    True

**Tenants.** In a store whose entity and relation rows are kept per tenant (a store with
a partition key, created by this version), ids derive from (tenant, normalised name):
each tenant has its own rows, spelling and links. The tenant enters the hash as the 32
hex digits of its own BLAKE2b digest (:func:`tenant_scope`), a fixed-length part, so no
tenant string (quotes, separators, any Unicode) can make another tenant's id.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

__all__ = [
    "clean_text",
    "entity_key",
    "entity_id",
    "relation_id",
    "tenant_scope",
    "relation_text",
    "stable_id",
    "content_hash",
]

_WS = re.compile(r"\s+")
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201f": '"',
        "\u2033": '"',
    }
)
_SEP = "\x1f"  # unit separator: cannot occur in cleaned text


def clean_text(text: str) -> str:
    """NFKC, ASCII quotes, collapsed whitespace, stripped: the display form of a name."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).translate(_QUOTES)).strip()


def entity_key(name: str) -> str:
    """The case-insensitive key under which entity names are merged."""
    return clean_text(name).casefold()


def stable_id(*parts: str) -> str:
    """A 16-hex-digit id derived from ``parts`` (deterministic across processes)."""
    digest = hashlib.blake2b(_SEP.join(parts).encode("utf-8"), digest_size=8)
    return digest.hexdigest()


def tenant_scope(tenant: str) -> str:
    """32 hex digits standing for ``tenant`` in the ids of its entities and relations."""
    return hashlib.blake2b(tenant.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def entity_id(name: str, tenant: str | None = None) -> str:
    """The id of the entity named ``name`` (any surface variant gives the same id).

    With ``tenant`` (a store with per-tenant rows), the id of that tenant's entity.
    """
    if tenant is None:
        return stable_id("entity", entity_key(name))
    return stable_id("entity", tenant_scope(tenant), entity_key(name))


def relation_id(subject: str, predicate: str, obj: str, tenant: str | None = None) -> str:
    """The id of the relation (subject, predicate, object), normalised like entities (per ``tenant`` if given)."""
    parts = (entity_key(subject), entity_key(predicate), entity_key(obj))
    if tenant is None:
        return stable_id("relation", *parts)
    return stable_id("relation", tenant_scope(tenant), *parts)


def relation_text(subject: str, predicate: str, obj: str) -> str:
    """The text of a relation as in the seed: ``"subject predicate object"``."""
    return " ".join((clean_text(subject), clean_text(predicate), clean_text(obj)))


def content_hash(text: str) -> str:
    """A short hash of a passage's text, stored to detect changed content on re-ingest."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


_MOVED = {"id_to_key", "key_to_id"}


def __getattr__(name: str) -> Any:
    """``id_to_key`` / ``key_to_id``: moved to the id border :mod:`langchain_graphrag_milvus.graph.ids` (deprecated)."""
    if name in _MOVED:
        import warnings

        from langchain_graphrag_milvus.graph import ids

        warnings.warn(
            f"langchain_graphrag_milvus.text.names.{name} is deprecated: "
            f"use langchain_graphrag_milvus.graph.ids.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(ids, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
