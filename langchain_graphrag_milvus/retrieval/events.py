"""Collectors of the custom events a retrieval sends to its callbacks (why nothing, or little, was found).

A pipeline tells its caller what it noticed with a ``Notify`` effect
(:mod:`~langchain_graphrag_milvus.retrieval.effects`): the executors log it and dispatch it as a
LangChain custom event on the retriever's run. :class:`NoPathEvents` collects the path
retriever's ``"graphrag_no_path"`` events (also exported by
:mod:`langchain_graphrag_milvus.path_retriever`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from langchain_graphrag_milvus.retrieval.path_pipeline import NO_PATH_EVENT

__all__ = ["NoPathEvents", "RetrievalEvents"]


class RetrievalEvents(BaseCallbackHandler):
    """Collects the custom events named in ``names`` (every custom event when ``names`` is None).

    Each event is kept as ``(name, data)`` in :attr:`events`; :attr:`last` is the newest data.
    Pass it in ``config={"callbacks": [handler]}`` of ``invoke``/``ainvoke``.
    """

    def __init__(self, names: frozenset[str] | None = None) -> None:
        """Collect the events ``names`` (None: all)."""
        super().__init__()
        self.names = names
        self.named: list[tuple[str, dict[str, Any]]] = []

    @property
    def events(self) -> list[dict[str, Any]]:
        """The data of each collected event, oldest first."""
        return [data for _, data in self.named]

    @property
    def last(self) -> dict[str, Any] | None:
        """The newest event's data, if any."""
        return self.named[-1][1] if self.named else None

    def reason(self) -> str | None:
        """The newest event's ``"reason"``, if any."""
        last = self.last
        return None if last is None else str(last.get("reason") or "") or None

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        """Record ``data`` of a wanted event."""
        if self.names is None or name in self.names:
            self.named.append((name, dict(data)))


class NoPathEvents(RetrievalEvents):
    """Collects the ``"graphrag_no_path"`` events of path retrievals (why nothing was returned).

    Each event is a dict ``{"reason", "entities", "pairs"}``; :attr:`last` is the newest.
    Pass it in ``config={"callbacks": [handler]}`` of ``invoke``/``ainvoke``.
    """

    def __init__(self) -> None:
        """Start with no events."""
        super().__init__(frozenset({NO_PATH_EVENT}))
