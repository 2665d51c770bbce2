"""Rankings as values (retrieval/rankings.py): own settings, one home per default, replaced per call."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import ValidationError

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusPathRetriever, NaivePassageRetriever
from langchain_graphrag_milvus.cli.common import K_HELP, given_k
from langchain_graphrag_milvus.cli.main import build_parser
from langchain_graphrag_milvus.retrieval import rankings
from langchain_graphrag_milvus.retrieval.defaults import K_BY_MODE, PASSAGES_K, PATHS_K
from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH
from langchain_graphrag_milvus.retrieval.params import NaiveParams, PathParams, RetrievalParams, call_params
from langchain_graphrag_milvus.retrieval.ranked import Ranked
from langchain_graphrag_milvus.retrieval.rankings import (
    FLAT_SETTINGS,
    RANKINGS,
    PageRankWalk,
    Ranking,
    SimilarityExpansion,
    resolve_ranking,
)
from langchain_graphrag_milvus.retrieval.walk_params import WalkParams
from tests.unit.test_params_and_store_api import ReadsOnly

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_graphrag_milvus"


def _field(cls: type, name: str) -> dataclasses.Field:  # type: ignore[type-arg]
    return next(f for f in dataclasses.fields(cls) if f.name == name)


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: PageRankWalk(damping=1.0), r"damping must be in \[0, 1\), got 1.0"),
        (lambda: PageRankWalk(temperature=0), "temperature must be positive, got 0"),
        (lambda: PageRankWalk(chain=-1), "chain must be a non-negative integer, got -1"),
        (lambda: PageRankWalk(passage_seeds=0), "passage_seeds must be a positive integer, got 0"),
        (lambda: PageRankWalk(relation_scope="some"), "relation_scope must be 'auto', 'all' or 'entities', got 'some'"),
        (lambda: PageRankWalk(fuse_dense=2), r"fuse_dense must be in \[0, 1\], got 2"),
        (lambda: PageRankWalk(keep_dense=-1), "keep_dense must be a non-negative integer, got -1"),
        (lambda: WalkParams(chain_mode="bridge"), "chain_mode must be 'entities' or 'passages', got 'bridge'"),
        (lambda: WalkParams(ppr_method="fast"), "ppr_method must be 'auto', 'global' or 'push', got 'fast'"),
        (lambda: SimilarityExpansion(hops=4), "hops must be 0, 1, 2 or 3, got 4"),
        (lambda: SimilarityExpansion(decay=0), r"decay must be in \(0, 1\], got 0"),
        # the flat names: the error names what was typed, as before
        (lambda: RetrievalParams(ppr_damping=1.0), r"ppr_damping must be in \[0, 1\), got 1.0"),
        (lambda: RetrievalParams(ppr_temperature=0), "ppr_temperature must be positive, got 0"),
        (lambda: RetrievalParams(ppr_chain=-1), "ppr_chain must be a non-negative integer, got -1"),
        (lambda: RetrievalParams(ranking="similarity", ppr_chain=True), "ppr_chain must be a non-negative integer"),
        (lambda: RetrievalParams(hops=4), "hops must be 0, 1, 2 or 3, got 4"),  # checked under 'ppr' too
        (lambda: RetrievalParams(ranking="bm25"), "ranking must be 'ppr' or 'similarity', got 'bm25'"),
        (lambda: RetrievalParams(ranking=None), "ranking must be 'ppr' or 'similarity', got None"),
    ],
)
def test_a_ranking_validates_its_own_settings(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=f"^{message}"):
        make()


def test_the_retriever_refuses_bad_rankings_at_construction() -> None:
    store = ReadsOnly()
    with pytest.raises(ValidationError, match="ranking must be 'ppr' or 'similarity', got 'bm25'"):
        MilvusGraphRetriever(store=store, ranking="bm25")
    with pytest.raises(ValidationError, match="less than 1"):
        MilvusGraphRetriever(store=store, ppr_damping=1.0)  # the field's pydantic bound, from the walk's rule
    with pytest.raises(ValidationError, match=r"ppr_damping must be in \[0, 1\)"):
        MilvusGraphRetriever(store=store, ranking=PageRankWalk(), ppr_damping=1.5)
    with pytest.raises(TypeError, match="unexpected retrieval argument.*damping"):
        call_params(RetrievalParams(), {"damping": 0.5})  # per call, the flat names only


# ---------------------------------------------------------------------------- one home per default
def test_walk_params_are_the_strategy_not_a_copy() -> None:
    assert issubclass(PageRankWalk, WalkParams) and issubclass(PageRankWalk, Ranking)
    for f in dataclasses.fields(WalkParams):
        assert _field(PageRankWalk, f.name) is f or _field(PageRankWalk, f.name).default == f.default
    assert PageRankWalk().damping == WalkParams().damping == _field(WalkParams, "damping").default


def test_every_flat_name_maps_onto_one_strategy_field() -> None:
    fields = MilvusGraphRetriever.model_fields
    owners = {}
    for flat, (cls, f) in FLAT_SETTINGS.items():
        assert cls in RANKINGS.values() and f in dataclasses.fields(cls), flat
        assert fields[flat].default == f.default, flat  # the retriever's default is the strategy's
        assert fields[flat].description == f.metadata["description"], flat
        owners[flat] = cls
    assert set(owners) == {
        "ppr_relation_seeds", "ppr_passage_seeds", "ppr_damping", "ppr_temperature", "ppr_chain", "ppr_clause_seeds",
        "ppr_pair_step",
        "relation_scope", "keep_dense", "keep_dense_slack", "fuse_dense", "fuse_dense_c", "fuse_dense_unlinked",
            "hops", "decay",
    }  # fmt: skip
    assert {flat for flat, cls in owners.items() if cls is SimilarityExpansion} == {"hops", "decay"}
    # a flat value lands on its field; another ranking's flat names are checked, then ignored
    assert RetrievalParams(ppr_damping=0.5, hops=2).ranking == PageRankWalk(damping=0.5)
    assert RetrievalParams(ranking="similarity", hops=2, ppr_damping=0.5).ranking == SimilarityExpansion(hops=2)
    assert RetrievalParams(fuse_dense=0.5).flat()["fuse_dense"] == 0.5
    assert RetrievalParams(fuse_dense=0.5).walk_limit >= FUSION_DEPTH


def test_the_flat_view_keeps_the_old_keys() -> None:
    flat = RetrievalParams(ranking="similarity", hops=2).flat()
    assert flat["ranking"] == "similarity" and flat["hops"] == 2 and flat["k"] == PASSAGES_K
    assert "ppr_damping" not in flat  # only the ranking in effect
    assert RetrievalParams().flat()["ppr_damping"] == _field(WalkParams, "damping").default


# ---------------------------------------------------------------------------- replaced per call
def test_values_are_replaced_per_call_never_changed() -> None:
    base = RetrievalParams()
    walk = base.ranking
    assert call_params(base, {"ppr_chain": 2}).ranking == dataclasses.replace(walk, chain=2)
    assert call_params(base, {"ranking": PageRankWalk(fuse_dense=0.5), "ppr_damping": 0.3}).ranking == PageRankWalk(
        fuse_dense=0.5, damping=0.3
    )
    assert call_params(base, {"ranking": "similarity", "hops": 0}).ranking == SimilarityExpansion(hops=0)
    assert base.ranking is walk and walk == PageRankWalk()  # frozen: nothing changed in place
    with pytest.raises(dataclasses.FrozenInstanceError):
        walk.damping = 0.5  # type: ignore[misc]
    assert resolve_ranking("ppr") == PageRankWalk() and resolve_ranking(walk) is walk


def test_the_retriever_maps_flat_names_and_values_onto_the_strategy() -> None:
    store = ReadsOnly()
    flat = MilvusGraphRetriever(store=store, ranking="ppr", ppr_damping=0.5, hops=2)
    assert flat._call_params({}).ranking == PageRankWalk(damping=0.5)
    assert flat._call_params({"ranking": "similarity"}).ranking == SimilarityExpansion(hops=2)  # the retriever's hops
    assert flat._call_params({"ranking": "similarity", "ppr_chain": 2, "decay": 0.5}).ranking == SimilarityExpansion(
        hops=2, decay=0.5
    )
    value = PageRankWalk(damping=0.5, ppr_method="push")
    held = MilvusGraphRetriever(store=store, ranking=value, ppr_chain=3)
    assert held.ranking == dataclasses.replace(value, chain=3)
    assert (held.ppr_damping, held.ppr_chain) == (0.5, 3)  # the flat fields mirror the value
    assert held._call_params({}).ranking == held.ranking
    assert held._call_params({"ranking": "ppr"}).ranking.ppr_method == "push"  # its own name keeps the value
    assert held._call_params({"ppr_temperature": 0.1}).ranking == dataclasses.replace(held.ranking, temperature=0.1)
    assert held._call_params({"ranking": PageRankWalk()}).ranking == PageRankWalk()
    with pytest.raises(ValueError, match="ranking must be 'ppr' or 'similarity', got 'bm25'"):
        held._call_params({"ranking": "bm25"})
    similar = MilvusGraphRetriever(store=store, ranking=SimilarityExpansion(hops=3))
    assert similar.hops == 3 and similar._call_params({"ranking": "ppr"}).ranking == PageRankWalk()


def test_the_pipeline_never_tests_the_ranking_by_name() -> None:
    hits = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        hits += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"ranking\s*[!=]=\s*['\"]", text)]
        hits += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"isinstance\([^)]*(PageRankWalk|Similarity)", text)]
    assert hits == []
    assert "isinstance" not in Path(rankings.__file__).read_text(encoding="utf-8").split("def valid_ranking")[0]


# ---------------------------------------------------------------------------- the command line's k
def test_the_cli_k_defaults_are_the_retrievers() -> None:
    assert RetrievalParams().k == NaiveParams().k == PASSAGES_K and PathParams().k == PATHS_K
    parser = build_parser()
    for argv in (["query", "q"], ["query", "q", "--mode", "paths"], ["ask", "q"], ["graph", "export", "-o", "x"]):
        args = parser.parse_args(argv)
        assert args.k is None and given_k(args) == {}, argv  # not given: the retriever's own default
    store = ReadsOnly()
    assert MilvusPathRetriever(store=store, **given_k(argparse.Namespace(k=None))).k == PathParams().k
    assert MilvusGraphRetriever(store=store, **given_k(argparse.Namespace(k=None))).k == RetrievalParams().k
    assert NaivePassageRetriever(store=store, **given_k(argparse.Namespace(k=None))).k == NaiveParams().k
    assert given_k(parser.parse_args(["query", "q", "-k", "7"])) == {"k": 7}
    assert K_BY_MODE == {"graph": RetrievalParams().k, "naive": NaiveParams().k, "paths": PathParams().k}
    assert K_HELP == f"{RetrievalParams().k} passages, {PathParams().k} paths"


def test_the_agent_tools_max_k_has_one_home() -> None:
    import inspect

    from langchain_graphrag_milvus.retrieval.defaults import TOOL_MAX_K
    from langchain_graphrag_milvus.retrieval.tool import create_graph_retriever_tool

    assert inspect.signature(create_graph_retriever_tool).parameters["max_k"].default == TOOL_MAX_K
    assert inspect.signature(MilvusGraphRetriever.as_tool).parameters["max_k"].default == TOOL_MAX_K


def test_a_new_ranking_is_one_class_no_registration_needed_as_a_value() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class PassagesOnly(Ranking):
        """The dense order alone (a ranking written outside the package)."""

        name: ClassVar[str] = "passages_only"
        depth: int = 7

        def rank(self, q, p, want_pool, trace):  # type: ignore[no-untyped-def]
            return [Ranked(h.id, h.score, "passage_similarity") for h in q.passage_hits], []
            yield  # a generator, like every stage

        def dense_depth(self) -> int:
            return self.depth

    value = PassagesOnly()
    assert RetrievalParams(ranking=value, hops=2).ranking is value  # others' flat names: checked, ignored
    retriever = MilvusGraphRetriever(store=ReadsOnly(), ranking=value)
    assert retriever._call_params({"k": 2}).ranking is value
    assert retriever._call_params({"ranking": dataclasses.replace(value, depth=9), "max_candidates": 5}).walk_limit == 9
    assert retriever._call_params({"ranking": "ppr"}).ranking == PageRankWalk()
