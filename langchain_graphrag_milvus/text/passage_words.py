"""How many passages hold each word: the text side of a word's keyphraseness.

The offline linker asks, for a one-word lower-case mention, how often the word is an
*entity* of a passage (its relations name it) against how often it merely *occurs* in a
passage's text — the keyphraseness (link probability) of Wikipedia entity linking
(Mihalcea & Csomai, 2007): "pip" or "keyring" is an entity wherever it is written, "runs"
or "main" is plain English in most of the passages that hold it. :class:`PassageWords`
counts the text side: for every word (folded as the linker folds names), the number of
passages whose text holds it. Plain Python; no model, no store.

Example:
    >>> words = PassageWords(["pip installs packages.", "It runs pip.", "The job runs daily."])
    >>> words.count("pip"), words.count("runs"), words.count("Runs"), words.n_passages
    (2, 2, 2, 3)
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from langchain_graphrag_milvus.errors import UnpageableKeysError
from langchain_graphrag_milvus.text.tokens import name_tokens

__all__ = ["MAX_COUNTED_PASSAGES", "PassageWords", "PassageWordFrequency"]

#: Graphs of more passages than this skip the text count (and so the keyphraseness rule): the
#: count reads every passage's text once per graph change, which a large, busy store cannot pay
#: on a query. Counting at ingest, kept with the graph, is what would lift this limit.
MAX_COUNTED_PASSAGES = 20_000

logger = logging.getLogger("langchain_graphrag_milvus")


class PassageWords:
    """Number of passages whose text holds each word (one count per passage however often).

    Args:
        texts: The passages' texts (read lazily).
        limit: Stop reading after this many and count nothing (``n_passages`` 0: every word held by 0
            passages); ``None`` reads them all.
    """

    def __init__(self, texts: Iterable[str], limit: int | None = None) -> None:
        counts: Counter[str] = Counter()
        n = 0
        for text in texts:
            n += 1
            if limit is not None and n > limit:  # the rest is not read
                counts, n = Counter(), 0
                break
            counts.update(set(name_tokens(text or "")))
        self._counts = counts
        #: Passages counted.
        self.n_passages = n

    def count(self, word: str) -> int:
        """Passages holding ``word`` (folded as a name key: case, plural, diacritics); 0 unless one word."""
        tokens = name_tokens(word)
        return self._counts.get(tokens[0], 0) if len(tokens) == 1 else 0

    def __len__(self) -> int:
        return len(self._counts)


class PassageWordFrequency:
    """Names → (passages whose text holds each one-word name, passages), kept in step with a graph.

    The counts are made from ``texts()`` on the first call and again on the first call after
    ``current()`` returns another object (the store's graph after an ingest): one read of every
    passage's text, then dictionary lookups. An object whose ``n_passages`` is above
    ``max_passages`` gets no count (every word held by 0 passages: the rule links as before), and
    so does a store whose scan yields more than ``max_passages`` texts (passages outside the graph
    count too: the scan stops there), and one whose passages ``texts()`` cannot scan
    (:class:`~langchain_graphrag_milvus.errors.UnpageableKeysError`:
    passage ids with quotes or backslashes, such as Windows paths).

    Args:
        texts: Reads every passage's text.
        current: The object the counts belong to (compared by identity).
        max_passages: The most passages counted (:data:`MAX_COUNTED_PASSAGES`).
    """

    def __init__(
        self,
        texts: Callable[[], Iterable[str]],
        current: Callable[[], object],
        max_passages: int = MAX_COUNTED_PASSAGES,
    ) -> None:
        self._texts = texts
        self._current = current
        self.max_passages = max_passages
        self._made: tuple[object, PassageWords] | None = None
        self._lock = threading.Lock()

    def words(self) -> PassageWords:
        """The counts for the current object (made if it changed)."""
        owner = self._current()
        made = self._made
        if made is None or made[0] is not owner:
            with self._lock:
                made = self._made
                if made is None or made[0] is not owner:
                    too_many = int(getattr(owner, "n_passages", 0) or 0) > self.max_passages
                    try:
                        words = PassageWords(() if too_many else self._texts(), limit=self.max_passages)
                    except UnpageableKeysError as exc:  # no count: the rule links as before
                        logger.debug("passage word counts not made (%s); keyphraseness rule skipped", exc)
                        words = PassageWords(())
                    made = self._made = (owner, words)
        return made[1]

    def __call__(self, names: Sequence[str]) -> tuple[list[int], int]:
        """(passages holding each one-word name, passages); 0 for a name of several words."""
        words = self.words()
        return [words.count(name) for name in names], words.n_passages
