"""Saving and loading a :class:`~langchain_graphrag_milvus.graph.GraphIndex` (``.npy`` files).

A directory holds one ``.npy`` file per array plus ``manifest.json`` (format, counts and
the fingerprint of the data the index was built from). Loading memory-maps the arrays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from langchain_graphrag_milvus.graph.csr import CSR
from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph.index import GraphIndex

__all__ = ["save", "load", "read_manifest", "FORMAT_VERSION"]

FORMAT_VERSION = 1


def save(graph: GraphIndex, directory: str | os.PathLike[str], *, fingerprint: dict[str, Any] | None = None) -> Path:
    """Write the index as ``.npy`` files plus ``manifest.json`` into ``directory``.

    The files are written to a temporary directory first and renamed into place, so
    a crash never leaves a half-written index behind.
    """
    target = Path(directory)
    tmp = target.with_name(target.name + ".tmp")
    if tmp.exists():
        _rmtree(tmp)
    tmp.mkdir(parents=True)
    encoded = [pid.encode("utf-8") for pid in graph.passages.ids]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    arrays = {
        **{f"entity_{k}": v for k, v in graph.entities.arrays().items()},
        **{f"relation_{k}": v for k, v in graph.relations.arrays().items()},
        "rel_subject": graph.rel_subject,
        "rel_object": graph.rel_object,
        "ent_rel_indptr": graph.ent_rel.indptr,
        "ent_rel_indices": graph.ent_rel.indices,
        "rel_pas_indptr": graph.rel_pas.indptr,
        "rel_pas_indices": graph.rel_pas.indices,
        "pas_rel_indptr": graph.pas_rel.indptr,
        "pas_rel_indices": graph.pas_rel.indices,
        "synonyms_indptr": graph.synonyms.indptr,
        "synonyms_indices": graph.synonyms.indices,
        "passage_blob": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "passage_offsets": offsets,
    }
    for name, arr in arrays.items():
        np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
    manifest = {
        "format": FORMAT_VERSION,
        "entities": graph.n_entities,
        "relations": graph.n_relations,
        "passages": graph.n_passages,
        "fingerprint": fingerprint or {},
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    if target.exists():
        old = target.with_name(target.name + ".old")
        if old.exists():
            _rmtree(old)
        target.rename(old)
        tmp.rename(target)
        _rmtree(old)
    else:
        tmp.rename(target)
    return target


def read_manifest(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a saved index (counts, format, fingerprint)."""
    manifest: dict[str, Any] = json.loads((Path(directory) / "manifest.json").read_text(encoding="utf-8"))
    return manifest


def load(directory: str | os.PathLike[str], *, mmap: bool = True) -> GraphIndex:
    """Load an index written by :meth:`save` (memory-mapped by default)."""
    path = Path(directory)
    manifest = read_manifest(path)
    if manifest.get("format") != FORMAT_VERSION:
        raise ValueError(f"unsupported graph index format {manifest.get('format')!r} in {path}")
    mode: Literal["r"] | None = "r" if mmap else None

    def arr(name: str) -> Any:
        return np.load(path / f"{name}.npy", mmap_mode=mode, allow_pickle=False)

    blob = bytes(np.load(path / "passage_blob.npy"))
    offsets = np.load(path / "passage_offsets.npy").tolist()
    pids = [blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]
    from langchain_graphrag_milvus.graph.index import GraphIndex

    index = GraphIndex(
        entities=KeyMap(arr("entity_keys"), arr("entity_sorted_keys"), arr("entity_sorted_index")),
        relations=KeyMap(arr("relation_keys"), arr("relation_sorted_keys"), arr("relation_sorted_index")),
        passages=StringIdMap(pids),
        rel_subject=arr("rel_subject"),
        rel_object=arr("rel_object"),
        ent_rel=CSR(arr("ent_rel_indptr"), arr("ent_rel_indices")),
        rel_pas=CSR(arr("rel_pas_indptr"), arr("rel_pas_indices")),
        pas_rel=CSR(arr("pas_rel_indptr"), arr("pas_rel_indices")),
        synonyms=CSR(arr("synonyms_indptr"), arr("synonyms_indices")),
    )
    if (index.n_entities, index.n_relations, index.n_passages) != (
        manifest["entities"],
        manifest["relations"],
        manifest["passages"],
    ):
        raise ValueError(f"graph index in {path} does not match its manifest")
    return index


def _rmtree(path: Path) -> None:
    for child in path.iterdir():
        child.unlink()
    path.rmdir()
