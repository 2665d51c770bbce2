"""The two executors of the sans-IO pipelines: blocking (``invoke``) and ``await`` (``ainvoke``).

A pipeline is a generator of :mod:`~langchain_graphrag_milvus.retrieval.effects`. An
executor answers each effect against a :class:`~langchain_graphrag_milvus.retrieval.store_api.RetrievalStore`
and sends the answer back (a failing effect is thrown back into the generator, which
decides where to fall back); the generator's return value is the result. Both executors
run the very same pipeline code, so ``invoke`` and ``ainvoke`` cannot drift apart.

Example:
    .. code-block:: python

        from langchain_graphrag_milvus.retrieval.executors import run_sync
        from langchain_graphrag_milvus.retrieval.graph_pipeline import naive_pipeline

        docs = run_sync(naive_pipeline("Who taught Euler?", 2, None), store)
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

from langchain_graphrag_milvus.milvus.filters import filter_errors
from langchain_graphrag_milvus.retrieval.effects import (
    CheckGraph,
    Compute,
    Effect,
    Embed,
    EntityNames,
    Fetch,
    Gather,
    GetGraph,
    Invoke,
    LinkEntities,
    Notify,
    Request,
    Search,
    SearchHeld,
    Steps,
    Unchanged,
    ViewOf,
)
from langchain_graphrag_milvus.retrieval.store_api import RetrievalStore
from langchain_graphrag_milvus.retrieval.timeouts import ainvoke_with_timeout, invoke_with_timeout

logger = logging.getLogger("langchain_graphrag_milvus")

__all__ = ["run_sync", "run_async", "answer_sync", "answer_async", "gather_sync"]

T = TypeVar("T")

#: Threads answering the reads of a sync :class:`Gather` (shared by all retrievers of a process).
_POOL_SIZE = 8
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def search_options(effect: Search) -> dict[str, Any]:
    """The keyword arguments of a store's ``search`` for ``effect`` (``within`` only when set)."""
    options: dict[str, Any] = {"filter_expr": effect.filter_expr, "output_fields": effect.output_fields}
    if effect.within is not None:
        options["within"] = effect.within
    return options


def answer_sync(effect: Request[Any], store: RetrievalStore, callbacks: Any = None) -> Any:
    """The answer to one effect, by blocking calls (``callbacks``: the run's child callback manager)."""
    if isinstance(effect, Invoke):
        return invoke_with_timeout(effect.runnable, effect.input, {"callbacks": callbacks}, effect.timeout)
    if isinstance(effect, Notify):
        logger.info("%s: %s", effect.name, effect.data.get("reason", effect.data))
        if callbacks is not None:
            callbacks.on_custom_event(effect.name, effect.data, run_id=callbacks.parent_run_id)
        return None
    if isinstance(effect, Embed):
        return store.embedding.embed_documents(list(effect.texts))
    if isinstance(effect, Search):
        return store.search(effect.kind, effect.vectors, effect.limit, **search_options(effect))
    if isinstance(effect, Fetch):
        return store.fetch(effect.kind, effect.ids, effect.output_fields, filter_expr=effect.filter_expr)
    if isinstance(effect, SearchHeld):  # no Milvus call (but a passage table read once per generation)
        held = getattr(store, "search_held", None)
        return held(effect.searches) if held is not None else None
    if isinstance(effect, Unchanged):
        unchanged = getattr(store, "unchanged", None)
        return bool(unchanged(effect.stamp)) if unchanged is not None else False
    if isinstance(effect, Gather):
        return gather_sync(effect.effects, store, callbacks)
    if isinstance(effect, GetGraph):
        unchecked = getattr(store, "graph_unchecked", None) if effect.defer_check else None
        return unchecked() if unchecked is not None else store.graph
    if isinstance(effect, CheckGraph):
        moved_on = getattr(store, "graph_moved_on", None)
        return bool(moved_on(effect.graph)) if moved_on is not None else False
    if isinstance(effect, LinkEntities):
        with filter_errors(effect.filter_expr):
            return store.entity_linker(effect.filter_expr).find(effect.query)
    if isinstance(effect, EntityNames):
        names = store.entity_names()
        return {i: names.get(i, "") for i in effect.ids}
    if isinstance(effect, ViewOf):
        with filter_errors(effect.filter_expr):
            return store.graph_view(effect.filter_expr, effect.graph)
    if isinstance(effect, Compute):
        return effect.fn(*effect.args)
    raise TypeError(f"unknown effect {effect!r}")


def _pool() -> ThreadPoolExecutor:
    """The threads that answer the searches of a :class:`Gather` (created on first use, shared)."""
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=_POOL_SIZE, thread_name_prefix="graphrag-search")
    return _POOL


#: The effects a sync :class:`Gather` answers concurrently: reads, the graph check, the linker and the embedding.
_CONCURRENT = (Search, Fetch, CheckGraph, Unchanged, LinkEntities, Embed)


def gather_sync(effects: tuple[Request[Any], ...], store: RetrievalStore, callbacks: Any = None) -> list[Any]:
    """The answers to several effects, in order; reads, graph checks, the linker and embeddings run concurrently.

    Each Milvus read is one gRPC round trip and pymilvus' client is thread-safe, so the
    independent reads of a :class:`Gather` overlap (one in the calling thread, the others
    in a small shared pool), as ``asyncio.gather`` overlaps them under ``ainvoke``; so do
    the offline linker (CPU) and the query's embedding. The calling thread answers the
    first embedding if there is one (else the first effect): the embedding model runs
    without the GIL, so the linker's Python in a pool thread starts at once, while a pool
    thread's embedding would wait for the GIL the calling thread's linker holds (up to the
    interpreter's switch interval) before it could start.
    Every read is waited for; then the first failure *in the effects' order* is raised
    as it was (the same error a one-by-one answer raises first). Other effects are
    answered one by one.
    """
    if len(effects) < 2 or not all(isinstance(e, _CONCURRENT) for e in effects):
        return [answer_sync(e, store, callbacks) for e in effects]
    lead = next((i for i, e in enumerate(effects) if isinstance(e, Embed)), 0)
    futures = {i: _pool().submit(answer_sync, e, store, callbacks) for i, e in enumerate(effects) if i != lead}
    answers: list[Any] = [None] * len(effects)
    errors: list[BaseException | None] = [None] * len(effects)
    try:
        answers[lead] = answer_sync(effects[lead], store, callbacks)
    except Exception as exc:
        errors[lead] = exc
    wait(futures.values())
    for i, future in futures.items():
        errors[i] = future.exception()
        answers[i] = None if errors[i] is not None else future.result()
    failure = next((e for e in errors if e is not None), None)
    if failure is not None:
        raise failure
    return answers


async def answer_async(effect: Request[Any], store: RetrievalStore, callbacks: Any = None) -> Any:
    """The answer to one effect, awaited (reads that build the graph run in a worker thread)."""
    if isinstance(effect, Invoke):
        return await ainvoke_with_timeout(effect.runnable, effect.input, {"callbacks": callbacks}, effect.timeout)
    if isinstance(effect, Notify):
        logger.info("%s: %s", effect.name, effect.data.get("reason", effect.data))
        if callbacks is not None:
            await callbacks.on_custom_event(effect.name, effect.data, run_id=callbacks.parent_run_id)
        return None
    if isinstance(effect, Embed):
        return await store.embedding.aembed_documents(list(effect.texts))
    if isinstance(effect, Search):
        return await store.asearch(effect.kind, effect.vectors, effect.limit, **search_options(effect))
    if isinstance(effect, Fetch):
        return await store.afetch(effect.kind, effect.ids, effect.output_fields, filter_expr=effect.filter_expr)
    if isinstance(effect, Gather):
        return list(await asyncio.gather(*(answer_async(e, store, callbacks) for e in effect.effects)))
    if isinstance(effect, (GetGraph, CheckGraph, SearchHeld, Unchanged, LinkEntities, EntityNames, ViewOf, Compute)):
        # building the graph or the linker reads Milvus: keep the event loop free
        return await asyncio.to_thread(answer_sync, effect, store, callbacks)
    raise TypeError(f"unknown effect {effect!r}")


def run_sync(pipeline: Steps[T], store: RetrievalStore, callbacks: Any = None) -> T:
    """Run ``pipeline`` to its end with :func:`answer_sync`; return what it returns."""
    value: object = None
    error: BaseException | None = None
    while True:
        try:
            effect: Effect = pipeline.throw(error) if error is not None else pipeline.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            value, error = answer_sync(effect, store, callbacks), None
        except Exception as exc:
            value, error = None, exc


async def run_async(pipeline: Steps[T], store: RetrievalStore, callbacks: Any = None) -> T:
    """Run ``pipeline`` to its end with :func:`answer_async`; return what it returns."""
    value: object = None
    error: BaseException | None = None
    while True:
        try:
            effect: Effect = pipeline.throw(error) if error is not None else pipeline.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            value, error = await answer_async(effect, store, callbacks), None
        except Exception as exc:
            value, error = None, exc
