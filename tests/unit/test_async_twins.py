"""Every sync/async pair of the package is written once, or stays a mechanical copy (issue 27).

An ``async def`` beside a sync function of the same name (``asearch``/``search``,
``_atraced``/``_traced``, ``run_async``/``run_sync``, in one class, module or function) is a
*twin*. A twin must be one of:

- a **thread delegate**: its last statement is ``return await asyncio.to_thread(<the sync
  twin>, ...)`` (before it, only assignments that materialise arguments) — one implementation;
- an **unasync copy**: its body is the sync twin's, statement for statement, once ``await`` is
  dropped, ``async for``/``async with`` are made plain and the names of :data:`UNASYNC` are
  mapped to their sync forms (docstrings aside) — httpcore's unasync check, applied to
  hand-written pairs (the async form calls the native async API of a runnable or a chat model,
  which must stay real for callbacks, streaming and cancellation);
- listed in :data:`DIFFERENT`, with the reason both must be real and differ.

Measured (``benchmarks/bench_async_reads.py``): Milvus' native async client bought nothing
over the blocking read in a worker thread, so the reads are thread delegates (the read seam's
defaults); a new hand-written Milvus twin fails here.
"""

from __future__ import annotations

import ast
import copy
import functools
from pathlib import Path

from langchain_graphrag_milvus.milvus.local_search import LocalSearch
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.reads import MilvusReads

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_graphrag_milvus"

#: Async name → sync name, applied to names, attributes, imports and the twin's own name.
UNASYNC = {
    "ainvoke": "invoke",
    "astream": "stream",
    "aretrieve": "retrieve",
    "aanswer": "answer",
    "arun": "run",
    "aexplain": "explain",
    "_atraced": "_traced",
    "_aget_relevant_documents": "_get_relevant_documents",
    "run_async": "run_sync",
    "answer_async": "answer_sync",
    "query_subgraph_async": "query_subgraph",
    "AsyncIterator": "Iterator",
    "AsyncCallbackManagerForRetrieverRun": "CallbackManagerForRetrieverRun",
}

#: Twins that are neither delegates nor unasync copies: ``path:qualified name`` → why both are real.
DIFFERENT = {
    "retrieval/executors.py:answer_async": (
        "the async executor: awaits what answer_sync calls (runnables, embeddings, reads), gathers a Gather "
        "with asyncio.gather, and sends the graph's effects to a thread; the pipelines themselves are one"
    ),
    "retrieval/timeouts.py:ainvoke_with_timeout": (
        "a time limit: asyncio.wait_for cancels the awaited call; a blocking call cannot be cancelled, "
        "so invoke_with_timeout stops waiting for a thread"
    ),
    "retrieval/explain.py:query_subgraph_async": (
        "the retrieval on the async path (_atraced), then the same picture (build_query_subgraph) in a thread"
    ),
}


def _siblings(name: str) -> list[str]:
    """The sync names an async function ``name`` may be the twin of."""
    out = [UNASYNC[name]] if name in UNASYNC else []
    if name.startswith("_a"):
        out.append("_" + name[2:])
    if name.startswith("a"):
        out.append(name[1:])
    if "_async" in name:
        out += [name.replace("_async", "_sync"), name.replace("_async", "")]
    return out


def find_twins(tree: ast.Module) -> list[tuple[str, ast.AsyncFunctionDef, ast.FunctionDef]]:
    """(qualified name, async def, its sync twin) for every twin in a module, nested scopes included."""
    found = []
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        body = getattr(node, "body", [])
        sync = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
        for n in body:
            if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((f"{prefix}{n.name}.", n))
            if isinstance(n, ast.AsyncFunctionDef):
                twin = next((sync[s] for s in _siblings(n.name) if s in sync), None)
                if twin is not None:
                    found.append((prefix + n.name, n, twin))
    return found


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


def is_thread_delegate(fn: ast.AsyncFunctionDef, twin: ast.FunctionDef) -> bool:
    """``return await asyncio.to_thread(<twin>, ...)``, after assignments only."""
    *before, last = _body(fn) or [ast.Pass()]
    if not all(isinstance(s, (ast.Assign, ast.AnnAssign)) for s in before):
        return False
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Await)):
        return False
    call = last.value.value
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "asyncio.to_thread" and call.args):
        return False
    target = call.args[0]
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None
    return name == twin.name


class _Unasync(ast.NodeTransformer):
    """An async function made sync: no ``await``, plain ``for``/``with``, :data:`UNASYNC` names."""

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self.visit(node.value)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        return self.visit(ast.For(node.target, node.iter, node.body, node.orelse, node.type_comment))

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        return self.visit(ast.With(node.items, node.body, node.type_comment))

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = UNASYNC.get(node.id, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        node.attr = UNASYNC.get(node.attr, node.attr)
        return self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> ast.AST:
        node.name = UNASYNC.get(node.name, node.name)
        return node


def _shape(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The function's arguments, return annotation and body without docstring, as comparable dumps."""
    return [ast.dump(fn.args), ast.dump(fn.returns) if fn.returns else "", *(ast.dump(s) for s in _body(fn))]


def is_unasync_copy(fn: ast.AsyncFunctionDef, twin: ast.FunctionDef) -> bool:
    """The async body, made sync (:class:`_Unasync`), is the sync twin's body."""
    made_sync = _Unasync().visit(copy.deepcopy(fn))
    return _shape(made_sync) == _shape(twin)


@functools.cache
def _census() -> dict[str, str]:
    """``path:qualified name`` → ``"delegate"``, ``"unasync"`` or ``"different"`` for every twin of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for qualname, fn, twin in find_twins(ast.parse(path.read_text(encoding="utf-8"))):
            if is_thread_delegate(fn, twin):
                kind = "delegate"
            elif is_unasync_copy(fn, twin):
                kind = "unasync"
            else:
                kind = "different"
            out[f"{rel}:{qualname}"] = kind
    return out


def test_every_twin_is_a_delegate_an_unasync_copy_or_a_listed_difference() -> None:
    census = _census()
    assert len(census) >= 15  # the scan sees the package's twins (a broken scan finds none)
    unlisted = sorted(k for k, kind in census.items() if kind == "different" and k not in DIFFERENT)
    assert not unlisted, f"async twins that drifted from their sync form (unasync them, or list why): {unlisted}"
    mechanical = sorted(k for k in DIFFERENT if census.get(k) in ("delegate", "unasync"))
    assert not mechanical, f"listed as different but now mechanical (drop them from DIFFERENT): {mechanical}"
    stale = sorted(set(DIFFERENT) - set(census))
    assert not stale, f"DIFFERENT lists twins that no longer exist: {stale}"


def test_the_reads_and_writes_are_thread_delegates() -> None:
    census = _census()
    for key in (
        "milvus/read_seam.py:StoreReads.asearch",
        "milvus/read_seam.py:StoreReads.afetch",
        "milvus/local_search.py:LocalSearch.asearch",
        "ingest/store_writes.py:WriteOperations.aadd_documents",
        "ingest/store_writes.py:WriteOperations.amerge_entities",
    ):
        assert census[key] == "delegate", key


def test_milvus_reads_have_one_implementation_per_read() -> None:
    """No native async twin: ``MilvusReads``' async reads are the read seam's thread delegates."""
    for name in ("asearch", "afetch"):
        assert name not in vars(MilvusReads), f"MilvusReads.{name} is a hand-written twin again"
        assert getattr(MilvusReads, name) is getattr(StoreReads, name)
    assert LocalSearch.asearch.__doc__ and "worker thread" in LocalSearch.asearch.__doc__


SOURCE = """
import asyncio

class Reads:
    def search(self, kind, vectors):
        request = self._request(kind, vectors)
        return parse(self.client.search(**request))

    async def asearch(self, kind, vectors):
        request = self._request(kind, vectors)
        return parse(await self.aclient.search(**request))

    def fetch(self, kind, ids):
        return self.client.query(kind, ids)

    async def afetch(self, kind, ids):
        ids = list(ids)
        return await asyncio.to_thread(self.fetch, kind, ids)

def stream(llm, items):
    for item in items:
        yield llm.invoke(item)

async def astream(llm, items):
    async for item in items:
        yield await llm.ainvoke(item)

def answer(llm, item):
    return llm.invoke(item)

async def aanswer(llm, item):
    return await llm.ainvoke(item, timeout=1)
"""


def test_the_check_tells_delegates_copies_and_drift_apart() -> None:
    twins = {name: (fn, twin) for name, fn, twin in find_twins(ast.parse(SOURCE))}
    assert set(twins) == {"Reads.asearch", "Reads.afetch", "astream", "aanswer"}
    assert is_thread_delegate(*twins["Reads.afetch"])
    assert not is_thread_delegate(*twins["Reads.asearch"]) and not is_thread_delegate(*twins["astream"])
    assert is_unasync_copy(*twins["astream"])
    # the native read calls another client (aclient): not the sync body, so it must be listed or removed
    assert not is_unasync_copy(*twins["Reads.asearch"])
    assert not is_unasync_copy(*twins["aanswer"])  # an extra argument on the async side is drift
