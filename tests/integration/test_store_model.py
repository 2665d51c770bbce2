"""Model-based test: random sequences of writes and reads against a plain-Python model of the store.

A hypothesis ``RuleBasedStateMachine`` adds, upserts and deletes documents with hostile ids,
sources and metadata values (quotes, backslashes, brackets, ``or`` clauses, ``pk != ''``,
newlines, unicode, very long strings) for two tenants (one of them hostile), on a store with
``partition_key_field="tenant"``. After every step the store must equal the model: every
passage row (id, text, tenant, metadata, source), every relation (which passages support
it, one row per tenant) and every entity (one row per tenant and name); nothing else added,
changed or deleted. Retrieval steps check that a
filtered naive or graph retriever (sync or async) returns only passages of that tenant (or
with that metadata value), exactly as the model holds them, and as many as it should.

The model follows the documented identity rules (``langchain_graphrag_milvus.ingest.identity``):
a document's id is its passage id; a document without one gets a hash of its text and
metadata; its source is ``metadata["source_id"]``, else its id, else ``metadata["source"]``;
a splitter's chunks of source ``S`` in tenant ``t`` are ``S#0000@<h>``, ``S#0001@<h>``... (``<h>``:
12 hex digits of blake2b of ``t``); an ingest never moves or overwrites another tenant's passage
(refused). A source is (tenant, source id): both tenants draw from the same hostile source names,
``upsert_documents`` replaces only the upserting tenant's passages of a source, and
``delete_documents`` deletes in one tenant (``tenant=``) or, explicitly, in all
(``all_tenants=True``); ``delete_passages`` may be scoped to a tenant too. Ids are shared by both
tenants. Upserts run strict or not: strict, an invalid new version raises; not strict, it is
skipped and reported (``sources_skipped``, or a skipped record when it names no valid source),
and either way the source keeps its old version. An operation that raises a ``GraphRAGError``
must leave the store unchanged, and may only do so for input that is invalid by those rules (an
id over the byte limit, an id in another source's chunk form).

A rule arms a failure for the next write operation: its ``at``-th Milvus write (insert, upsert,
delete, index calls) fails before or after it is applied, and the operation is re-run -- by the
same store, or by a new store on the same collections (a restarted application). The store must
then equal the model exactly as if nothing had failed.

Profiles (``STORE_MODEL_PROFILE``): ``ci`` (default; fixed seed, a few short runs per
backend) and ``long`` (random; ``STORE_MODEL_EXAMPLES`` runs of up to 25 steps per backend;
``python benchmarks/store_model_long.py`` or ``make model-test-long``). With
``STORE_MODEL_STATS=path`` each test appends its counts (runs, steps, seconds) as JSON lines.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import reprlib
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.errors import GraphRAGError

from ..conftest import BACKENDS
from ..fakes import LexicalEmbeddings
from ..faults import FailAt, InjectedFailure

PROFILE = os.environ.get("STORE_MODEL_PROFILE", "ci")
settings.register_profile(
    "store-model-ci",
    max_examples=4,
    stateful_step_count=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
settings.register_profile(
    "store-model-long",
    max_examples=int(os.environ.get("STORE_MODEL_EXAMPLES", "220")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
SETTINGS = settings.get_profile(f"store-model-{PROFILE}")
if not os.environ.get("STORE_MODEL_SHRINK"):  # shrinking a sequence of Milvus calls takes many minutes
    SETTINGS = settings(SETTINGS, phases=[Phase.explicit, Phase.reuse, Phase.generate])
_SHORT = reprlib.Repr()  # keyword arguments need Python 3.12
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlevel = 80, 200, 4
_SHORT.maxtuple = _SHORT.maxlist = _SHORT.maxdict = 12
short = _SHORT.repr

MAX_ID_BYTES = 512
HOSTILE = [
    "'",
    '"',
    "\\",
    "\\'",
    '\\"',
    "]",
    "[",
    ")",
    " or ",
    "pk != ''",
    "x'] or pk != '' or pk in ['z",
    '" or tenant != "',
    "\n",
    "\r\n",
    "\t",
    "é",
    "ß",
    "日本",
    "🙂",
    "#0000",
    "%",
    "{}",
    "$",
    "`",
]
TENANTS = ["a", 'b" or tenant != "x\\']
WORDS = ["Ada", "Bob", "Cy", "Dot", "Eve", "O'Brien", 'the "Chief"', "back\\slash", "Zoë"]
PREDICATES = ["met", "knows", "owns", "sued"]
INTERNAL = {"pk", "text", "vector", "doc_hash", "source_id"}
AUTO = "<generated>"
HEX16 = re.compile(r"[0-9a-f]{16}")


def _long(prefix: str, size: int) -> str:
    return prefix + "L" * size + "'"


hostile = st.one_of(
    st.lists(
        st.sampled_from(HOSTILE) | st.text(alphabet="abxyz' \"\\[]", min_size=1, max_size=4), min_size=1, max_size=4
    )
    .map("".join)
    .filter(lambda s: s.strip() != "" and not HEX16.fullmatch(s)),
    st.sampled_from([_long("id", 200), _long("huge", 600), "x#0000", "x#0001", "x"]),
)
#: Source names both tenants use often, so that their sources collide (the case tenant scoping is about).
SHARED_SOURCES = ["notes.txt", "x", 'O\'Brien "report"]']
tag_value = st.one_of(st.sampled_from(HOSTILE), st.just(_long("tag", 3000)), st.just(""))
tenant = st.sampled_from(TENANTS)
triplet = st.tuples(st.sampled_from(WORDS), st.sampled_from(PREDICATES), st.sampled_from(WORDS)).filter(
    lambda t: t[0] != t[2]
)
text = st.lists(st.sampled_from(WORDS + PREDICATES + ["and", "then"] + HOSTILE), min_size=1, max_size=8).map(" ".join)


@dataclass(frozen=True)
class Row:
    """One passage as the model holds it."""

    text: str
    meta: tuple[tuple[str, Any], ...]  # user metadata, tenant included, sorted
    source: str  # AUTO: the generated passage id
    triplets: tuple[tuple[str, str, str], ...] = ()

    @property
    def tenant(self) -> str:
        return dict(self.meta)["tenant"]


def _freeze(meta: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(meta.items()))


class ParagraphSplitter:
    """A deterministic splitter: one chunk per paragraph (the splitter is not under test)."""

    def split_documents(self, docs: list[Document]) -> list[Document]:
        return [
            Document(page_content=part, metadata=dict(d.metadata))
            for d in docs
            for part in d.page_content.split("\n\n")
            if part.strip()
        ]


def _invalid_id(pid: str, source: str) -> bool:
    """Input the identity rules refuse (the only reason an operation may fail)."""
    if len(pid.encode()) > MAX_ID_BYTES or len(source.encode()) > MAX_ID_BYTES:
        return True
    match = re.search(r"#[0-9]{4,}(@[0-9a-f]{12})?\Z", pid)
    return bool(match) and pid[: match.start()] != source


def _chunk_id(source: str, index: int, who: str) -> str:
    """The documented chunk id of a partitioned store (written out here, not imported)."""
    return f"{source}#{index:04d}@{hashlib.blake2b(who.encode(), digest_size=6).hexdigest()}"


class StoreModel(RuleBasedStateMachine):
    """The store against a dict of passages; subclassed per backend with ``uri`` set."""

    uri = ""
    backend = ""
    stats: Counter[str] = Counter()

    def __init__(self) -> None:
        super().__init__()
        self.store = self._open(f"model{uuid.uuid4().hex[:10]}")
        self.armed: tuple[int, bool, bool] | None = None
        self.known: dict[str, Row] = {}  # passages whose id the model knows
        self.auto: dict[tuple[str, tuple[tuple[str, Any], ...]], Row] = {}  # generated ids: (text, meta)
        type(self).stats["runs"] += 1

    def _open(self, prefix: str) -> MilvusGraphStore:
        return MilvusGraphStore(
            LexicalEmbeddings(64),
            uri=self.uri,
            collection_prefix=prefix,
            partition_key_field="tenant",
            consistency_level="Strong",
        )

    def teardown(self) -> None:
        try:
            if self.store.exists():
                self.store.drop()
        finally:
            self.store.close()

    # ------------------------------------------------------------------ model helpers
    def rows(self) -> list[Row]:
        return [*self.known.values(), *self.auto.values()]

    def _remove_source(self, source: str, who: str | None) -> None:
        """Remove a source's passages in tenant ``who`` (None: in every tenant)."""

        def gone(r: Row) -> bool:
            return r.source == source and (who is None or r.tenant == who)

        self.known = {k: r for k, r in self.known.items() if not gone(r)}
        self.auto = {k: r for k, r in self.auto.items() if not gone(r)}

    def _other_tenants(self, pid: str | None, who: str) -> bool:
        """An ingest never moves or overwrites another tenant's passage (the store refuses it)."""
        return pid is not None and pid in self.known and self.known[pid].tenant != who

    def _put(self, doc: Document) -> None:
        meta = {k: v for k, v in doc.metadata.items() if k != "triplets"}
        trips = tuple(tuple(t) for t in doc.metadata.get("triplets", ()))
        if doc.id is not None:
            source = meta.pop("source_id", None) or doc.id
            self.known[doc.id] = Row(doc.page_content, _freeze(meta), source, trips)  # type: ignore[arg-type]
        else:
            source = meta.get("source", AUTO)
            self.auto[(doc.page_content, _freeze(meta))] = Row(doc.page_content, _freeze(meta), source, trips)  # type: ignore[arg-type]

    @rule(at=st.integers(1, 12), after=st.booleans(), fresh=st.booleans())
    def arm_failure(self, at: int, after: bool, fresh: bool) -> None:
        """The next write operation fails at its ``at``-th Milvus write (before or ``after`` it is applied).

        It is then run again -- by a new store on the same collections when ``fresh`` (an
        application restarted after a crash) -- and the store must equal the model as if the
        failure had not happened.
        """
        self.armed = (at, after, fresh)

    def _interrupted(self, operation: Any) -> None:
        """Run ``operation`` with the armed failure; if it was hit, re-run it (maybe from a new store)."""
        at, after, fresh = self.armed or (0, False, False)
        self.armed = None
        fail = FailAt(self.store, at, after=after)
        try:
            operation()
            return
        except InjectedFailure:
            type(self).stats["interrupted"] += 1
        finally:
            fail.detach()
        if fresh:
            old, self.store = self.store, self._open(self.store.collection_prefix)
            old.close()
        operation()

    def _apply(self, operation: Any, invalid: bool, update: Any) -> None:
        """Run ``operation``; on success apply ``update`` to the model, on a typed error expect no change."""
        type(self).stats["steps"] += 1
        try:
            if self.armed is not None:
                self._interrupted(operation)
            else:
                operation()
        except GraphRAGError as exc:
            assert invalid, f"a valid operation was refused: {short(exc)}"
            type(self).stats["refused"] += 1
            return
        update()

    def _source(self, data: Any) -> str:
        """A source name: often one a tenant already has or a shared one, else a new hostile one."""
        used = sorted({r.source for r in self.rows() if r.source != AUTO})
        return data.draw(st.sampled_from([*SHARED_SOURCES, *used]) | hostile, label="source")

    def _docs(self, data: Any, n: int, kind: str, who: str) -> list[Document]:
        docs = []
        for _ in range(n):
            meta: dict[str, Any] = {"tenant": who, "tag": data.draw(tag_value, label="tag")}
            if kind == "loader":
                meta["source"] = self._source(data)
                meta["page"] = data.draw(st.integers(0, 2), label="page")
            if data.draw(st.booleans(), label="with triplets"):
                meta["triplets"] = [list(t) for t in data.draw(st.lists(triplet, min_size=1, max_size=3), label="trip")]
            pid = data.draw(hostile, label="id") if kind == "id" else None
            docs.append(Document(id=pid, page_content=data.draw(text, label="text"), metadata=meta))
        return docs

    # ------------------------------------------------------------------ writes
    @rule(
        data=st.data(),
        n=st.integers(1, 3),
        kind=st.sampled_from(["id", "generated", "loader"]),
        who=tenant,
        strict=st.booleans(),
    )
    def add_documents(self, data: Any, n: int, kind: str, who: str, strict: bool) -> None:
        """Strict: an invalid document refuses the batch. Not strict: it is skipped and counted.

        A passage id given twice in one call keeps its first document (the rest are skipped and
        counted, strict or not).
        """
        docs = self._docs(data, n, kind, who)
        seen: set[Any] = set()
        dup, bad = [], []
        for d in docs:
            meta = {k: v for k, v in d.metadata.items() if k != "triplets"}  # generated ids hash text + metadata
            key = d.id if d.id is not None else (d.page_content, json.dumps(meta, sort_keys=True))
            dup.append(key in seen)
            seen.add(key)
            bad.append(
                _invalid_id(d.id or "", d.id or d.metadata.get("source") or "")
                or not d.page_content.strip()
                or self._other_tenants(d.id, who)
            )
        report: list[Any] = []

        def update() -> None:
            skipped = sum(d or (b and not strict) for d, b in zip(dup, bad))
            assert report[0].records_skipped == skipped, f"{short(report[0])}: {skipped} to skip"
            for d, b, twice in zip(docs, bad, dup):
                if not b and not twice:
                    self._put(d)

        invalid = strict and any(bad)  # strict checks every document, repeated ids included
        self._apply(lambda: report.append(self.store.add_documents(docs, strict=strict)), invalid, update)

    @rule(data=st.data(), who=tenant, split=st.booleans(), kind=st.sampled_from(["id", "loader"]), strict=st.booleans())
    def upsert_source(self, data: Any, who: str, split: bool, kind: str, strict: bool) -> None:
        """A new version of one source (the tenant's own): an id'd document, or a loader's file (pages).

        Invalid input changes nothing, strict or not; not strict, the call succeeds and says why.
        """
        source = self._source(data)
        paragraphs = data.draw(st.lists(text.filter(str.strip), min_size=1, max_size=3, unique=True), label="paras")
        tag = data.draw(tag_value, label="tag")
        if split:
            meta = {"tenant": who, "tag": tag} if kind == "id" else {"tenant": who, "tag": tag, "source": source}
            docs = [Document(id=source if kind == "id" else None, page_content="\n\n".join(paragraphs), metadata=meta)]
        elif kind == "id":
            docs = [Document(id=source, page_content=paragraphs[0], metadata={"tenant": who, "tag": tag})]
        else:
            docs = [
                Document(page_content=p, metadata={"tenant": who, "tag": tag, "source": source, "page": i})
                for i, p in enumerate(paragraphs)
            ]
        broken = not split and kind == "loader" and data.draw(st.booleans(), label="a blank page")
        if broken:  # one invalid page makes the whole new version invalid: the old one must stay
            docs.append(Document(page_content=" \n", metadata={"tenant": who, "tag": tag, "source": source}))
        invalid = (
            broken
            or len(source.encode()) > MAX_ID_BYTES
            or (split and len(source.encode()) > MAX_ID_BYTES - 24)  # room for "#NNNN@<12 hex>"
            or (not split and kind == "id" and (_invalid_id(source, source) or self._other_tenants(source, who)))
        )
        report: list[Any] = []

        def update() -> None:
            if invalid:  # not strict: skipped and reported, the old version kept
                skipped = report[0].sources_skipped or report[0].ingested.records_skipped
                assert skipped, f"an invalid upsert was not reported: {short(report[0])}"
                return
            self._remove_source(source, who)
            if not split:
                for d in docs:
                    self._put(d)
                return
            for i, chunk in enumerate(ParagraphSplitter().split_documents(docs)):
                self.known[_chunk_id(source, i, who)] = Row(chunk.page_content, _freeze(dict(chunk.metadata)), source)

        splitter = ParagraphSplitter() if split else None
        self._apply(
            lambda: report.append(self.store.upsert_documents(docs, splitter=splitter, strict=strict)),
            invalid,
            update,
        )

    @rule(data=st.data(), who=st.sampled_from([*TENANTS, None]))
    def delete_documents(self, data: Any, who: str | None) -> None:
        """One tenant's sources (``tenant=who``), or every tenant's (``all_tenants=True``, ``who`` None)."""
        sources = sorted({r.source for r in self.rows() if r.source != AUTO})
        pool = st.sampled_from(sources) | hostile if sources else hostile
        chosen = data.draw(st.lists(pool, min_size=1, max_size=2), label="sources")
        invalid = any(len(s.encode()) > MAX_ID_BYTES for s in chosen)

        def update() -> None:
            for s in chosen:
                self._remove_source(s, who)

        scope: dict[str, Any] = {"tenant": who} if who is not None else {"all_tenants": True}
        self._apply(lambda: self.store.delete_documents(chosen, **scope), invalid, update)

    @rule(data=st.data(), who=st.sampled_from([*TENANTS, None]))
    def delete_passages(self, data: Any, who: str | None) -> None:
        """Passages by id, in one tenant (``tenant=who``) or whoever owns them (``who`` None)."""
        stored = sorted(self.store_rows())
        pool = st.sampled_from(stored) | hostile if stored else hostile
        chosen = data.draw(st.lists(pool, min_size=1, max_size=3), label="passage ids")
        invalid = any(len(p.encode()) > MAX_ID_BYTES for p in chosen)

        generated = self._generated_keys()

        def update() -> None:
            for p in chosen:
                if p in self.known and who in (None, self.known[p].tenant):
                    self.known.pop(p)
                key = generated.get(p)
                if key is not None and key in self.auto and who in (None, self.auto[key].tenant):
                    self.auto.pop(key)

        self._apply(lambda: self.store.delete_passages(chosen, tenant=who), invalid, update)

    # ------------------------------------------------------------------ reads
    def _check_docs(self, docs: list[Document], wanted: Any, k: int) -> None:
        rows = self.store_rows()
        expected = [r for r in self.rows() if wanted(r)]
        for d in docs:
            pid = d.metadata["_passage_id"]
            assert pid in rows, f"retrieved passage {short(pid)} is not in the store"
            row = rows[pid]
            assert wanted(row), f"filter leaked passage {short(pid)} of tenant {short(row.tenant)}"
            assert d.page_content == row.text
            user = {k2: v for k2, v in d.metadata.items() if not k2.startswith("_")}
            assert user == dict(row.meta), f"metadata of {short(pid)}: {short(user)} != {short(dict(row.meta))}"
        assert len({d.metadata["_passage_id"] for d in docs}) == len(docs), "a passage came back twice"
        assert len(docs) == min(k, len(expected)), f"{len(docs)} passages for k={k}, {len(expected)} match"

    @precondition(lambda self: self.store.exists())
    @rule(data=st.data(), k=st.integers(1, 6), graph=st.booleans(), mode=st.sampled_from(["sync", "async"]))
    def retrieve(self, data: Any, k: int, graph: bool, mode: str) -> None:
        type(self).stats["steps"] += 1
        tags = sorted({dict(r.meta)["tag"] for r in self.rows()})
        if tags and data.draw(st.booleans(), label="filter on tag"):
            value = data.draw(st.sampled_from(tags), label="tag")
            flt, wanted = {"tag": value}, (lambda r: dict(r.meta)["tag"] == value)
        else:
            who = data.draw(tenant, label="tenant")
            flt, wanted = {"tenant": who}, (lambda r: r.tenant == who)
        query = data.draw(text, label="query")
        if graph:
            retriever: Any = MilvusGraphRetriever(store=self.store, k=k, filter=flt)
        else:
            retriever = self.store.as_naive_retriever(k=k, filter=flt)
        docs = retriever.invoke(query) if mode == "sync" else asyncio.run(retriever.ainvoke(query))
        self._check_docs(docs, wanted, k)

    # ------------------------------------------------------------------ the store equals the model
    def store_rows(self) -> dict[str, Row]:
        """Every passage row of the store (a fetch-all), as model rows."""
        if not self.store.exists():
            return {}
        out = {}
        for r in self.store.client.query(
            self.store.collection_name("passages"), filter='pk != ""', output_fields=["*"], limit=16_384
        ):
            meta = {k: v for k, v in r.items() if k not in INTERNAL}
            source = r["source_id"] if r["source_id"] != r["pk"] or r["pk"] in self.known else AUTO
            out[r["pk"]] = Row(r["text"], _freeze(meta), source)
        return out

    def _generated_keys(self) -> dict[str, tuple[str, tuple[tuple[str, Any], ...]]]:
        """Stored passage id → model key, for passages whose id was generated."""
        return {pk: (r.text, r.meta) for pk, r in self.store_rows().items() if pk not in self.known}

    @invariant()
    def store_equals_model(self) -> None:
        rows = self.store_rows()
        got = Counter((pk if pk in self.known else AUTO, r.text, r.meta, r.source) for pk, r in rows.items())
        want = Counter((pk, r.text, r.meta, r.source) for pk, r in self.known.items())
        want.update((AUTO, r.text, r.meta, r.source) for r in self.auto.values())
        assert got == want, f"store - model: {short(got - want)}\nmodel - store: {short(want - got)}"
        self._check_graph(rows)

    def _check_graph(self, rows: dict[str, Row]) -> None:
        """Relations and entities are exactly those the model's passages state, each tenant's its own rows.

        The store keeps entity and relation rows per tenant: one relation row per (tenant,
        triple), all its passages that tenant's; one entity row per (tenant, name).
        """
        key_of = {pk: (pk if pk in self.known else (r.text, r.meta)) for pk, r in rows.items()}
        tenant_of: dict[Any, Any] = {}
        want: dict[tuple[Any, str, str, str], set[Any]] = {}
        for key, row in [*self.known.items(), *self.auto.items()]:
            tenant_of[key] = dict(row.meta).get("tenant")
            for s, p, o in row.triplets:
                want.setdefault((tenant_of[key], s, p, o), set()).add(key)
        got: dict[tuple[Any, str, str, str], set[Any]] = {}
        if self.store.exists():
            c, name = self.store.client, self.store.collection_name
            ents = {
                e["pk"]: e["text"]
                for e in c.query(name("entities"), filter='pk != ""', output_fields=["text"], limit=16_384)
            }
            ent_tenants: dict[str, set[Any]] = {}
            for r in c.query(
                name("relations"),
                filter='pk != ""',
                output_fields=["subject_id", "predicate", "object_id", "passage_ids"],
                limit=16_384,
            ):
                keys = {key_of.get(p, ("missing passage", p)) for p in r["passage_ids"]}
                tenants = {tenant_of.get(k) for k in keys}
                assert len(tenants) == 1, f"relation {r['pk']} links passages of tenants {tenants}"
                tenant = tenants.pop()
                for eid in (r["subject_id"], r["object_id"]):
                    ent_tenants.setdefault(eid, set()).add(tenant)
                triple = (tenant, ents.get(r["subject_id"], "?"), r["predicate"], ents.get(r["object_id"], "?"))
                assert triple not in got, f"relation {triple} stored twice"
                got[triple] = keys
            assert all(len(t) == 1 for t in ent_tenants.values()), "an entity row serves two tenants"
            names = {(next(iter(ent_tenants.get(eid, {None}))), text) for eid, text in ents.items()}
            assert len(names) == len(ents), "an entity name is stored twice in one tenant"
            assert names == {(t, n) for t, s, _, o in want for n in (s, o)}, "entities differ from the model's"
        assert got == want, f"relations differ: store {short(got)}, model {short(want)}"


def _record(backend: str, seconds: float, stats: Counter[str]) -> None:
    path = os.environ.get("STORE_MODEL_STATS")
    if path:
        with Path(path).open("a") as fh:
            fh.write(json.dumps({"backend": backend, "profile": PROFILE, "seconds": round(seconds, 1), **stats}) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_store_equals_model(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "model.db") if backend == "lite" else str(request.getfixturevalue("milvus_server"))
    machine = type(f"StoreModel_{backend}", (StoreModel,), {"uri": uri, "backend": backend, "stats": Counter()})
    chosen = SETTINGS
    if backend == "lite" and PROFILE == "ci":  # Lite runs are ~10x cheaper than the server's
        chosen = settings(SETTINGS, max_examples=5 * SETTINGS.max_examples)
    started = time.perf_counter()
    try:
        run_state_machine_as_test(machine, settings=chosen)
    finally:
        _record(backend, time.perf_counter() - started, machine.stats)
