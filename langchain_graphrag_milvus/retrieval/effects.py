"""The I/O requests the retrieval pipeline yields (see :mod:`langchain_graphrag_milvus.retrieval.graph_pipeline`).

The executors of :mod:`~langchain_graphrag_milvus.retrieval.executors` answer each one:
blocking calls for ``invoke``, ``await`` for ``ainvoke``. Each request class is a
:class:`Request` of the type of its answer, and the pipelines ask through :func:`ask`
(``hits = yield from ask(Search(...))``), so every value sent back into a pipeline has a
type: the executors guarantee that a request of ``Request[T]`` is answered with a ``T``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.milvus.schema import Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.reads import Hit

T = TypeVar("T")
R = TypeVar("R")

__all__ = [
    "Request",
    "ask",
    "search_all",
    "Steps",
    "Invoke",
    "Embed",
    "Search",
    "Fetch",
    "SearchHeld",
    "Unchanged",
    "Gather",
    "GetGraph",
    "CheckGraph",
    "LinkEntities",
    "ViewOf",
    "EntityNames",
    "Compute",
    "Notify",
    "Effect",
]


class Request(Generic[T]):
    """An I/O request whose answer is a ``T`` (the base of every effect below)."""

    __slots__ = ()


@dataclass(frozen=True)
class Invoke(Request[Any]):
    """Run a runnable (with the retriever's child callbacks).

    With ``timeout`` (seconds), a call that has not answered by then raises
    ``TimeoutError`` into the pipeline (see :mod:`~langchain_graphrag_milvus.retrieval.timeouts`).
    """

    runnable: Runnable[Any, Any]
    input: Any
    timeout: float | None = None


@dataclass(frozen=True)
class Embed(Request[list[list[float]]]):
    """Embed texts in one call."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Search(Request["list[list[Hit]]"]):
    """One batched vector search: per vector, its hits, most similar first.

    ``within``: when the filter selects exactly the rows of these primary keys (``pk in [...]``,
    or the relations of some entities), those keys: a store holding the vectors in the client
    scores only these rows instead of asking Milvus (:mod:`~langchain_graphrag_milvus.milvus.local_search`).
    """

    kind: Kind
    vectors: tuple[tuple[float, ...], ...]
    limit: int
    filter_expr: str | None = None
    output_fields: tuple[str, ...] = ("pk",)
    within: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Fetch(Request[dict[str, dict[str, Any]]]):
    """Rows by primary key (id → row; ids not found, or outside the filter, are absent)."""

    kind: Kind
    ids: tuple[str, ...]
    output_fields: tuple[str, ...]
    filter_expr: str | None = None


@dataclass(frozen=True)
class SearchHeld(Request["tuple[list[list[list[Hit]]], Any] | None"]):
    """Searches answered from the vectors the store holds in the client alone, with no Milvus call.

    Answer: the searches' hits and the stamp (store id, generation) the held rows are of, or
    None when the store cannot answer them all so (the pipeline then searches the usual way).
    Passage hits carry no fields; the rows returned are read by key with an :class:`Unchanged`.
    """

    searches: tuple[Search, ...]


@dataclass(frozen=True)
class Unchanged(Request[bool]):
    """Whether the store's stamp (store id, generation counter) is still ``stamp`` (one read)."""

    stamp: Any


@dataclass(frozen=True)
class Gather(Request[list[Any]]):
    """Several effects; the async executor runs them concurrently. Answer: their answers, in order."""

    effects: tuple[Request[Any], ...]


@dataclass(frozen=True)
class GetGraph(Request[GraphIndex]):
    """The store's graph index (built from Milvus on first use).

    By default the store's periodic freshness check runs first when it is due (one Milvus
    read before anything else). With ``defer_check=True`` the graph in memory is answered
    as it is, and the pipeline sends a :class:`CheckGraph` together with its searches, so
    the check costs no round trip of its own.
    """

    defer_check: bool = False


@dataclass(frozen=True)
class CheckGraph(Request[bool]):
    """Whether the store's graph moved on from ``graph``, asked in the same :class:`Gather` as the searches.

    Runs the store's freshness check if it is due (reloading the graph if another writer
    changed the data), and answers True if the current graph is no longer ``graph``; the
    pipeline then searches again on the current one. A store without the check answers False.
    """

    graph: Any


@dataclass(frozen=True)
class LinkEntities(Request[list[str]]):
    """Known entity names found in the query by the store's offline linker.

    With ``filter_expr``, only names of entities inside that filter's view of the graph
    are known (a tenant never links, or learns of, another tenant's names).
    """

    query: str
    filter_expr: str | None = None


@dataclass(frozen=True)
class ViewOf(Request[GraphView]):
    """The part of the graph whose passages pass a filter (the store's ``graph_view``).

    ``graph``: the index the view must describe (the one the pipeline got from
    :class:`GetGraph`), so a refresh in between never mixes two graphs.
    """

    filter_expr: str
    graph: Any = None


@dataclass(frozen=True)
class EntityNames(Request[dict[str, str]]):
    """Display names of entities, by id (every id asked for is a key; unknown: ``""``)."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class Compute(Request[R]):
    """CPU-heavy work (e.g. building an index).

    Called directly by ``invoke``; in a worker thread by ``ainvoke``, so the event loop
    stays free.
    """

    fn: Callable[..., R]
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Notify(Request[None]):
    """Tell the caller something about this run without failing it (e.g. why nothing was found).

    The executors log it (INFO, logger ``langchain_graphrag_milvus``) and dispatch it as a
    LangChain custom event ``name`` with ``data`` on the retriever's run, so callback
    handlers and ``astream_events`` see it. Answered with ``None``.
    """

    name: str
    data: dict[str, Any]


Effect = (
    Notify
    | Invoke
    | Embed
    | Search
    | Fetch
    | SearchHeld
    | Unchanged
    | Gather
    | GetGraph
    | CheckGraph
    | LinkEntities
    | EntityNames
    | ViewOf
    | Compute[Any]
)

#: A pipeline (or one of its stages) returning ``T``: it yields effects and is sent their answers.
Steps = Generator[Effect, object, T]


def ask(request: Request[T]) -> Steps[T]:
    """One request, yielded; its answer, returned with the request's type.

    Example: ``graph = yield from ask(GetGraph())`` (``graph`` is a ``GraphIndex``).
    """
    answer = yield cast(Effect, request)
    return cast(T, answer)


def search_all(searches: Sequence[Search]) -> Steps[list[list[list[Hit]]]]:
    """Several searches in one :class:`Gather` (concurrent under ``ainvoke``); their hits, in order."""
    answers = yield from ask(Gather(tuple(searches)))
    return cast("list[list[list[Hit]]]", answers)
