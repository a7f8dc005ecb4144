"""``donjon serve --workers N``: N processes serve one port, each a full node on one store.

The supervisor (the process ``donjon serve`` started) starts the embedded store once, when no
``DONJON_REDIS_URL`` names one, then forks N workers. Each worker is an ordinary node (the
multi-node design: its own cache, stream reader and bot scheduler) on the supervisor's store,
serving one address. By default (``DONJON_WORKER_ROUTING=game``) a router process accepts on
it and hands every connection of one game to the same worker (:mod:`service.run.routing`), as a
load balancer routes by game between nodes; with ``kernel`` the workers listen on the address
themselves with ``SO_REUSEPORT`` and the kernel spreads the connections. Either way a command
taken on one worker reaches the spectators on another through the stream, as between any two
nodes. The supervisor holds a socket bound to that address for as long as it runs (the router's
listening socket), so port ``0`` resolves once, the port stays the workers', and connections
wait in its backlog while a router restarts.

* SIGTERM or SIGINT to the supervisor: every worker gets SIGTERM and closes its sockets
  (``going away``), then the supervisor stops the embedded store; a worker still running after
  :data:`STOP_GRACE` seconds is killed.
* A worker (or the router) killed by a signal (SIGKILL, the OOM killer) is logged and started
  again after :data:`RESTART_DELAY`; the others serve on meanwhile, the router handing the
  dead worker's games to the next worker. Its socket's pending connections are
  lost, never a command that was acknowledged (acks follow the fsynced append). A worker that
  exits by itself (it refused its settings, or failed) stops them all with its exit status, as
  the one process of ``--workers 1`` would end.
* A supervisor that dies takes its workers with it (``PR_SET_PDEATHSIG``), and the embedded
  store too, as for a single process.

Workers are forked, not spawned: they start from the supervisor's memory (the engines, the
settings), and nothing in the supervisor runs an event loop or a thread before the fork.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from events.embedded import EmbeddedServer
from events.errors import StoreUnavailable
from service.ops.logs import get_logger
from service.ops.scrape import WorkerPlace
from service.ops.settings import Secret, Settings
from service.run.archiving import embedded_archive_url
from service.run.routing import Router
from service.run.supervise import GAVE_UP, RestartBudget

__all__ = ["RESTART_DELAY", "ROUTER", "STOP_GRACE", "Supervisor", "cgroup_cpu_quota", "default_workers"]

STOP_GRACE = 10.0
"""Seconds the workers have, on top of their drain (``DONJON_DRAIN_MS``), to close their sockets
and stop after SIGTERM before they are killed."""
RESTART_DELAY = 1.0
"""Seconds between a worker's death and its replacement, so a worker that cannot start does
not spin."""
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
ROUTER = -1
"""The router's index among the supervisor's children (workers are 0, 1, ...)."""
BACKLOG = 1024
"""Connections the router's socket queues (while the router restarts, too)."""


def default_workers(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """One worker per core this process may use: the cores it may run on, capped by the cgroup's
    CPU quota (a container limited to 2 CPUs on a 64-core host gets 2 workers, not 64)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup)
    if quota is not None:
        cores = min(cores, math.ceil(quota))
    return max(1, cores)


def cgroup_cpu_quota(cgroup: Path) -> float | None:
    """The CPUs the cgroup's quota allows (cgroup v2 ``cpu.max``, else v1 ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us``), or None when there is no quota or no cgroup file to read.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "cpu.max").write_text("150000 100000")
    >>> cgroup_cpu_quota(folder)
    1.5
    >>> _ = (folder / "cpu.max").write_text("max 100000")
    >>> cgroup_cpu_quota(folder) is None
    True
    """
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (cgroup / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    if quota in ("max", "-1"):
        return None
    try:
        cpus = int(quota) / int(period)
    except (ValueError, ZeroDivisionError):
        return None
    return cpus if cpus > 0 else None


def _prctl(option: int, value: object) -> None:
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(option, value)


def _die_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _name_process(name: str) -> None:
    """Name this process as ``ps``, ``top`` and ``/proc/<pid>/comm`` show it (``donjon-router``,
    ``donjon-worker-0``): an operator tells the router and the workers apart at a glance."""
    _prctl(_PR_SET_NAME, name.encode()[:15])


def _reserve(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with ``SO_REUSEPORT``: it fixes the port (``0`` included)
    for the workers. Not listening yet: with routing by game the router listens on it; with the
    kernel's spreading it takes no connection itself."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


class Supervisor:
    """Starts the store once and keeps ``workers`` worker processes running until told to stop."""

    def __init__(self, settings: Settings, workers: int, serve: Callable[[Settings, WorkerPlace], int]) -> None:
        self.settings = settings
        self.workers = workers
        self.serve = serve
        """Runs one worker's node (``donjon serve`` with one worker) and returns its exit status."""
        self.sockets = Path(tempfile.mkdtemp(prefix="donjon-workers-"))
        """Where each worker answers the others' scrapes (:mod:`service.ops.scrape`)."""
        self.log = get_logger()
        self.pids: dict[int, int] = {}
        """Worker pid -> its index (the index names its node: ``<node_id>-<index>``)."""
        self.keeper: socket.socket | None = None
        """The socket bound to the port while :meth:`run` runs (the router's listening socket)."""
        self._stopping = False
        self._status = 0

    def run(self) -> int:
        """Serve until SIGTERM/SIGINT; 0 after a clean stop, else the exit status of a worker
        that ended by itself (2: a setting or dataset it cannot use), as one process would."""
        keeper = self.keeper = _reserve(self.settings.host, self.settings.port)
        port = keeper.getsockname()[1]
        store: EmbeddedServer | None = None
        settings = dataclasses.replace(self.settings, port=port)
        if settings.embedded:
            store = EmbeddedServer(settings.data_dir, settings.fsync).start()
            self.log.info("embedded.started", data_dir=str(settings.data_dir), fsync=settings.fsync)
            # The workers share the store this process started, and so its folder's archive.
            settings = dataclasses.replace(
                settings, redis_url=Secret(store.url), archive_url=embedded_archive_url(settings)
            )
        previous = {sig: signal.signal(sig, self._on_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            for index in range(self.workers):
                self._start(settings, index)
            if self.routed:
                keeper.listen(BACKLOG)
                self._start(settings, ROUTER)
            self.log.info(
                "serve.workers", workers=self.workers, pids=sorted(self.pids), port=port,
                routing=self.settings.worker_routing,
            )
            self._watch(settings, store)
        finally:
            self._stop_workers()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            keeper.close()
            shutil.rmtree(self.sockets, ignore_errors=True)
            if store is not None:
                store.stop()
                self.log.info("embedded.stopped", data_dir=str(settings.data_dir))
        return self._status

    @property
    def routed(self) -> bool:
        """Whether a router hands each game's connections to one worker (else the kernel spreads them)."""
        return self.settings.worker_routing == "game"

    def _on_stop(self, _signum: int, _frame: FrameType | None) -> None:
        self._stopping = True

    def _start(self, settings: Settings, index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker, or the router
            status = 1
            try:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)
                _die_with_parent()
                _name_process("donjon-router" if index == ROUTER else f"donjon-worker-{index}")
                status = self._route() if index == ROUTER else self._serve_as(settings, index)
            except Exception:  # logged here: os._exit below skips the interpreter's own report
                self.log.exception("serve.worker_failed", worker=index)
            finally:
                os._exit(status)
        self.pids[pid] = index

    def _serve_as(self, settings: Settings, index: int) -> int:
        worker = dataclasses.replace(settings, node_id=f"{settings.node_id}-{index}")
        return self.serve(worker, WorkerPlace(index, self.workers, self.sockets, routed=self.routed))

    def _route(self) -> int:
        stop = False

        def on_stop(_signum: int, _frame: FrameType | None) -> None:
            nonlocal stop
            stop = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_stop)
        assert self.keeper is not None  # bound by run() before any child starts
        channels = [WorkerPlace(index, self.workers, self.sockets).route_socket for index in range(self.workers)]
        return Router(self.keeper, channels, lambda: stop).run()

    def _watch(self, settings: Settings, store: EmbeddedServer | None) -> None:
        """Wait for worker deaths until asked to stop; start a replacement for each. Keep the
        embedded store alive too (:mod:`service.run.supervise`)."""
        budget = RestartBudget()
        while not self._stopping:
            if store is not None and not self._keep_alive(store, budget):
                return
            ended = self._ended()
            if ended is None:
                time.sleep(0.1)
                continue
            pid, status = ended
            index = self.pids.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            self.log.warning("serve.worker_exited", pid=pid, worker=index, status=code)
            if code > 0:  # it ended by itself (refused its settings, failed): so would the others
                self._status, self._stopping = code, True
                return
            deadline = time.monotonic() + RESTART_DELAY
            while not self._stopping and time.monotonic() < deadline:
                time.sleep(0.05)
            if not self._stopping:
                self._start(settings, index)
                self.log.info("serve.worker_restarted", worker=index, pids=sorted(self.pids))

    def _keep_alive(self, store: EmbeddedServer, budget: RestartBudget) -> bool:
        """Start the store again if it died; False (and the status :data:`GAVE_UP`) when it
        keeps dying or does not start."""
        status = store.exited
        if status is None:
            return True
        self.log.warning("embedded.died", status=status, data_dir=str(store.data_dir))
        reason = budget.spent
        if budget.died(time.monotonic()):
            try:
                store.restart()
            except (StoreUnavailable, OSError) as exc:
                reason = f"the embedded store did not start again: {exc}"
            else:
                self.log.info("embedded.restarted", data_dir=str(store.data_dir), pid=store.pid)
                return True
        self.log.error("embedded.gave_up", reason=reason, status=GAVE_UP)
        self._status, self._stopping = GAVE_UP, True
        return False

    def _ended(self) -> tuple[int, int] | None:
        """A worker that ended and its wait status (only workers: the store is a child too)."""
        for pid in self.pids:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return pid, 0
            if done == pid:
                return pid, status
        return None

    def _stop_workers(self) -> None:
        for pid in self.pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.drain_ms / 1000 + STOP_GRACE
        while self.pids and time.monotonic() < deadline:
            ended = self._ended()
            if ended is None:
                time.sleep(0.05)
            else:
                del self.pids[ended[0]]
        for pid in list(self.pids):
            _signal(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            del self.pids[pid]


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
