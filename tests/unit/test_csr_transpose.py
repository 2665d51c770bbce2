"""csr_transpose (a counting transpose) equals the sort-based csr_from_pairs it replaces, duplicates included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph.csr import CSR, csr_extend, csr_from_pairs, csr_transpose


def by_pairs(csr: CSR, n_cols: int) -> CSR:
    """The construction push_walk used before: every (column, row) pair, stably sorted by column."""
    rows = np.repeat(np.arange(csr.n_rows, dtype=np.int64), np.diff(csr.indptr))
    return csr_from_pairs(csr.indices, rows, n_cols)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 30),
    st.integers(1, 30),
    st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=120),
    st.lists(st.tuples(st.integers(0, 34), st.integers(0, 29)), max_size=40),
)
def test_transpose_equals_the_sorted_pairs(n_rows: int, n_cols: int, pairs, extra) -> None:
    pairs = [(r, c) for r, c in pairs if r < n_rows and c < n_cols]  # duplicates and empty rows kept
    rows = np.array([r for r, _ in pairs], np.int64)
    cols = np.array([c for _, c in pairs], np.int32)
    csr = csr_from_pairs(rows, cols, n_rows)
    more = [(r, c) for r, c in extra if c < n_cols]  # appended at the ends of rows: rows no longer sorted
    grown_rows = max([n_rows, *[r + 1 for r, _ in more]])
    grown = csr_extend(csr, [r for r, _ in more], [c for _, c in more], grown_rows)
    for m in (csr, grown):
        want, got = by_pairs(m, n_cols), csr_transpose(m, n_cols)
        assert got.indptr.dtype == np.int64 and got.indices.dtype == np.int32
        assert np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)
