"""``serve`` as a real subprocess on a free port, for the server's integration tests and benchmark."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """``python -m langchain_graphrag_milvus serve ARGS`` in ``cwd``; ``url`` once ``/health`` answers."""

    def __init__(self, cwd: Path, *args: str, token: str | None = None, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = cwd / f"serve-{self.port}.log"
        environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        environ.pop("OPENAI_API_KEY", None)
        if token:
            environ["GRAPHRAG_API_TOKEN"] = token
        cmd = [sys.executable, "-m", "langchain_graphrag_milvus", "serve", "--port", str(self.port), *args]
        self._out = self.log.open("wb")
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=environ, stdout=self._out, stderr=subprocess.STDOUT)

    def wait(self, timeout: float = 120) -> ServeProcess:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"serve did not answer within {timeout}s: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
