"""The guard that keeps ``tests/unit`` free of Milvus (pytest side; the core is ``guard_site/no_milvus_guard.py``).

While a unit test runs (setup, call and teardown) the Milvus entry points are replaced (see the core).
The hooks fail the test from the record of attempts, not from the exception, so a test (or code under
test) that catches the error still fails; they also fail a test that removed the guard during the run
and a test that asks for a store fixture or carries the ``server`` marker. Python child processes started
during a unit test inherit the guard through ``PYTHONPATH`` (``guard_site/sitecustomize.py``) and report
their attempts into a log file that the parent reads after the phase.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .guard_site.no_milvus_guard import LOG_ENV, MilvusGuard, child_env

STORE_FIXTURES = frozenset({"make_store", "module_stores", "nano_store", "milvus_server", "backend"})


@contextmanager
def guarded(nodeid: str) -> Iterator[MilvusGuard]:
    """Runs one test phase under the guard, children included; raises if Milvus was reached."""
    fd, log_name = tempfile.mkstemp(prefix="no-milvus-", suffix=".log")
    os.close(fd)
    saved_env = {name: os.environ.get(name) for name in ("PYTHONPATH", LOG_ENV)}
    os.environ[LOG_ENV] = log_name
    os.environ.update(child_env(dict(os.environ)))
    guard = MilvusGuard()
    guard.install()
    try:
        yield guard
    finally:
        intact = guard.intact()
        guard.uninstall()
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        children = Path(log_name).read_text(encoding="utf-8").splitlines()
        os.unlink(log_name)
    attempts = guard.attempts + [f"child process: {line}" for line in children]
    if attempts:
        pytest.fail(f"{nodeid} reached Milvus in a unit test: {'; '.join(attempts)}", pytrace=False)
    if not intact:
        pytest.fail(f"{nodeid} removed the no-Milvus guard", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """Refuses store fixtures, then guards the setup."""
    requested = STORE_FIXTURES & set(getattr(item, "fixturenames", ()))
    if requested or item.get_closest_marker("server"):
        pytest.fail(
            f"{item.nodeid} asks for Milvus ({sorted(requested) or 'server marker'}): it belongs in tests/integration",
            pytrace=False,
        )
    with guarded(item.nodeid):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Guards the test body."""
    with guarded(item.nodeid):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Guards the teardown (fixture finalizers)."""
    with guarded(item.nodeid):
        return (yield)
