"""The no-Milvus guard's core: no pytest, no package imports (child processes load it via sitecustomize).

Every Milvus connection (pymilvus, sync or async, Lite or server) opens a gRPC channel; Milvus Lite also
starts a gRPC server in-process and the ``milvus`` wheel spawns its ``milvus`` binary. :class:`MilvusGuard`
replaces those entry points (``grpc[.aio].{insecure,secure}_channel``, ``grpc[.aio].server``, and
``subprocess.Popen`` of a ``milvus*`` executable) with functions that record the attempt and raise. When
pymilvus is already loaded, its client constructors and ``connections.connect`` are replaced too, so a
client that would reuse a cached channel (opened earlier in the same process) is caught as well.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

LOG_ENV = "UNIT_NO_MILVUS_LOG"
SITE_DIR = Path(__file__).resolve().parent
_GRPC_NAMES = ("insecure_channel", "secure_channel", "server")
_PYMILVUS_ENTRY_POINTS = (
    ("pymilvus.milvus_client.milvus_client", "MilvusClient", "__init__"),
    ("pymilvus.milvus_client.async_milvus_client", "AsyncMilvusClient", "__init__"),
    ("pymilvus.orm.connections", "Connections", "connect"),
)


class MilvusUsedInUnitTest(RuntimeError):
    """A unit test tried to reach Milvus (raised inside the test; the hook fails the test anyway)."""


def _blocker(what: str, record: Callable[[str], None]) -> Callable[..., Any]:
    def blocked(*args: Any, **kwargs: Any) -> Any:
        named = [a for a in args if isinstance(a, (str, bytes, list, tuple))][:1]
        target = named[0] if named else kwargs.get("uri", kwargs.get("target", ""))
        message = f"{what}({target!r})"
        record(message)
        raise MilvusUsedInUnitTest(f"unit tests must not use Milvus: {message}; move the test to tests/integration")

    blocked.__no_milvus_guard__ = True  # type: ignore[attr-defined]
    return blocked


def _is_milvus_binary(args: Any) -> bool:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args or [])
    if not argv:
        return False
    first = os.fsdecode(argv[0]).split()[0] if isinstance(args, (str, bytes)) else os.fsdecode(argv[0])
    return Path(first).name.startswith("milvus")


class MilvusGuard:
    """Replaces the Milvus entry points while installed; ``attempts`` lists what was blocked."""

    def __init__(self, record: Callable[[str], None] | None = None) -> None:
        self.attempts: list[str] = []
        self._record = record or self.attempts.append
        self._saved: list[tuple[Any, str, Any]] = []

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def patch_grpc(self, module: ModuleType, prefix: str) -> None:
        """Blocks channel and server creation in ``grpc`` or ``grpc.aio``."""
        for name in _GRPC_NAMES:
            if hasattr(module, name):
                self._patch(module, name, _blocker(f"{prefix}.{name}", self._record))

    def patch_popen(self) -> None:
        """Blocks starting a ``milvus*`` executable (the server wheel's binary)."""
        original = subprocess.Popen.__init__
        record = self._record

        def init(popen: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
            if _is_milvus_binary(args):
                _blocker("subprocess.Popen", record)(args)
            env = kwargs.get("env")
            if env is not None and LOG_ENV in os.environ:  # an explicit env must not drop the guard
                kwargs["env"] = {**env, **child_env(dict(env))}
            original(popen, args, *rest, **kwargs)

        init.__no_milvus_guard__ = True  # type: ignore[attr-defined]
        self._patch(subprocess.Popen, "__init__", init)

    def patch_pymilvus(self) -> None:
        """Blocks pymilvus' clients and ``connections.connect`` (only if pymilvus is loaded: never imports it)."""
        for module_name, owner_name, attribute in _PYMILVUS_ENTRY_POINTS:
            module = sys.modules.get(module_name)
            owner = getattr(module, owner_name, None) if module is not None else None
            if owner is not None and hasattr(owner, attribute):
                self._patch(owner, attribute, _blocker(f"{owner_name}.{attribute}", self._record))

    def install(self) -> None:
        """Patches grpc (imported here), Popen and, if loaded, pymilvus."""
        import grpc
        import grpc.aio

        self.patch_grpc(grpc, "grpc")
        self.patch_grpc(grpc.aio, "grpc.aio")
        self.patch_popen()
        self.patch_pymilvus()

    def intact(self) -> bool:
        """True while every replaced attribute still holds the guard's function."""
        return all(getattr(getattr(owner, name), "__no_milvus_guard__", False) for owner, name, _ in self._saved)

    def uninstall(self) -> None:
        """Puts the originals back (in reverse order)."""
        for owner, name, value in reversed(self._saved):
            setattr(owner, name, value)
        self._saved.clear()


def child_env(env: dict[str, str]) -> dict[str, str]:
    """The variables that carry the guard into a child process (``LOG_ENV`` must be set)."""
    path = env.get("PYTHONPATH", "")
    parts = [str(SITE_DIR), *(p for p in path.split(os.pathsep) if p and p != str(SITE_DIR))]
    return {"PYTHONPATH": os.pathsep.join(parts), LOG_ENV: os.environ[LOG_ENV]}


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """For child processes: patches grpc when (if ever) it is imported, so idle children stay light."""

    def __init__(self, guard: MilvusGuard) -> None:
        self._guard = guard

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in ("grpc", "grpc.aio"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader, guard = spec.loader, self._guard
        exec_module = loader.exec_module

        def exec_and_patch(module: ModuleType) -> None:
            exec_module(module)
            guard.patch_grpc(module, fullname)

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


def install_in_child(log_name: str) -> None:
    """Called by ``guard_site/sitecustomize.py`` in child processes of a unit test."""

    def record(message: str) -> None:
        with open(log_name, "a", encoding="utf-8") as log:
            log.write(f"pid {os.getpid()}: {message}\n")

    guard = MilvusGuard(record)
    guard.patch_popen()
    for name in ("grpc", "grpc.aio"):
        if name in sys.modules:
            guard.patch_grpc(sys.modules[name], name)
    sys.meta_path.insert(0, _PatchAfterImport(guard))
