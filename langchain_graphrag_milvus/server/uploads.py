"""Documents from requests: JSON documents, and uploaded files read with the CLI's loaders.

An uploaded file is written to a private temporary folder under a fixed name (never the
client's file name, which is only data: it picks the loader by its suffix and becomes the
source id), loaded and split by :func:`~langchain_graphrag_milvus.ingest.loaders.load_file`,
and its chunks get ids of the reserved chunk form of that source (as ``ingest`` gives
them), so an upload of the same file name replaces that file's passages.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from langchain_graphrag_milvus.server.schemas import DocumentsRequest
    from langchain_graphrag_milvus.server.state import ServerState

__all__ = ["json_documents", "file_documents"]


def _tenant(state: ServerState, tenant: str | None) -> str | None:
    if state.partition_key is None:
        if tenant is not None:
            raise ValueError("this store has no tenants (no partition key): leave tenant out")
        return None
    if not tenant:
        raise ValueError(f"this store is partitioned by {state.partition_key!r}: pass tenant")
    return tenant


def json_documents(state: ServerState, body: DocumentsRequest) -> list[Document]:
    """LangChain Documents of ``POST /documents`` (triplets into ``metadata["triplets"]``, tenant set)."""
    from langchain_core.documents import Document

    tenant = _tenant(state, body.tenant)
    docs = []
    for item in body.documents:
        metadata = dict(item.metadata)
        if item.triplets is not None:
            metadata["triplets"] = item.triplets
        if tenant is not None:
            metadata[str(state.partition_key)] = tenant
        docs.append(Document(id=item.id, page_content=item.text, metadata=metadata))
    return docs


def _chunk_ids(documents: list[Document], source: str, tenant: str | None) -> None:
    from langchain_graphrag_milvus.ingest.identity import chunk_id

    seen: dict[str, int] = {}
    for doc in documents:
        seen[doc.page_content] = count = seen.get(doc.page_content, 0) + 1
        payload = doc.page_content if count == 1 else f"{doc.page_content}\0{count}"
        number = int.from_bytes(hashlib.blake2b(payload.encode("utf-8"), digest_size=8).digest(), "big")
        doc.id = chunk_id(source, number, scope=tenant)


def file_documents(
    state: ServerState, files: list[tuple[str, bytes]], source: str | None, tenant: str | None
) -> tuple[list[Document], list[dict[str, str]]]:
    """Chunks of the uploaded ``(file name, bytes)``; files that give none are listed with the reason.

    Raises:
        ValueError: A tenant is missing or not allowed.
        ImportError: The ``files`` extra (loaders, splitters) is not installed.
    """
    from langchain_graphrag_milvus.ingest.loaders import FILE_TYPES, ChunkSettings, SourceFile, load_file

    tenant = _tenant(state, tenant)
    documents: list[Document] = []
    skipped: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="graphrag-upload-") as folder:
        for index, (name, data) in enumerate(files):
            name_source = source or PurePath(name.replace("\\", "/")).name or f"upload-{index}"
            kind = FILE_TYPES.get(PurePath(name).suffix.lower())
            if kind is None:
                skipped.append({"file": name, "reason": f"unsupported file type (one of {', '.join(FILE_TYPES)})"})
                continue
            path = Path(folder) / f"upload-{index}{PurePath(name).suffix.lower() or '.txt'}"
            path.write_bytes(data)
            try:
                loaded = load_file(SourceFile(path=path, source=name_source, kind=kind), ChunkSettings())
            except ImportError:
                raise
            except Exception as exc:  # an unreadable file is reported, never fatal
                skipped.append({"file": name, "reason": f"{type(exc).__name__}: {exc}"})
                continue
            if not loaded.documents:
                skipped.append({"file": name, "reason": "no text found"})
                continue
            _chunk_ids(loaded.documents, name_source, tenant)
            for doc in loaded.documents:
                doc.metadata.pop("file_fingerprint", None)
                if tenant is not None:
                    doc.metadata[str(state.partition_key)] = tenant
            documents += loaded.documents
    return documents, skipped
