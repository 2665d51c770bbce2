"""The embedding model a store was built with, recorded so that another model is refused.

Two models of the same dimension give vectors Milvus accepts alike, but their spaces are
unrelated: rows written by a second model mix with the first model's (the keys are derived
from the text, so the same keys get vectors of another space), and a query embedded by another
model scores nonsense. So the store keeps a *fingerprint* of its model in the relation
collection's properties (beside the store id and the generation counter, :mod:`.properties`):

* :data:`FINGERPRINT_KEY`: the model's vector of one fixed text, :data:`PROBE_TEXT`, scaled to
  unit length and kept as base64 float16 (768 bytes of data for 384 dimensions, 8 KiB for
  3,072). It is compared by cosine (:data:`TOLERANCE`), not by an exact hash: one model through
  another runtime (torch or ONNX Runtime) or a service's run-to-run noise differs by ~1e-6.
* :data:`MODEL_KEY`: a description of the model (its class and model name), for messages only.

:class:`EmbeddingCheck` holds one store's check: the probe is embedded once per model object
(one extra embedding call per store object), then the fingerprint is compared once, before the
store's first write and before its first search, and the result kept. Collections this version
creates get the fingerprint at creation; collections of an earlier version (none recorded) adopt
the model of their first write, under the write lease. The fingerprint is only ever written to
the relation collection, which this package creates; the team's own passage collection of an
:class:`~langchain_graphrag_milvus.existing_store.ExistingCollectionGraphStore` carries none and
is never written to (its vectors are the team's model's, which this check cannot vouch for).

A model whose dimension differs from the collections' is left to the dimension checks of the
writes and searches (:class:`~langchain_graphrag_milvus.errors.EmbeddingDimensionError`, naming the
text), as is a probe vector that is not usable (NaN, zero: the writes name the offending text).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_graphrag_milvus.errors import EmbeddingMismatchError

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_graphrag_milvus.milvus.state_seam import StoreState

__all__ = [
    "FINGERPRINT_KEY",
    "MODEL_KEY",
    "PROBE_TEXT",
    "TOLERANCE",
    "EmbeddingCheck",
    "decode",
    "describe_model",
    "encode",
    "fingerprint_properties",
    "similarity",
]

#: The collection property (on the relation collection) holding the model's probe vector (base64 float16).
FINGERPRINT_KEY = "graphrag.embedding"
#: The collection property (on the relation collection) describing the model (for messages only).
MODEL_KEY = "graphrag.embedding_model"
#: The text whose vector is the fingerprint: many unrelated words, so that its vector is spread out.
PROBE_TEXT = (
    "langchain-graphrag-milvus embedding fingerprint: Leonhard Euler studied with Johann Bernoulli in Basel "
    "in 1720; a quick brown fox jumps over seven lazy dogs near the river Rhine, under violet lanterns."
)
#: The least cosine between the recorded probe vector and the model's for the model to be the same one.
TOLERANCE = 0.999
#: Model attributes that name the model, in the order they are looked for.
_NAME_ATTRIBUTES = ("model_name", "model", "model_id", "deployment", "repo_id")
_MAX_DESCRIPTION = 200


def describe_model(embedding: Embeddings) -> str:
    """The model's class name and, if it has one, its model name: ``"OpenAIEmbeddings(text-embedding-3-small)"``."""
    name = type(embedding).__name__
    for attribute in _NAME_ATTRIBUTES:
        value = getattr(embedding, attribute, None)
        if isinstance(value, str) and value:
            name = f"{name}({value})"
            break
    return name[:_MAX_DESCRIPTION]


def _unit(vector: Any) -> np.ndarray | None:
    """``vector`` as a unit-length float64 array; None if it is not a usable vector."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
        return None
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 and np.isfinite(norm) else None


def encode(vector: Any) -> str:
    """A probe vector, at unit length, as base64 of little-endian float16.

    Raises:
        ValueError: Not a finite, non-zero, one-dimensional vector.
    """
    unit = _unit(vector)
    if unit is None:
        raise ValueError("a fingerprint needs a finite, non-zero vector")
    return base64.b64encode(unit.astype("<f2").tobytes()).decode("ascii")


def decode(text: str) -> np.ndarray | None:
    """The unit vector :func:`encode` made; None if ``text`` is not one."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeError):
        return None
    if not raw or len(raw) % 2:
        return None
    return _unit(np.frombuffer(raw, dtype="<f2"))


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine of two vectors (-1 when their dimensions differ)."""
    ua, ub = _unit(a), _unit(b)
    if ua is None or ub is None or ua.shape != ub.shape:
        return -1.0
    return float(ua @ ub)


def fingerprint_properties(vector: Any, description: str) -> dict[str, str]:
    """The collection properties recording a model: its probe vector and description."""
    return {FINGERPRINT_KEY: encode(vector), MODEL_KEY: description}


class EmbeddingCheck:
    """One store's check that its model is the one its collections were built with (lazy, cached).

    Args:
        connection: The store's connection (its relation collection holds the fingerprint; new
            collections get :attr:`~.state_seam.StoreState.fingerprint` at creation).
        embedding: The store's current model (read at each check: ``store.embedding`` may be replaced).
        label: The store, in messages.
    """

    def __init__(self, connection: StoreState, embedding: Callable[[], Embeddings], label: str = "") -> None:
        self.connection = connection
        self.embedding = embedding
        self.label = label
        self._lock = threading.Lock()
        self._probe: tuple[Embeddings, np.ndarray | None] | None = None
        #: The model found to agree with the recorded fingerprint (writes and searches pass).
        self._verified: Embeddings | None = None
        #: The model searches were allowed for (the collections had no fingerprint to compare).
        self._unrecorded: Embeddings | None = None

    def probe(self) -> np.ndarray | None:
        """The current model's unit vector of :data:`PROBE_TEXT`, embedded once per model object (None: unusable)."""
        model = self.embedding()
        known = self._probe
        if known is None or known[0] is not model:
            known = self._probe = (model, _unit(model.embed_documents([PROBE_TEXT])[0]))
        return known[1]

    @property
    def writes_checked(self) -> bool:
        """True once the current model was compared with the recorded fingerprint."""
        return self._verified is not None and self._verified is self.embedding()

    @property
    def searches_checked(self) -> bool:
        """True once searches with the current model were checked (compared, or nothing recorded to compare)."""
        model = self.embedding()
        return model is self._verified or model is self._unrecorded

    def forget(self) -> None:
        """Check again at the next write or search (the collections were dropped)."""
        with self._lock:
            self._verified = self._unrecorded = None

    def before_write(self) -> None:
        """Refuse a write by a model other than the collections' (recording it where none is recorded).

        Called under the write guard, before the operation writes anything. Without collections
        yet, the fingerprint is handed to the connection, which creates the relation collection
        with it; the next check reads it back. Collections of an earlier version adopt this model.

        Raises:
            EmbeddingMismatchError: Another model's fingerprint is recorded (nothing was written).
            ForeignCollectionError: The relation collection is not this package's.
        """
        if self.writes_checked:
            return
        with self._lock:
            if self.writes_checked:
                return
            model, conn = self.embedding(), self.connection
            vector = self.probe()
            if vector is None:
                return  # an unusable vector: the write refuses it, naming the text
            conn.fingerprint = fingerprint_properties(vector, describe_model(model))
            found = conn.relation_properties()  # ours (else refused: nothing is written to it)
            if found is None:
                return  # created with the fingerprint by this write
            props, dim = found
            if dim != vector.size:
                return  # the write's dimension check refuses it, naming the text
            if FINGERPRINT_KEY not in props:
                props = conn.record_properties(conn.fingerprint)  # what the backend kept
            self._compare(props, vector, model)
            self._verified = model

    def before_search(self) -> None:
        """Refuse a search by a model other than the collections' (once per model object; nothing written).

        Raises:
            EmbeddingMismatchError: Another model's fingerprint is recorded.
            CollectionNotFoundError: No collections (as the search itself would).
        """
        if self.searches_checked:
            return
        with self._lock:
            if self.searches_checked:
                return
            model, conn = self.embedding(), self.connection
            dim = conn.check_open()
            props = conn.properties()
            if FINGERPRINT_KEY in props:
                vector = self.probe()
                if vector is None or vector.size != dim:
                    return  # the search's own checks refuse it
                self._compare(props, vector, model)
                self._verified = model
            else:
                self._unrecorded = model  # an earlier version's collections: adopted at this model's first write

    def _compare(self, props: Mapping[str, Any], vector: np.ndarray, model: Embeddings) -> None:
        recorded = decode(str(props.get(FINGERPRINT_KEY, "")))
        cosine = similarity(recorded, vector) if recorded is not None else -1.0
        if cosine >= TOLERANCE:
            return
        built = str(props.get(MODEL_KEY) or "an unnamed model")
        raise EmbeddingMismatchError(
            f"embedding: {self.label or 'the store'} (collection prefix {self.connection.collection_prefix!r}) "
            f"was built with {built}, but embedding= is {describe_model(model)}, whose vectors are not "
            f"comparable (cosine {cosine:.3f} of their vectors of a fixed text, at least {TOLERANCE} needed); "
            "nothing was written. Pass the model the store was built with as embedding=, or ingest into "
            "another collection_prefix"
        )
