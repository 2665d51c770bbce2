"""Sparse vectors of the walk ranking: the nodes a walk reached (or the seeds), never the whole graph.

A :data:`Sparse` is a pair of arrays: distinct node indices (ascending) and their
non-zero float32 values. The operations mirror what the dense ranking did on arrays of the
graph's size, with the same float32 arithmetic per entry, at the cost of the entries held.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Sparse", "EMPTY", "sparse", "accumulate", "at", "add", "keep", "restrict", "normalised"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
#: A sparse vector: distinct indices (ascending) and their non-zero values.
Sparse = tuple[I64, F32]

EMPTY: Sparse = (np.empty(0, np.int64), np.empty(0, np.float32))


def sparse(idx: npt.ArrayLike, val: npt.ArrayLike) -> Sparse:
    """Indices (already distinct and ascending) and values, without the zero entries."""
    i, v = np.asarray(idx, np.int64), np.asarray(val, np.float32)
    nz = v != 0
    return i[nz], v[nz]


def accumulate(idx: npt.NDArray[Any], weights: F32) -> Sparse:
    """``np.add.at`` of ``weights`` at ``idx`` into a zero vector, sparse (same float32 sums)."""
    if not idx.size:
        return EMPTY
    keys, inverse = np.unique(idx.astype(np.int64), return_inverse=True)
    out = np.zeros(keys.size, np.float32)
    np.add.at(out, inverse, weights)
    return sparse(keys, out)


def at(vec: Sparse, idx: npt.NDArray[Any]) -> F32:
    """The values of ``vec`` at ``idx`` (0 where it has none)."""
    keys, val = vec
    if not keys.size or not idx.size:
        return np.zeros(idx.size, np.float32)
    pos = np.minimum(np.searchsorted(keys, idx), keys.size - 1)
    return np.where(keys[pos] == idx, val[pos], 0).astype(np.float32)


def add(a: Sparse, b: Sparse) -> Sparse:
    """Element-wise ``a + b`` (float32, like the dense sum)."""
    if not b[0].size:
        return a
    if not a[0].size:
        return b
    keys = np.union1d(a[0], b[0])
    return sparse(keys, at(a, keys) + at(b, keys))


def keep(vec: Sparse, which: npt.NDArray[np.bool_]) -> Sparse:
    """The entries ``which`` selects (a boolean array aligned with the entries)."""
    return vec[0][which], vec[1][which]


def restrict(vec: Sparse, mask: npt.NDArray[np.bool_] | None) -> Sparse:
    """The entries a mask allows (looked up at the vector's indices only)."""
    return vec if mask is None else keep(vec, np.asarray(mask, dtype=bool)[vec[0]])


def normalised(vec: Sparse, size: int, dense_sum: bool) -> Sparse:
    """``x / x.sum()`` (unchanged if empty); ``dense_sum``: the sum of the dense array, as before."""
    if not vec[0].size:
        return vec
    if dense_sum:  # the global solver is O(graph) anyway: keep its results bit-identical
        dense = np.zeros(size, np.float32)
        dense[vec[0]] = vec[1]
        total = dense.sum()
    else:
        total = vec[1].sum()
    return sparse(vec[0], vec[1] / total)
