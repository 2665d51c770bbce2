"""The no-Milvus guard of tests/unit: it blocks every way to Milvus and fails tests that reach it anyway."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pymilvus import MilvusClient

from .guard_site.no_milvus_guard import MilvusGuard, MilvusUsedInUnitTest

ROOT = Path(__file__).resolve().parents[2]


def test_guard_blocks_clients_servers_and_channels(tmp_path: Path) -> None:
    import grpc
    import grpc.aio
    from pymilvus import AsyncMilvusClient, connections

    before = MilvusClient.__init__  # the hook's own guard (this test runs under it)
    guard = MilvusGuard()
    guard.install()
    try:
        assert MilvusClient.__init__ is not before
        with pytest.raises(MilvusUsedInUnitTest):
            MilvusClient(uri=str(tmp_path / "lite.db"))
        with pytest.raises(MilvusUsedInUnitTest):
            AsyncMilvusClient(uri="http://127.0.0.1:1")
        with pytest.raises(MilvusUsedInUnitTest):
            connections.connect("guard-test", uri="http://127.0.0.1:1")
        with pytest.raises(MilvusUsedInUnitTest):
            subprocess.Popen(["/nonexistent/bin/milvus", "run", "standalone"])
        with pytest.raises(MilvusUsedInUnitTest):
            grpc.insecure_channel("127.0.0.1:1")
        with pytest.raises(MilvusUsedInUnitTest):
            grpc.aio.insecure_channel("127.0.0.1:1")
        with pytest.raises(MilvusUsedInUnitTest):
            grpc.server(None)
        assert guard.intact()
    finally:
        guard.uninstall()
    assert guard.attempts == [
        f"MilvusClient.__init__({str(tmp_path / 'lite.db')!r})",
        "AsyncMilvusClient.__init__('http://127.0.0.1:1')",
        "Connections.connect('guard-test')",
        "subprocess.Popen(['/nonexistent/bin/milvus', 'run', 'standalone'])",
        "grpc.insecure_channel('127.0.0.1:1')",
        "grpc.aio.insecure_channel('127.0.0.1:1')",
        "grpc.server('')",
    ]
    assert MilvusClient.__init__ is before  # uninstalled: what was there before is back


CASES = """
import subprocess
import sys

import grpc
import pytest


def test_pure():
    assert 1 + 1 == 2


def test_swallows_the_error(tmp_path):
    from pymilvus import MilvusClient

    try:
        MilvusClient(uri=str(tmp_path / "x.db"))
    except Exception:
        pass


def test_child_process_swallows_the_error(tmp_path):
    code = (
        "from pymilvus import MilvusClient\\n"
        "try:\\n"
        f"    MilvusClient(uri={str(tmp_path / 'y.db')!r})\\n"
        "except Exception:\\n"
        "    pass\\n"
    )
    subprocess.run([sys.executable, "-c", code], env={"PATH": "/usr/bin"}, check=True)


def test_removes_the_guard(monkeypatch):
    monkeypatch.setattr(grpc, "insecure_channel", lambda *a, **k: None)


@pytest.fixture
def make_store():
    return None


def test_asks_for_a_store(make_store):
    pass


@pytest.mark.server
def test_server_marker():
    pass
"""


def test_hooks_fail_tests_that_reach_milvus_even_when_the_error_is_caught(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    server: x\n")
    (tmp_path / "conftest.py").write_text(
        "from tests.unit.no_milvus import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown\n"
    )
    (tmp_path / "test_cases.py").write_text(textwrap.dedent(CASES))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rA",
            "-p",
            "no:cacheprovider",
            "-c",
            str(tmp_path / "pytest.ini"),
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_cases.py"),
        ],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout
    assert "PASSED test_cases.py::test_pure" in out, out
    for name in ("test_swallows_the_error", "test_child_process_swallows_the_error", "test_removes_the_guard"):
        assert f"FAILED test_cases.py::{name}" in out, out
    for name in ("test_asks_for_a_store", "test_server_marker"):
        assert f"ERROR test_cases.py::{name}" in out, out
    assert "test_swallows_the_error reached Milvus in a unit test: grpc.server" in out
    assert "child process: pid" in out
    assert "removed the no-Milvus guard" in out
    assert "it belongs in tests/integration" in out
    assert "3 failed, 1 passed, 2 errors" in out, out
