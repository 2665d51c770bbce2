"""``--tenant`` and ``--graph-path`` checks of the CLI, made before anything is written.

* **Tenants.** A store created with a partition key (``partition_key_field=`` in the API,
  or ``ingest --tenant`` on a new store) holds several tenants' files. The CLI reads the
  key field from the existing passage collection. ``ingest`` into such a store needs
  ``--tenant`` (the files' tenant: set as that metadata field; ``--sync`` deletes only
  that tenant's sources); ``query`` needs ``--tenant`` (results filtered on it) or
  ``--all-tenants``. ``--tenant`` on a store without a partition key is refused, as
  the data would not be partitioned.
* **graph_path.** The saved graph index may not be the working folder or contain it,
  and (``ingest``) may not be inside an ingest root or contain one: it would be read
  as documents, or its replacement would touch the user's files.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.cli.discovery import check_graph_path, display_path

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["DEFAULT_TENANT_FIELD", "check_graph_path", "existing_partition_key", "open_tenant_store", "tenant_filter"]

DEFAULT_TENANT_FIELD = "tenant"


def existing_partition_key(store: MilvusGraphStore) -> str | None:
    """The partition key field of the store's passage collection, if it exists and has one."""
    return store.writes.stored_partition_key()


def _open(
    args: argparse.Namespace, extractor: Any, reader: bool, key: str | None, cache: Path | None = None
) -> MilvusGraphStore:
    from langchain_graphrag_milvus.cli.common import open_store

    return open_store(args, extractor=extractor, reader=reader, partition_key_field=key, extraction_cache=cache)


def open_tenant_store(
    args: argparse.Namespace,
    *,
    extractor: Runnable[Any, Any] | None = None,
    reader: bool = False,
    extraction_cache: Path | None = None,
) -> tuple[MilvusGraphStore, str | None]:
    """The store with its partition key field, ``--tenant`` checked against it.

    Returns:
        The store (opened with ``partition_key_field`` when it has one) and that field.

    Raises:
        ValueError: ``--tenant`` is missing for a partitioned store, or given for a store
            without a partition key.
    """
    tenant = getattr(args, "tenant", None)
    store = _open(args, extractor, reader, None, extraction_cache)
    try:
        key = existing_partition_key(store)
    except BaseException:
        store.close()
        raise
    where = f"the store {args.prefix!r} at {display_path(args.uri)!r}"
    if key is None and tenant is not None and store.exists():
        store.close()
        raise ValueError(f"--tenant: {where} has no partition key (it was created without tenants); leave --tenant out")
    if key is not None and tenant is None and not getattr(args, "all_tenants", False):
        store.close()
        more = " or --all-tenants" if hasattr(args, "all_tenants") else ""
        raise ValueError(
            f"{where} is partitioned by the metadata field {key!r}: pass --tenant VALUE{more} "
            "(the tenant whose documents these are)"
        )
    if key is None and tenant is not None:  # a new store: created partitioned
        key = getattr(args, "partition_key_field", None) or DEFAULT_TENANT_FIELD
    if key is None:
        return store, None
    store.close()
    return _open(args, extractor, reader, key, extraction_cache), key


def tenant_filter(
    user_filter: str | dict[str, Any] | None, key: str | None, tenant: str | None
) -> str | dict[str, Any] | None:
    """``--filter`` restricted to ``--tenant`` (a dict stays a dict; an expression is and-ed)."""
    if key is None or tenant is None:
        return user_filter
    if user_filter is None:
        return {key: tenant}
    if isinstance(user_filter, dict):
        if key in user_filter and user_filter[key] != tenant:
            raise ValueError(f"--filter names {key}={user_filter[key]!r} but --tenant is {tenant!r}")
        return {**user_filter, key: tenant}
    from langchain_graphrag_milvus.milvus import expr

    return expr.and_all(user_filter, expr.eq_filter({key: tenant}))
