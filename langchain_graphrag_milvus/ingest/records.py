r"""Input records: passages with their triplets, validated (standard library only).

Three input shapes are accepted and turned into :class:`PassageRecord`:

* the seed's ``{"passage": str, "triplets": [[s, p, o], ...]}``,
* MuSiQue-style ``{"id", "title", "text", "triplets"}`` (one JSON object per line in a
  JSONL file; the text becomes ``title + "\n" + text``, the title goes to metadata),
* LangChain ``Document`` objects whose ``metadata["triplets"]`` holds the triplets
  (parsed in :mod:`langchain_graphrag_milvus.store`, which owns the LangChain import).

A triplet must be three non-empty strings. Anything else (the MuSiQue file has 185 of
17,419 with two, four or more parts) is skipped and counted as a :class:`Problem`, or
raises :class:`~langchain_graphrag_milvus.errors.MalformedTripletError` with ``strict``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from langchain_graphrag_milvus.errors import InvalidIdError, MalformedRecordError, MalformedTripletError
from langchain_graphrag_milvus.ingest.identity import (
    MAX_ID_BYTES,
    canonical_metadata,
    canonical_text,
    check_chunk_form,
    check_id,
    default_passage_id,
    resolve_source,
)
from langchain_graphrag_milvus.milvus.schema import PARTITION_KEY_BYTES
from langchain_graphrag_milvus.text.names import clean_text, content_hash

__all__ = [
    "check_partition_key",
    "check_entity_name",
    "MAX_ENTITY_NAME_BYTES",
    "Triplet",
    "PassageRecord",
    "Problem",
    "RESERVED_METADATA_KEYS",
    "MAX_ID_BYTES",
    "MAX_TEXT_BYTES",
    "default_passage_id",
    "parse_triplets",
    "record_from_mapping",
    "iter_jsonl",
]

#: Field names of the passage collection that user metadata may not use.
RESERVED_METADATA_KEYS = frozenset({"pk", "text", "vector", "doc_hash", "triplets"})
#: ``source_id`` is allowed in metadata (a string, at most MAX_ID_BYTES): it names the source document.
#: MAX_ID_BYTES (from :mod:`.identity`): longest passage id accepted, the primary-key limit.
#: Longest passage, entity or relation text accepted (bytes of UTF-8): Milvus' VARCHAR limit.
MAX_TEXT_BYTES = 65_535
#: Longest entity name a merge may create (bytes of UTF-8): room for the relations that name it.
MAX_ENTITY_NAME_BYTES = 4_096
_RECORD_FIELDS = frozenset({"id", "passage", "text", "triplets", "metadata"})


class Triplet(NamedTuple):
    """One (subject, predicate, object) fact, each part cleaned (NFKC, whitespace)."""

    subject: str
    predicate: str
    object: str


@dataclass(frozen=True)
class Problem:
    """Something skipped during ingestion, with where it was and why."""

    record_id: str
    reason: str
    triplet_index: int | None = None

    def __str__(self) -> str:
        where = f"record {self.record_id!r}"
        if self.triplet_index is not None:
            where += f", triplet {self.triplet_index}"
        return f"{where}: {self.reason}"


@dataclass
class PassageRecord:
    """A validated passage: id, text, user metadata and its well-formed triplets."""

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    triplets: list[Triplet] = field(default_factory=list)
    #: The input had no triplets: an extractor (if configured) reads the text instead.
    needs_extraction: bool = False
    #: Extraction was attempted and failed: the next ingest of this passage tries again.
    extraction_failed: bool = False
    #: The source document when it is not the passage id (see :mod:`.identity`).
    source: str | None = None

    @property
    def source_id(self) -> str:
        """The source document: ``metadata["source_id"]``, else ``source``, else the passage id."""
        value = self.metadata.get("source_id")
        if isinstance(value, str) and value:
            return value
        return self.source if self.source else self.id

    @property
    def content_hash(self) -> str:
        """Hash of the text and metadata (canonical forms, see :mod:`.identity`) to detect a changed passage."""
        return content_hash(canonical_text(self.text) + "\x1e" + canonical_metadata(self.metadata))


def check_entity_name(value: Any, what: str) -> str:
    """A usable entity name for a merge target: a non-empty string, valid Unicode, not too long.

    Raises:
        MalformedRecordError: Naming ``what`` (e.g. ``"into"``): not a string, empty, lone
            surrogates, or longer than :data:`MAX_ENTITY_NAME_BYTES` bytes of UTF-8 (each
            relation naming it must stay within Milvus' 65,535-byte text limit).
    """
    name = clean_text(value) if isinstance(value, str) else ""
    if not name:
        raise MalformedRecordError(f"{what} must be a non-empty entity name, not {value!r:.60}")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise MalformedRecordError(f"{what}: {name[:60]!r} is not valid Unicode (lone surrogate)") from None
    if size > MAX_ENTITY_NAME_BYTES:
        raise MalformedRecordError(
            f"{what}: entity name {name[:40]!r}... is {size} bytes of UTF-8, longer than {MAX_ENTITY_NAME_BYTES}; "
            "nothing was merged"
        )
    return name


def _triplet_problem(raw: Any) -> str | None:
    if not isinstance(raw, (list, tuple)):
        return f"not a list of three strings: {raw!r:.80}"
    if len(raw) != 3:
        return f"wrong arity: {len(raw)} parts instead of 3: {list(raw)!r:.120}"
    for part in raw:
        if not isinstance(part, str):
            return f"non-string part {part!r:.40} ({type(part).__name__})"
        if not clean_text(part):
            return f"empty part in {list(raw)!r:.120}"
    try:
        size = len(" ".join(raw).encode("utf-8"))
    except UnicodeEncodeError:
        return "not valid Unicode (lone surrogate); Milvus stores UTF-8"
    if size > MAX_TEXT_BYTES:
        return "relation text longer than 65,535 bytes"
    return None


def parse_triplets(raw_triplets: Any, record_id: str, *, strict: bool, problems: list[Problem]) -> list[Triplet]:
    """Validate raw triplets; malformed ones are recorded in ``problems`` or raise.

    Args:
        raw_triplets: A list of ``[subject, predicate, object]`` lists (``None`` = none).
        record_id: The passage id, for messages.
        strict: Raise :class:`MalformedTripletError` instead of skipping.
        problems: Receives one :class:`Problem` per skipped triplet.

    Returns:
        The well-formed triplets, cleaned, in input order.
    """
    if raw_triplets is None:
        return []
    if isinstance(raw_triplets, (str, bytes)) or not isinstance(raw_triplets, Iterable):
        reason = f"'triplets' must be a list of [subject, predicate, object], got {raw_triplets!r:.80}"
        if strict:
            raise MalformedTripletError(f"record {record_id!r}: {reason}")
        problems.append(Problem(record_id, reason))
        return []
    triplets: list[Triplet] = []
    for index, raw in enumerate(raw_triplets):
        problem = _triplet_problem(raw)
        if problem is not None:
            reason = problem
            if strict:
                raise MalformedTripletError(f"record {record_id!r}, triplet {index}: {reason}")
            problems.append(Problem(record_id, reason, index))
            continue
        triplets.append(Triplet(*(clean_text(part) for part in raw)))
    return triplets


def _check_json_value(value: Any, path: str) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedRecordError(f"metadata {path} is not valid Unicode (lone surrogate)") from None
        return
    if value is None or isinstance(value, (bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MalformedRecordError(f"metadata {path} is {value!r}; Milvus JSON has no NaN/inf")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json_value(item, f"{path}[{i}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise MalformedRecordError(f"metadata {path} has a non-string key {key!r}")
            _check_json_value(key, f"{path} key")
            _check_json_value(item, f"{path}.{key}")
        return
    raise MalformedRecordError(
        f"metadata {path} is a {type(value).__name__}, which Milvus cannot store; "
        "convert it to a string, number, bool, list or dict first"
    )


def validate_metadata(metadata: Any, record_id: str) -> dict[str, Any]:
    """Check that metadata is a JSON-compatible dict without reserved keys."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise MalformedRecordError(f"record {record_id!r}: metadata must be a dict")
    clean: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise MalformedRecordError(f"record {record_id!r}: metadata key {key!r} is not a name")
        if key == "source_id" and not isinstance(value, str):
            raise InvalidIdError(f"record {record_id!r}: metadata 'source_id' must be a string")
        if key == "source_id":
            check_id(value, f"record {record_id!r}: metadata 'source_id'")
        if key in RESERVED_METADATA_KEYS or key.startswith("$"):
            raise MalformedRecordError(
                f"record {record_id!r}: metadata key {key!r} is reserved "
                f"({', '.join(sorted(RESERVED_METADATA_KEYS))}); rename it"
            )
        try:
            _check_json_value(value, key)
        except MalformedRecordError as exc:
            raise MalformedRecordError(f"record {record_id!r}: {exc}") from None
        clean[key] = value
    return clean


def check_passage_id(raw_id: Any, where: str) -> str:
    """Turn a user id into a passage id string, or raise :class:`InvalidIdError`."""
    return check_id(raw_id, where)


def passage_identity(
    raw_id: Any, text: str, metadata: dict[str, Any], source_field: str | None, where: str
) -> tuple[str, str | None]:
    """The passage id and source (None: the id) of a validated record; see :mod:`.identity`."""
    given = check_passage_id(raw_id, where) if raw_id is not None else None
    source = resolve_source(metadata, given, source_field, where)
    passage_id = given if given is not None else default_passage_id(text, metadata)
    check_chunk_form(passage_id, source if source is not None else passage_id, where)
    return passage_id, source


def check_passage_text(text: Any, where: str) -> str:
    """Check a passage text: a non-empty string within Milvus' VARCHAR limit."""
    if not isinstance(text, str) or not text.strip():
        raise MalformedRecordError(f"{where}: passage text is missing or empty")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise MalformedRecordError(f"{where}: passage text is not valid Unicode (lone surrogate)") from None
    if size > MAX_TEXT_BYTES:
        raise MalformedRecordError(
            f"{where}: passage text is longer than {MAX_TEXT_BYTES} bytes; split it into chunks "
            "(for example with langchain_text_splitters) before ingesting"
        )
    return text


def record_from_mapping(
    record: Mapping[str, Any],
    *,
    position: int,
    strict: bool,
    problems: list[Problem],
    source_field: str | None = "source",
) -> PassageRecord:
    """Validate one seed- or MuSiQue-style record.

    Args:
        record: ``{"passage" | "text": str, "triplets": [...], "id"?, "title"?, ...}``;
            keys other than id/passage/text/triplets/metadata go to metadata.
        position: Position in the input, used in messages when the record has no id.
        strict: Raise on malformed triplets instead of skipping them.
        problems: Receives skipped triplets.
        source_field: Metadata key naming the source of a record without an id.

    Returns:
        The validated record.

    Raises:
        MalformedRecordError: The record has no usable text, id or metadata.
        MalformedTripletError: With ``strict``, a triplet is malformed.
    """
    if not isinstance(record, Mapping):
        raise MalformedRecordError(f"record #{position}: expected a JSON object, got {record!r:.60}")
    where = f"record #{position}" + (f" (id {record['id']!r})" if "id" in record else "")
    raw_text = record.get("passage", record.get("text"))
    text = check_passage_text(raw_text, where)
    title = record.get("title")
    if "passage" not in record and isinstance(title, str) and title.strip():
        text = f"{title}\n{text}"
    extra = {k: v for k, v in record.items() if k not in _RECORD_FIELDS}
    label = str(record.get("id", f"#{position}"))
    metadata = {**validate_metadata(record.get("metadata"), label), **validate_metadata(extra, label)}
    if "id" in record and record["id"] is None:
        raise InvalidIdError(f"{where}: id is None; leave the key out for a generated id")
    passage_id, source = passage_identity(record.get("id"), text, metadata, source_field, where)
    triplets = parse_triplets(record.get("triplets"), passage_id, strict=strict, problems=problems)
    return PassageRecord(
        id=passage_id,
        text=text,
        metadata=metadata,
        triplets=triplets,
        needs_extraction="triplets" not in record,
        source=source,
    )


def _parse_line(raw: bytes) -> tuple[Any, str | None]:
    """A JSONL line's object, or None and why it cannot be read."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        return json.loads(line), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return None, "JSON nested too deeply to read"
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        return None, f"unreadable JSON value ({str(exc).split(';')[0]})"


def iter_jsonl(path: str | os.PathLike[str], problems: list[Problem] | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_object)`` for each non-blank line of a JSONL file.

    A line that is not valid UTF-8, not valid JSON, nested too deeply for the parser or
    holding a number Python refuses to convert (more than 4,300 digits) never stops
    the file: it is recorded in ``problems`` as ``"line N"`` with the reason, or raises.

    Args:
        path: The file.
        problems: If given, unreadable lines are recorded there and skipped; otherwise
            they raise.

    Raises:
        MalformedRecordError: A line cannot be read and ``problems`` is None; the
            message names the file and the line.
    """
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            obj, reason = _parse_line(raw)
            if reason is not None:
                if problems is None:
                    raise MalformedRecordError(f"{os.fspath(path)}:{line_number}: {reason}")
                problems.append(Problem(f"line {line_number}", reason))
                continue
            yield line_number, obj


def check_partition_key(partition_key_field: str | None, record: PassageRecord) -> None:
    """Raise if passages are partitioned by a key this record does not carry (a non-empty string).

    Raises:
        MalformedRecordError: The key is missing, not a string, empty or too long.
    """
    key = partition_key_field
    if key is None:
        return
    value = record.metadata.get(key)
    if not isinstance(value, str) or not value or len(value.encode("utf-8")) > PARTITION_KEY_BYTES:
        raise MalformedRecordError(
            f"record {record.id!r}: the partition key field {key!r} must be a non-empty string of at most "
            f"{PARTITION_KEY_BYTES} bytes in its metadata"
        )
