"""Start and stop a real Milvus standalone server from the ``milvus`` wheel (2.3.5).

No Docker: the wheel carries the binary and an embedded etcd. Every server gets its own ports,
so a second one starts on a machine that already runs one: the wheel's template hard-wires
nothing but the embedded etcd, which binds 127.0.0.1:2379/2380 unless Milvus is given an
embed-etcd configuration file (``etcd.config.path``). This module writes one per server, with a
free client and peer port, next to a copy of the wheel's template that points at it. The
ports are kept in ``ports.json`` in the server's directory, so a restart in the same directory
(after a crash) comes back on the same URI with the same etcd member.

Stopping: by the handle's own process (never by a name pattern): SIGTERM, then SIGKILL if it
has not exited after ``grace`` seconds. Measured here, a server holding collections ignores
SIGTERM for minutes; a killed server leaves etcd sessions that slow the next start *in the same
directory* until their lease expires (``session_ttl``, 30 s in the wheel's template).

When ``MILVUS_SERVER_PID_DIR`` is set (``.ci/run`` sets it to a directory it created), each
started server writes ``<pid>.pid`` there (pid and directory) and removes it when stopped, so
a test session killed before its teardown still leaves CI what it needs to stop that server and
no other.

Test tuning (``tuned=True``, what the test session and the fault-injection server use): the
same Milvus 2.3.5 binary and semantics, with shorter internal polling periods -- the proxy's time
tick (200 → 50 ms: a ``Strong`` or ``Session`` read waits for the next tick; measured here 0.24 s →
0.06 s per strong query), query coord's channel and segment checkers and distribution pull (a load
starts sooner), and the index scheduler (an index build starts sooner). Measured on this machine:
an index switch (release, drop, build HNSW, load) 3.8 s → 2.6 s; the idle server uses about 10 %
of a core instead of 4 %. Benchmarks keep the wheel's defaults (``tuned=False``), so their numbers
are those of a stock server.

Usable as a script (``python tests/milvus_server.py DIR [PORT]`` prints the URI and serves
until interrupted; PORT defaults to 19530) and by the test session (``conftest.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

PID_DIR_ENV = "MILVUS_SERVER_PID_DIR"
# The wheel's template resolves these ``*_port`` keys; we add the metrics port and etcd's peer port.
PORT_KEYS = (
    "etcd_port",
    "root_coord_port",
    "proxy_port",
    "proxy_internal_port",
    "query_coord_port",
    "query_node_port",
    "index_coord_port",
    "index_node_port",
    "data_coord_port",
    "data_node_port",
)
EXTRA_PORTS = ("metrics_port", "etcd_peer_port")
#: ``tuned=True``: (text of the wheel's template, its replacement); every one must match once.
TEST_TUNING = (
    ("  timeTickInterval: 200 #", "  timeTickInterval: 50 #"),  # proxy: the time tick strong reads wait for
    (
        "  distPullInterval: 500\n",  # query coord: how often it pulls the query node's distribution
        "  distPullInterval: 100\n  checkChannelInterval: 100\n  checkSegmentInterval: 300\n",  # 1000, 3000 ms
    ),
    ("\nindexCoord:\n", "\nindexCoord:\n  scheduler:\n    interval: 100\n"),  # index build scheduling: 1000 ms
)

#: ``tuned=True``: lines added to the embedded etcd's configuration. CI failed once on a loaded
#: machine with ``etcdserver: request timed out`` after 7.0 s on a ``create_collection``: etcd's
#: request timeout is 5 s + 2 x its election timeout (1 s by default), and each write waits for a
#: WAL fsync. A test server's data need not survive a machine crash (a killed *process* loses
#: nothing: the writes are in the page cache), so its etcd skips the fsync, and a longer election
#: timeout (one member: no election to lose) gives a slow write 10 s instead of 7 s.
TEST_ETCD_TUNING = "unsafe-no-fsync: true\nelection-timeout: 2500\nheartbeat-interval: 250\n"


def free_ports(count: int, preferred: dict[int, int] | None = None) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (the OS picks them; ``preferred`` index → port)."""
    socks: list[socket.socket] = []
    ports: list[int] = []
    try:
        for i in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind(("127.0.0.1", (preferred or {}).get(i, 0)))
            ports.append(sock.getsockname()[1])
    finally:
        for sock in socks:
            sock.close()
    return ports


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the Go servers do: TIME_WAIT is free
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class MilvusServerHandle:
    """One Milvus standalone process in ``base_dir``, on its own ports.

    Args:
        base_dir: the server's directory (binary, configs, data, logs, ``ports.json``).
        port: the gRPC port; ``None`` picks a free one (kept for restarts in the same directory).
        session_ttl: Milvus' session lease in seconds (the wheel's 30 if ``None``); a restart after
            a kill waits for the old sessions' leases to expire.
        tuned: shorter internal polling periods for tests (:data:`TEST_TUNING`, see the module's
            docstring); ``False`` keeps the wheel's configuration.
    """

    def __init__(
        self, base_dir: Path, *, port: int | None = None, session_ttl: int | None = None, tuned: bool = False
    ) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.session_ttl = session_ttl
        self.tuned = tuned
        self.proc: subprocess.Popen[bytes] | None = None
        self.ports: dict[str, int] = {}
        self.startup_seconds = 0.0
        self._fds: list = []

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.ports['proxy_port']}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def _resolve_ports(self) -> dict[str, int]:
        saved = self.base_dir / "ports.json"
        keys = (*PORT_KEYS, *EXTRA_PORTS)
        if saved.exists():
            ports = {k: int(v) for k, v in json.loads(saved.read_text()).items()}
            if set(ports) == set(keys) and all(_port_free(p) for p in ports.values()):
                return ports
        preferred = {keys.index("proxy_port"): self.port} if self.port else None
        ports = dict(zip(keys, free_ports(len(keys), preferred)))
        saved.write_text(json.dumps(ports))
        return ports

    def _write_configs(self) -> Path:
        import milvus

        wheel_template = Path(milvus.__file__).parent / "data" / "config.yaml.template"
        text = wheel_template.read_text(encoding="utf-8")
        etcd_conf = self.base_dir / "configs" / "embed-etcd.yaml"
        etcd_conf.parent.mkdir(parents=True, exist_ok=True)
        client = f"http://127.0.0.1:{self.ports['etcd_port']}"
        peer = f"http://127.0.0.1:{self.ports['etcd_peer_port']}"
        etcd_conf.write_text(
            f"name: default\nlisten-client-urls: {client}\nadvertise-client-urls: {client}\n"
            f"listen-peer-urls: {peer}\ninitial-advertise-peer-urls: {peer}\n"
            f"initial-cluster: default={peer}\n" + (TEST_ETCD_TUNING if self.tuned else ""),
            encoding="utf-8",
        )
        anchor = "  use:\n    embed: true"
        if anchor not in text:
            raise RuntimeError(f"unexpected Milvus config template {wheel_template}: no embedded etcd section")
        text = text.replace(anchor, f"  config:\n    path: {etcd_conf}\n{anchor}", 1)
        for key in PORT_KEYS:  # literal ports: the wheel's resolver would refuse ports in TIME_WAIT after a kill
            text, n = re.subn(r"\{\{\s*" + key + r"\(int\):\s*\d+\s*\}\}", str(self.ports[key]), text)
            if n != 1:
                raise RuntimeError(f"unexpected Milvus config template {wheel_template}: {n} places for {key}")
        if self.session_ttl is not None:
            text = text.replace("    ttl: 30 #", f"    ttl: {int(self.session_ttl)} #", 1)
        for old, new in TEST_TUNING if self.tuned else ():
            if text.count(old) != 1:
                raise RuntimeError(f"unexpected Milvus config template {wheel_template}: {text.count(old)} of {old!r}")
            text = text.replace(old, new, 1)
        template = self.base_dir / "configs" / "template.yaml"
        template.write_text(text, encoding="utf-8")
        return template

    def start(self, timeout: float = 180.0) -> str:
        """Start the server (also again in the same directory after a kill); returns its URI."""
        import milvus
        from milvus import MilvusServer, MilvusServerConfig

        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError(f"the Milvus server in {self.base_dir} is already running (pid {self.proc.pid})")
        started = time.perf_counter()
        self.ports = self._resolve_ports()
        config = MilvusServerConfig(template=str(self._write_configs()))
        config.glog_conf_file = str(Path(milvus.__file__).parent / "data" / "glog.conf")  # unset with a template
        server = MilvusServer(config, wait_for_started=False)
        server.set_base_dir(str(self.base_dir))
        server.webservice_port = self.ports["metrics_port"]
        server.start()
        self.ports["metrics_port"] = server.webservice_port  # the wheel moves it if it is taken
        self.proc, self._fds = server.server_proc, list(server.proc_fds.values())
        server.server_proc, server.proc_fds = None, {}  # the handle owns the process from here on
        self._record_pid()
        self._wait_healthy(started, timeout)
        self.startup_seconds = time.perf_counter() - started
        return self.uri

    def _wait_healthy(self, started: float, timeout: float) -> None:
        health = f"http://127.0.0.1:{self.ports['metrics_port']}/healthz"
        assert self.proc is not None
        while time.perf_counter() - started < timeout:
            if self.proc.poll() is not None:  # died (port taken, bad config...)
                break
            try:
                with urllib.request.urlopen(health, timeout=2) as resp:
                    if b"OK" in resp.read():
                        time.sleep(1)  # as the wheel does: let the proxy settle
                        return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        log = self.base_dir / "logs" / "milvus-stderr.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"Milvus server did not start within {timeout:.0f}s; its log ends with:\n{tail}")

    def _pid_file(self) -> Path | None:
        pid_dir = os.environ.get(PID_DIR_ENV)
        if not pid_dir or self.proc is None:
            return None
        return Path(pid_dir) / f"{self.proc.pid}.pid"

    def _record_pid(self) -> None:
        (self.base_dir / "server.pid").write_text(f"{self.proc.pid if self.proc else ''}\n")
        pid_file = self._pid_file()
        if pid_file is not None:
            pid_file.write_text(f"{self.proc.pid if self.proc else ''} {self.base_dir}\n")

    def _forget(self) -> None:
        pid_file = self._pid_file()
        if pid_file is not None:
            pid_file.unlink(missing_ok=True)
        (self.base_dir / "server.pid").unlink(missing_ok=True)
        for fd in self._fds:
            fd.close()
        self._fds = []
        self.proc = None

    def kill(self) -> None:
        """SIGKILL the server now (a crash, for fault injection); ``start()`` restarts it here."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._forget()

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the server, SIGKILL it after ``grace`` seconds; only this handle's process."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self._forget()


@contextlib.contextmanager
def running_server(base_dir: Path, *, port: int | None = None) -> Iterator[MilvusServerHandle]:
    """A started server, stopped on exit."""
    handle = MilvusServerHandle(base_dir, port=port)
    handle.start()
    try:
        yield handle
    finally:
        handle.stop()


if __name__ == "__main__":
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else ".milvus-server")
    with running_server(directory, port=int(sys.argv[2]) if len(sys.argv) > 2 else 19530) as server:
        print(server.uri, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
