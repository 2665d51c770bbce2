r"""Passage and source identity: which ids are valid, which are generated, and how.

The rules (standard library only):

* **Valid ids.** A passage or source id is a string (an integer is turned into one),
  not blank, valid Unicode that encodes as UTF-8 (no lone surrogates), and at most
  :data:`MAX_ID_BYTES` bytes of UTF-8 (the primary-key limit of the collections).
  Anything else raises :class:`~langchain_graphrag_milvus.errors.InvalidIdError`
  before anything is written. Quotes, backslashes, newlines, brackets and any other
  character are fine: ids only ever enter Milvus as escaped literals (:mod:`.expr`).
* **The source** of a passage (what ``delete_documents`` and ``upsert_documents`` name)
  is ``metadata["source_id"]`` if set; else the passage's own id if the user gave one;
  else ``metadata[source_field]`` (``"source"`` by default, as LangChain loaders set
  it); else the passage's generated id.
* **Generated passage ids.** A passage without an id gets a 16-hex hash of its text
  *and its metadata* (of the text alone when it has none): the same text from another
  tenant, file or page is another passage, and re-ingesting identical input is a no-op.
* **Equal text, equal metadata.** Identity (the generated id and the content hash
  that says whether a stored passage changed) is computed on a canonical form:
  the text in Unicode NFC, so a text typed with composed accents (``"café"``,
  NFC) and one with combining accents (``"cafe\u0301"``, NFD) are *one* passage
  (they are the same text to every reader; the text stored is the first one
  ingested, as given); metadata with string keys and values in NFC and numbers by
  value, so ``{"page": 1}`` and ``{"page": 1.0}`` are *one* passage (JSON, Milvus
  filters and Python all compare them equal). ``True`` and ``1`` stay different
  (JSON ``true`` is not a number), as do ``"1"`` and ``1``. NFKC compatibility
  forms (``"ﬁ"`` vs ``"fi"``) are different texts. Explicit ids are never changed.
* **Tenants.** In a store with a partition key, a source's identity is the pair
  (partition key value, source): tenants ``a`` and ``b`` may both have ``"notes.txt"``
  and never touch each other's passages.
* **Chunk ids.** A splitter's chunks of source ``S`` get ids ``"S#0000"``, ``"S#0001"``...
  (numbered across all documents of ``S`` in one call); in a store with a partition
  key, ``"S#0000@"`` followed by 12 hex digits of a hash of the tenant value, so two
  tenants' chunks of ``"notes.txt"`` never share an id. An id of that form, a ``#``
  followed by four or more digits (and optionally ``@`` and 12 hex digits) at its end,
  is accepted only for a passage whose source is exactly the part before that ``#``
  (a chunk of ``S``), so no other document can take, or overwrite, a chunk's id.

Example:
    >>> chunk_id("corpus/daniel.txt", 2)
    'corpus/daniel.txt#0002'
    >>> chunk_source("x#0000")     # a document with id "x#0000" must have source "x"
    'x'
    >>> chunk_id("notes.txt", 0, scope="a") != chunk_id("notes.txt", 0, scope="b")
    True
    >>> default_passage_id("same text", {"tenant": "a"}) != default_passage_id("same text", {"tenant": "b"})
    True
    >>> default_passage_id("caf\u00e9", {"page": 1}) == default_passage_id("cafe\u0301", {"page": 1.0})
    True
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_graphrag_milvus.errors import InvalidIdError
from langchain_graphrag_milvus.milvus.schema import MAX_ID_BYTES
from langchain_graphrag_milvus.text.names import stable_id

__all__ = [
    "MAX_ID_BYTES",
    "CHUNK_SEPARATOR",
    "utf8_length",
    "check_id",
    "check_id_list",
    "chunk_id",
    "chunk_source",
    "check_chunk_form",
    "check_chunkable_source",
    "default_passage_id",
    "canonical_text",
    "canonical_metadata",
    "resolve_source",
]

CHUNK_SEPARATOR = "#"
_CHUNK_SUFFIX = re.compile(r"#[0-9]{4,}(?:@[0-9a-f]{12})?\Z")
#: Room kept for the ``#NNNN`` suffix when a source is chunked (up to 10**10 chunks).
_CHUNK_ROOM = 11
#: Extra room for the ``@<12 hex>`` tenant suffix of a chunk id in a partitioned store.
_SCOPE_ROOM = 13


def utf8_length(value: str, where: str) -> int:
    """Bytes of ``value`` in UTF-8; a string with lone surrogates raises ``InvalidIdError``."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidIdError(
            f"{where}: {value[:60]!r} is not valid Unicode ({exc.reason} at position {exc.start}); Milvus stores UTF-8"
        ) from None


def check_id(raw: Any, where: str, *, max_bytes: int = MAX_ID_BYTES) -> str:
    """A valid id string from ``raw`` (a string or an integer), or ``InvalidIdError``."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise InvalidIdError(f"{where}: an id must be a string or an integer, got {type(raw).__name__} {raw!r:.60}")
    value = str(raw)
    if not value.strip():
        raise InvalidIdError(f"{where}: id is empty")
    size = utf8_length(value, where)
    if size > max_bytes:
        raise InvalidIdError(
            f"{where}: id {value[:40]!r}... is {size} bytes of UTF-8, longer than {max_bytes} (the Milvus key limit)"
        )
    return value


def check_id_list(values: Iterable[Any], what: str) -> list[str]:
    """Validate a list of ids for a delete or fetch; a bare string is a ``TypeError``.

    Returns:
        The ids as strings, first occurrences only, in order.
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(
            f"{what} must be a list of ids, not {type(values).__name__} {values!r:.60}; wrap one id in [...]"
        )
    return list(dict.fromkeys(check_id(v, f"{what}[{i}]") for i, v in enumerate(values)))


def chunk_id(source: str, index: int, scope: str | None = None) -> str:
    """The id of chunk ``index`` of ``source``: ``"{source}#{index:04d}"``.

    With ``scope`` (the tenant: the partition key value), ``"@"`` and 12 hex digits of
    its hash follow, so each tenant's chunks of a shared source name have their own ids.
    """
    base = f"{source}{CHUNK_SEPARATOR}{index:04d}"
    if scope is None:
        return base
    return f"{base}@{hashlib.blake2b(scope.encode('utf-8'), digest_size=6).hexdigest()}"


def chunk_source(passage_id: str) -> str | None:
    """The source whose chunk id form ``passage_id`` has, or None."""
    match = _CHUNK_SUFFIX.search(passage_id)
    return passage_id[: match.start()] if match else None


def check_chunk_form(passage_id: str, source: str, where: str) -> None:
    """Refuse an id of the chunk form ``"S#0000"`` unless the passage's source is ``S``."""
    owner = chunk_source(passage_id)
    if owner is not None and owner != source:
        raise InvalidIdError(
            f"{where}: id {passage_id!r:.80} has the form of a chunk id of source {owner!r:.60} ('#' and four or "
            f"more digits at its end are reserved for a splitter's chunks); choose another id, or set "
            f"metadata['source_id'] to {owner!r:.60} if this passage really is that chunk"
        )


def check_chunkable_source(source: str, where: str, *, scoped: bool = False) -> None:
    """Refuse a source too long to leave room for the chunk suffix (``#NNNN``, ``@<tenant hash>``)."""
    size = utf8_length(source, where)
    room = _CHUNK_ROOM + (_SCOPE_ROOM if scoped else 0)
    if size > MAX_ID_BYTES - room:
        raise InvalidIdError(
            f"{where}: source {source[:40]!r}... is {size} bytes; chunk ids need it to be at most "
            f"{MAX_ID_BYTES - room} bytes"
        )


def canonical_text(text: str) -> str:
    """The text identity is computed on: Unicode NFC (see the module rules)."""
    return unicodedata.normalize("NFC", text)


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # 1.0 -> 1, -0.0 -> 0: numbers by value
    if isinstance(value, Mapping):
        return {unicodedata.normalize("NFC", str(k)): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def canonical_metadata(metadata: Mapping[str, Any]) -> str:
    """Metadata as the JSON identity is computed on: sorted keys, NFC strings, numbers by value."""
    return json.dumps(_canonical(dict(metadata)), sort_keys=True, ensure_ascii=False, default=str)


def default_passage_id(text: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The id of a passage ingested without one: a hash of its text and its metadata.

    Both in their canonical form (:func:`canonical_text`, :func:`canonical_metadata`).
    Without metadata the id is the hash of the text alone (the id earlier versions gave
    for NFC text).
    """
    if not metadata:
        return stable_id("passage", canonical_text(text))
    return stable_id("passage", canonical_text(text), canonical_metadata(metadata))


def resolve_source(
    metadata: Mapping[str, Any], given_id: str | None, source_field: str | None, where: str
) -> str | None:
    """The source id of a passage (see the module rules); None means "the passage id".

    Raises:
        InvalidIdError: ``metadata[source_field]`` is used but is not a valid id.
    """
    value = metadata.get("source_id")
    if isinstance(value, str) and value:
        return value
    if given_id is not None:
        return given_id
    if source_field is not None:
        raw = metadata.get(source_field)
        if raw is not None and raw != "":
            return check_id(raw, f"{where}: metadata[{source_field!r}] (the source key)")
    return None
