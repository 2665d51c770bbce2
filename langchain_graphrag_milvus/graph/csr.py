"""Small compressed-sparse-row helpers on raw numpy arrays.

A CSR here is a pair ``(indptr, indices)``: row ``i`` holds
``indices[indptr[i]:indptr[i + 1]]``. Values are implicit (all ones). Keeping raw arrays
instead of ``scipy.sparse`` matrices lets expansion slice rows with caps without
building any product matrix, and lets new edges be appended in O(nnz) memory copies.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

__all__ = [
    "CSR",
    "csr_from_pairs",
    "csr_transpose",
    "csr_extend",
    "gather_rows",
    "reduce_max_min",
    "without_empty_rows",
]

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


class CSR(NamedTuple):
    """Row pointers (int64, length rows+1) and column indices (int32)."""

    indptr: I64
    indices: I32

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.indptr.size - 1)

    @property
    def nbytes(self) -> int:
        """Bytes held by both arrays."""
        return int(self.indptr.nbytes + self.indices.nbytes)

    def degrees(self) -> I64:
        """Number of entries per row."""
        return np.diff(self.indptr)

    def row(self, i: int) -> I32:
        """The column indices of row ``i``."""
        return self.indices[self.indptr[i] : self.indptr[i + 1]]


def csr_from_pairs(rows: npt.ArrayLike, cols: npt.ArrayLike, n_rows: int) -> CSR:
    """Build a CSR from (row, col) pairs; within a row, pairs keep their input order."""
    rows_a = np.asarray(rows, dtype=np.int64)
    cols_a = np.asarray(cols, dtype=np.int32)
    order = np.argsort(rows_a, kind="stable")
    counts = np.bincount(rows_a, minlength=n_rows) if rows_a.size else np.zeros(n_rows, np.int64)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return CSR(indptr, np.ascontiguousarray(cols_a[order]))


def csr_transpose(csr: CSR, n_cols: int) -> CSR:
    """The transpose (``n_cols`` rows): row ``j`` lists the rows of ``csr`` holding ``j``, in increasing order.

    Equal to ``csr_from_pairs(csr.indices, <row of each entry>, n_cols)``, duplicates included,
    in one O(nnz) counting pass (scipy's CSR → CSC conversion) instead of a sort: 0.34 s
    instead of 1.2 s for 5.4M entries (the push walk's relation lists at 1.8M relations).
    """
    small = csr.indices.size < np.iinfo(np.int32).max and csr.n_rows < np.iinfo(np.int32).max
    index_type = np.int32 if small else np.int64
    matrix = sp.csr_array(
        (np.ones(csr.indices.size, np.int8), csr.indices.astype(index_type), csr.indptr.astype(index_type)),
        shape=(csr.n_rows, n_cols),
    )
    t = matrix.tocsc()  # csr_tocsc: a stable counting transpose, duplicates kept, no summing
    return CSR(np.asarray(t.indptr, np.int64), np.ascontiguousarray(t.indices, dtype=np.int32))


def csr_extend(csr: CSR, rows: npt.ArrayLike, cols: npt.ArrayLike, n_rows: int) -> CSR:
    """A new CSR with ``n_rows`` rows: ``csr`` plus (row, col) pairs appended to their rows.

    Existing rows keep their entries in order; new entries go at the end of their row.
    Cost: one pass over the existing arrays (memory copy), no re-sort of old entries.
    """
    rows_a = np.asarray(rows, dtype=np.int64)
    cols_a = np.asarray(cols, dtype=np.int32)
    old_rows = csr.n_rows
    if n_rows < old_rows:
        raise ValueError("csr_extend cannot drop rows")
    indptr = np.concatenate([csr.indptr, np.full(n_rows - old_rows, csr.indptr[-1], np.int64)])
    if rows_a.size == 0:
        return CSR(indptr, csr.indices)
    order = np.argsort(rows_a, kind="stable")
    rows_s, cols_s = rows_a[order], cols_a[order]
    positions = indptr[rows_s + 1]
    indices = np.insert(csr.indices, positions, cols_s)
    counts = np.bincount(rows_s, minlength=n_rows)
    added = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=added[1:])
    return CSR(indptr + added, indices)


def without_empty_rows(csr: CSR) -> CSR:
    """``csr`` itself, or, if it has no entry, the same rows with a row-pointer array that holds no memory.

    A graph without synonym links still has a row per entity (8 bytes each, all zero): a read-only
    broadcast of one zero stands for them (``nbytes`` counts what it would hold; nothing is
    allocated). Everything that reads a CSR reads it the same way; none writes into one.

    Example:
        >>> empty = without_empty_rows(CSR(np.zeros(4, np.int64), np.empty(0, np.int32)))
        >>> empty.n_rows, empty.indptr.tolist(), empty.indptr.base.size
        (3, [0, 0, 0, 0], 1)
    """
    if csr.indices.size or csr.indptr.size <= 1 or csr.indptr.strides == (0,):
        return csr
    return CSR(np.broadcast_to(np.zeros(1, np.int64), csr.indptr.shape), csr.indices)


def gather_rows(csr: CSR, rows: I32, limit: int | None = None) -> tuple[I32, I32]:
    """Entries of ``rows`` as (position in ``rows``, column) arrays, first ``limit`` per row."""
    rows64 = np.asarray(rows, dtype=np.int64)
    starts = csr.indptr[rows64]
    lens = csr.indptr[rows64 + 1] - starts
    if limit is not None:
        lens = np.minimum(lens, limit)
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, np.int32), np.empty(0, np.int32)
    owner = np.repeat(np.arange(rows64.size, dtype=np.int32), lens)
    first = np.cumsum(lens) - lens
    pos = np.arange(total, dtype=np.int64) - np.repeat(first - starts, lens)
    return owner, csr.indices[pos]


def reduce_max_min(keys: I32, scores: F32, hops: npt.NDArray[np.int16]) -> tuple[I32, F32, npt.NDArray[np.int16]]:
    """Unique keys with the max score and the min hop over their duplicates."""
    if keys.size == 0:
        return keys, scores, hops
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    return (
        k[starts],
        np.maximum.reduceat(scores[order], starts),
        np.minimum.reduceat(hops[order], starts),
    )
