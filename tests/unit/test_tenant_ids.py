"""Per-tenant entity and relation ids (``text/names.py``, ``ingest/plan.py``): property-based.

In a store with per-tenant rows an id derives from (tenant, normalised name). No tenant
string — quotes, backslashes, the separator the ids join their parts with, any Unicode —
may give one tenant's entity or relation the id of another tenant's, or of a store
without tenants.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.ingest.plan import triplet_rows
from langchain_graphrag_milvus.text.names import (
    entity_id,
    entity_key,
    relation_id,
    relation_text,
    stable_id,
    tenant_scope,
)

SEP = "\x1f"  # the separator stable_id joins its parts with
tenants = st.one_of(
    st.text(min_size=1, max_size=20),
    st.text(alphabet=['"', "'", "\\", SEP, "a", "b", " ", "é", "\u00a0", "x"], min_size=1, max_size=8),
    st.sampled_from(["a", 'a"', 'b" or tenant != "x', "a\x1fb", "ACME", "acme", "Ａ"]),
)
names = st.text(min_size=1, max_size=16).filter(lambda n: entity_key(n) != "")


@settings(max_examples=150, deadline=None)
@given(t1=tenants, t2=tenants, n1=names, n2=names)
def test_ids_of_two_tenants_never_meet(t1: str, t2: str, n1: str, n2: str) -> None:
    same = t1 == t2 and entity_key(n1) == entity_key(n2)
    assert (entity_id(n1, t1) == entity_id(n2, t2)) == same
    assert entity_id(n1, t1) != entity_id(n2)  # never the id of a store without tenants
    assert (relation_id(n1, "r", n2, t1) == relation_id(n2, "r", n1, t2)) == same
    assert relation_id(n1, "r", n2, t1) != relation_id(n1, "r", n2)
    assert relation_id(n1, "r", n2, t1) != entity_id(n1, t1)


@settings(max_examples=100, deadline=None)
@given(t1=tenants, t2=tenants)
def test_the_tenant_scope_is_fixed_length_hex(t1: str, t2: str) -> None:
    # a fixed-length hex part: the hashed input (kind, scope, key...) is unambiguous for any tenant
    s1, s2 = tenant_scope(t1), tenant_scope(t2)
    assert len(s1) == 32 and set(s1) <= set("0123456789abcdef") and SEP not in s1
    assert (s1 == s2) == (t1 == t2)
    assert entity_id("Bob", t1) == stable_id("entity", s1, "bob")


def test_a_lone_surrogate_tenant_still_hashes() -> None:
    assert entity_id("Bob", "\ud800") != entity_id("Bob", "\ud801")


@settings(max_examples=100, deadline=None)
@given(t1=tenants, t2=tenants, spell=st.sampled_from(["Acme Corp", "ACME CORP", "acme  corp"]))
def test_each_tenant_plans_its_own_rows_and_spelling(t1: str, t2: str, spell: str) -> None:
    entities, relations = triplet_rows(
        [("p1", [("Acme Corp", "hired", "Bob")]), ("p2", [(spell, "hired", "BOB")])], {"p1": t1, "p2": t2}
    )
    rid1, rid2 = relation_id("Acme Corp", "hired", "Bob", t1), relation_id(spell, "hired", "BOB", t2)
    assert relations[rid1].text == relation_text("Acme Corp", "hired", "Bob")
    if t1 == t2:  # one tenant: one row, first spelling, both links
        assert list(relations) == [rid1] and relations[rid1].passage_ids == ["p1", "p2"]
        assert len(entities) == 2
    else:
        assert relations[rid2].text == relation_text(spell, "hired", "BOB") and relations[rid2].passage_ids == ["p2"]
        assert relations[rid1].passage_ids == ["p1"] and len(entities) == 4
        assert relations[rid2].subject_id == entity_id(spell, t2) != relations[rid1].subject_id
    # without tenants: the shared rows of earlier versions
    _, shared = triplet_rows([("p1", [("Acme Corp", "hired", "Bob")]), ("p2", [(spell, "hired", "BOB")])])
    assert list(shared) == [relation_id("Acme Corp", "hired", "Bob")]
