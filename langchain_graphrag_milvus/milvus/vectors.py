"""Checks on the vectors an embedding model returns, before anything is created or written.

A vector is accepted if it is a flat sequence of real numbers, all finite, of the
collections' dimension (or, before the collections exist, of the length most vectors of
the batch have), and not all zeros when the metric is COSINE (a zero vector has no
direction: every cosine score with it is NaN). Otherwise the batch raises, naming the
offending texts, and nothing of it reaches Milvus. :func:`partition_vectors` instead sorts
a batch into usable and unusable vectors, for a non-strict ingest that skips only the
documents whose vectors are bad.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from langchain_graphrag_milvus.errors import EmbeddingDimensionError, InvalidEmbeddingError

__all__ = ["check_vectors", "check_query_vectors", "partition_vectors"]

_SHOWN = 3


def _texts(texts: Sequence[str], positions: Sequence[int]) -> str:
    shown = ", ".join(f"{texts[i][:60]!r}" for i in positions[:_SHOWN])
    more = f" and {len(positions) - _SHOWN} more" if len(positions) > _SHOWN else ""
    return shown + more


def _as_array(vector: Any, text: str) -> np.ndarray[Any, Any]:
    if isinstance(vector, (str, bytes)):
        raise InvalidEmbeddingError(f"the embedding of {text[:60]!r} is a string, not a list of numbers")
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidEmbeddingError(f"the embedding of {text[:60]!r} is not a list of numbers") from None
    if array.ndim != 1 or array.size == 0:
        raise InvalidEmbeddingError(
            f"the embedding of {text[:60]!r} has shape {array.shape}, not a non-empty flat list of numbers"
        )
    return array


def check_vectors(texts: Sequence[str], vectors: Sequence[Any], *, dim: int | None, cosine: bool) -> list[list[float]]:
    """Validate one embedding batch and return it as lists of floats.

    Args:
        texts: The texts that were embedded (for messages).
        vectors: What the model returned for them, in order.
        dim: The collections' dimension, or None before they exist.
        cosine: The metric is COSINE (zero vectors are refused).

    Raises:
        InvalidEmbeddingError: Wrong number of vectors, a non-numeric, NaN, infinite or
            (with COSINE) zero vector.
        EmbeddingDimensionError: A vector's length differs from ``dim`` (or, with no
            ``dim``, from the other vectors of the batch).
    """
    if isinstance(vectors, (str, bytes)) or len(vectors) != len(texts):
        got = len(vectors) if not isinstance(vectors, (str, bytes)) else "a string"
        raise InvalidEmbeddingError(f"the embedding model returned {got} vectors for {len(texts)} texts")
    try:  # fast path: a rectangular batch of numbers converts in one call
        whole = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        whole = None
    if whole is not None and whole.ndim == 2 and whole.shape[1] > 0:
        arrays = list(whole)
    else:  # find the offending vector, for the message
        arrays = [_as_array(v, t) for v, t in zip(vectors, texts)]
    lengths = [a.size for a in arrays]
    expected = dim if dim is not None else Counter(lengths).most_common(1)[0][0]
    wrong = [i for i, n in enumerate(lengths) if n != expected]
    if wrong:
        got = lengths[wrong[0]]
        if dim is not None:
            message = (
                f"the collections store {dim}-dimensional vectors but the embedding model gives {got} for "
                f"{_texts(texts, wrong)}; use the model the data was ingested with, or another collection_prefix"
            )
        else:
            message = (
                f"the embedding model gives {got}-dimensional vectors for {_texts(texts, wrong)} but "
                f"{expected} for the rest of the batch (ragged)"
            )
        raise EmbeddingDimensionError(message + "; nothing was written")
    matrix = whole if whole is not None and whole.ndim == 2 else np.vstack(arrays)
    # Milvus stores float32: a finite float64 beyond its range would become infinite there
    finite = np.isfinite(matrix) & (np.abs(matrix) <= np.finfo(np.float32).max)
    bad = np.flatnonzero(~finite.all(axis=1)).tolist()
    if bad:
        raise InvalidEmbeddingError(
            f"the embedding model returned NaN or infinite values for {_texts(texts, bad)}; nothing was written"
        )
    if cosine:
        zero = np.flatnonzero(~matrix.any(axis=1)).tolist()
        if zero:
            raise InvalidEmbeddingError(
                f"the embedding model returned an all-zero vector for {_texts(texts, zero)}, which COSINE "
                "cannot compare; nothing was written"
            )
    return matrix.tolist()  # type: ignore[no-any-return]


def partition_vectors(
    texts: Sequence[str], vectors: Sequence[Any], *, dim: int | None, cosine: bool
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """The usable vectors by text, and the texts whose vector is unusable with the reason.

    For a non-strict ingest: one NaN, infinite, zero (COSINE), empty or non-numeric vector
    costs only the documents that need it. A wrong number of vectors, or vectors of
    another length than the collections' (or than the rest of the batch), still raise:
    they mean a wrong model, not a bad document.

    Raises:
        InvalidEmbeddingError: The model returned another number of vectors than texts.
        EmbeddingDimensionError: The usable vectors do not all have the expected length.
    """
    try:
        return dict(zip(texts, check_vectors(texts, vectors, dim=dim, cosine=cosine))), {}
    except InvalidEmbeddingError:
        if isinstance(vectors, (str, bytes)) or len(vectors) != len(texts):
            raise
    good: dict[str, list[float]] = {}
    bad: dict[str, str] = {}
    for text, vector in zip(texts, vectors):
        try:
            good[text] = check_vectors([text], [vector], dim=dim, cosine=cosine)[0]
        except InvalidEmbeddingError as exc:
            bad[text] = str(exc).replace("; nothing was written", "")
    if good:
        check_vectors(list(good), list(good.values()), dim=dim, cosine=cosine)  # lengths agree
    return good, bad


def check_query_vectors(texts: Sequence[str], vectors: Sequence[Any]) -> list[list[float]]:
    """Validate the vectors of a query (and its entity names) before any search.

    A model that misbehaves on one query (NaN, infinite, ragged or non-numeric output)
    gets a typed error instead of a search with garbage or a raw Milvus error.

    Raises:
        InvalidEmbeddingError: Wrong number of vectors, a non-numeric, NaN or infinite vector.
        EmbeddingDimensionError: The vectors have different lengths.
    """
    try:
        return check_vectors(texts, vectors, dim=None, cosine=False)
    except (InvalidEmbeddingError, EmbeddingDimensionError) as exc:
        message = str(exc).replace("; nothing was written", "; no search was run")
        raise type(exc)(f"query embedding: {message}") from None
