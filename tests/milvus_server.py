"""Start and stop a real Milvus standalone server from the ``milvus`` wheel (2.3.5).

No Docker: the wheel carries the binary and an embedded etcd. The server listens on the
first free port from 19530. Stopping: SIGTERM, then SIGKILL if it has not exited after
``grace`` seconds. Measured here, a server holding collections ignores SIGTERM and SIGINT
for minutes; a killed server leaves stale etcd sessions that slow the next start *in the
same directory* by ~50 s, so every session uses a fresh directory.

Usable as a script (``python tests/milvus_server.py DIR`` prints the URI and serves until
interrupted) and by the test session (``conftest.py``).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


class MilvusServerHandle:
    def __init__(self, base_dir: Path) -> None:
        from milvus import MilvusServer

        self.base_dir = Path(base_dir)
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.server = MilvusServer()
        self.server.set_base_dir(str(self.base_dir))

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server.listen_port}"

    def start(self, timeout: float = 180.0) -> str:
        import urllib.request

        started = time.perf_counter()
        self.server.wait_for_started = False
        self.server.start()
        health = f"http://127.0.0.1:{self.server.webservice_port}/healthz"
        while time.perf_counter() - started < timeout:
            if self.server.server_proc.poll() is not None:  # died (port taken, bad config...)
                break
            try:
                with urllib.request.urlopen(health, timeout=2) as resp:
                    if b"OK" in resp.read():
                        time.sleep(1)  # as the wheel does: let the proxy settle
                        self.startup_seconds = time.perf_counter() - started
                        return self.uri
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        log = self.base_dir / "logs" / "milvus-stderr.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"Milvus server did not start within {timeout:.0f}s; its log ends with:\n{tail}")

    def stop(self, grace: float = 10.0) -> None:
        proc = self.server.server_proc
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        self.server.server_proc = None
        for fd in self.server.proc_fds.values():
            fd.close()
        self.server.proc_fds.clear()


@contextlib.contextmanager
def running_server(base_dir: Path) -> Iterator[str]:
    handle = MilvusServerHandle(base_dir)
    uri = handle.start()
    try:
        yield uri
    finally:
        handle.stop()


if __name__ == "__main__":
    with running_server(Path(sys.argv[1] if len(sys.argv) > 1 else ".milvus-server")) as server_uri:
        print(server_uri, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
