"""Settings, read once from the environment (``DONJON_`` prefix) and then passed around.

Every key has a cast and a default; a value that does not cast raises :class:`SettingsError`
naming the key. Anything secret is wrapped in :class:`Secret`, so that it never shows up in a
log line or a repr. The CLI overrides some keys with its flags (``--host``, ``--port``,
``--data-dir``, ``--fsync``).

================================  ==========================  =====================================
variable                          default                     meaning
================================  ==========================  =====================================
``DONJON_REDIS_URL``              (unset: embedded Valkey)    Redis 7+/Valkey URL of a shared store
``DONJON_REDIS_CLUSTER``          ``auto``                    ``auto`` (ask the server: ``INFO cluster``),
                                                              ``yes`` (Redis Cluster), ``no`` (one server)
``DONJON_DATA_DIR``               ``./donjon-data``           the embedded server's data folder
``DONJON_FSYNC``                  ``always``                  ``always`` or ``everysec`` (embedded)
``DONJON_HOST``                   ``127.0.0.1``               HTTP bind address
``DONJON_PORT``                   ``8080``                    HTTP port
``DONJON_LOG_FORMAT``             ``auto``                    ``auto`` (console on a TTY), ``json``, ``console``
``DONJON_LOG_LEVEL``              ``info``                    ``debug``, ``info``, ``warning``, ``error``
``DONJON_WS_MAX_FRAME``           ``65536``                   largest client frame in bytes
``DONJON_WS_RATE``                ``20``                      frames per second per socket sent before
                                                              the answer to the previous one
``DONJON_WS_BURST``               ``40``                      burst allowance of that rate limit
``DONJON_WS_OUTBOX``              ``1000``                    frames queued to one slow socket before closing it
``DONJON_WS_SPECTATOR_BATCH_MS``  ``20``                      how long a spectator's updates may wait to leave
                                                              together (0: never)
``DONJON_HTTP_MAX_BODY``          ``65536``                   largest HTTP request body in bytes
``DONJON_COMMAND_RETRIES``        ``5``                       decide/append attempts on a version conflict
``DONJON_READ_BLOCK_MS``          ``1000``                    how often the node's stream reader also
                                                              reads 256 watched games in turn, whatever
                                                              the append notices say
``DONJON_NODE_ID``                (random)                    this process's name in logs and metrics
``DONJON_CASTLE_DATA``            (unset: shipped dataset)    a dataset file for ``castle`` (see below)
``DONJON_BOT_DELAY_MS``           ``0``                       pause between two moves of a game's bots
``DONJON_BOT_TAKEOVER_MS``        ``3000``                    how long a bot's move may be overdue
                                                              before a node other than the last
                                                              appender makes it
``DONJON_STORE_TIMEOUT_MS``       ``2000``                    how long one store call waits for
                                                              the server: a hung store fails a
                                                              command or a request with
                                                              ``store_unavailable`` after that
``DONJON_READY_TIMEOUT_MS``       ``1000``                    how long ``/readyz`` waits for the
                                                              store's PING
``DONJON_DURABILITY``             ``auto``                    ``local``: an ack means the store's
                                                              server has the append; ``replica``: a
                                                              replica has it too (``WAIT``); ``auto``:
                                                              ``replica`` when every master has a
                                                              replica at start, else ``local``
``DONJON_REPLICA_TIMEOUT_MS``     ``1000``                    at ``replica``, how long an ack waits
                                                              for the replica before the command
                                                              fails with ``store_unavailable``
``DONJON_KEYS_DIR``              (unset: ``donjon-keys``     the folder of the node's key files
                                  beside the data folder)     (``seed.key``), never the data folder
``DONJON_SEED_KEY``              (unset: ``seed.key`` in     64 hex digits: the node key that seals
                                  the keys folder)            game seeds and the deployment's signing
                                                              keys at rest; the same on every node
                                                              sharing a store
``DONJON_SIGNING_KEY``           (unset)                     64 hex digits: an Ed25519 private key
                                                              imported into the store's keyring as
                                                              the deployment's current signing key
                                                              (once: a later rotation holds)
``DONJON_CORS_ORIGINS``           (empty: same-origin only)   origins whose pages may call the API
                                                              and open sockets (``*``: any)
``DONJON_BOT_SWEEP_MS``           ``1000``                    how often a node looks in the store's
                                                              due-bots index for bot games nobody
                                                              drives (0: never)
``DONJON_CACHE_GAMES``            ``5000``                    most games a node keeps folded in memory
``DONJON_CACHE_BYTES``            ``268435456``               most estimated bytes of those games
``DONJON_AWAY_MS``                ``120000``                  how long a seat has no socket open
                                                              before it is shown as away
``DONJON_WORKERS``                ``0`` (one per core)        ``donjon serve`` processes on one port
``DONJON_WORKER_ROUTING``         ``game``                    with several workers: ``game`` hands
                                                              every connection of one game to the
                                                              same worker; ``kernel`` lets the
                                                              kernel spread them (``SO_REUSEPORT``)
``DONJON_DRAIN_MS``               ``2000``                    on SIGTERM, how long the node refuses
                                                              new games and sockets (``/readyz`` 503)
                                                              before it closes its sockets, so that
                                                              a load balancer stops sending it more
``DONJON_ARCHIVE``                ``on``                      ``on``/``off``: move finished games to
                                                              the archive (docs/store.md)
``DONJON_ARCHIVE_URL``            (unset: ``archive.sqlite3`` ``postgresql://...`` (or
                                  in the data folder)         ``sqlite:///path``); unset with a shared
                                                              store: no archiving (each node would
                                                              keep its own file)
``DONJON_ARCHIVE_AFTER_S``        ``300``                     how long a finished game stays live
``DONJON_ARCHIVE_EVERY_S``        ``30``                      how often a node runs an archiving pass
================================  ==========================  =====================================

``DONJON_CASTLE_DATA`` names a corrected dataset file for The Castle (``games.castle.DATA_ENV``).
The file is read once, when the app is built; the service refuses to start, with the dataset's
message listing every problem, when the file is unreadable or invalid (see :mod:`service.run.served`).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from events.embedded import FsyncMode

__all__ = ["Secret", "Settings", "SettingsError"]

PREFIX = "DONJON_"


class SettingsError(ValueError):
    """A setting is missing or does not cast; the message names the variable."""


class Secret:
    """A string that must not leak: ``str()`` and ``repr()`` show stars, ``.reveal()`` the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)


def _choice(*allowed: str) -> Callable[[str], str]:
    def cast(raw: str) -> str:
        value = raw.strip().lower()
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return value

    return cast


REDIS_SCHEMES = ("redis", "rediss", "unix")
ANY_ORIGIN = "*"


def _redis_url(raw: str) -> Secret | None:
    """A store URL redis-py can open; checked here so a typo stops the start with one line."""
    if not raw.strip():
        return None
    scheme = urlsplit(raw.strip()).scheme
    if scheme not in REDIS_SCHEMES:
        schemes = ", ".join(f"{name}://" for name in REDIS_SCHEMES)
        raise ValueError(f"the URL must start with {schemes} (got {scheme + '://' if scheme else 'no scheme'})")
    return Secret(raw.strip())


def _node_key(raw: str) -> Secret | None:
    """A node key (seed sealing, signing): 64 hex digits (checked here, so a typo stops the start)."""
    if not raw.strip():
        return None
    try:
        key = bytes.fromhex(raw.strip())
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ValueError("the key must be 64 hex digits (32 bytes)")
    return Secret(raw.strip())


ARCHIVE_SCHEMES = ("postgresql", "postgres", "sqlite")


def _switch(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("on", "yes", "true", "1"):
        return True
    if value in ("off", "no", "false", "0"):
        return False
    raise ValueError("expected on or off")


def _archive_url(raw: str) -> Secret | None:
    """``postgresql://...`` or ``sqlite:///path``; checked here so a typo stops the start."""
    if not raw.strip():
        return None
    scheme = urlsplit(raw.strip()).scheme
    if scheme not in ARCHIVE_SCHEMES:
        got = scheme + "://" if scheme else "no scheme"
        raise ValueError(f"the URL must start with postgresql:// or sqlite:/// (got {got})")
    return Secret(raw.strip())


def parse_origins(raw: str) -> tuple[str, ...]:
    """``DONJON_CORS_ORIGINS``: comma-separated ``scheme://host[:port]``, or ``*``."""
    origins = tuple(part.strip().rstrip("/") for part in raw.split(",") if part.strip())
    for origin in origins:
        parts = urlsplit(origin)
        if origin != ANY_ORIGIN and (
            parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query
        ):
            raise ValueError(f"{origin!r} is not an origin: expected scheme://host[:port] or *")
    return origins


def _optional_path(raw: str) -> Path | None:
    return Path(raw.strip()) if raw.strip() else None


@dataclass(frozen=True, slots=True)
class Settings:
    """The service's configuration. Build with :meth:`from_env`; tests build it directly."""

    redis_url: Secret | None = field(default=None, metadata={"cast": _redis_url, "secret": True})
    redis_cluster: str = field(default="auto", metadata={"cast": _choice("auto", "yes", "no")})
    data_dir: Path = field(default=Path("donjon-data"), metadata={"cast": Path})
    keys_dir: Path | None = field(default=None, metadata={"cast": _optional_path})
    """The node's key files; ``None``: :attr:`key_folder`, beside the data folder."""
    fsync: FsyncMode = field(default="always", metadata={"cast": _choice("always", "everysec")})
    host: str = field(default="127.0.0.1", metadata={"cast": str})
    port: int = field(default=8080, metadata={"cast": int})
    log_format: str = field(default="auto", metadata={"cast": _choice("auto", "json", "console")})
    log_level: str = field(default="info", metadata={"cast": _choice("debug", "info", "warning", "error")})
    ws_max_frame: int = field(default=65536, metadata={"cast": int})
    ws_rate: float = field(default=20.0, metadata={"cast": float})
    ws_burst: float = field(default=40.0, metadata={"cast": float})
    ws_outbox: int = field(default=1000, metadata={"cast": int})
    ws_spectator_batch_ms: int = field(default=20, metadata={"cast": int})
    """How long a spectator's updates may wait to leave together (:mod:`service.edge.spectator_batch`); 0: never."""
    http_max_body: int = field(default=65536, metadata={"cast": int})
    command_retries: int = field(default=5, metadata={"cast": int})
    read_block_ms: int = field(default=1000, metadata={"cast": int})
    node_id: str = field(default_factory=lambda: secrets.token_hex(4), metadata={"cast": str})
    castle_data: Path | None = field(default=None, metadata={"cast": _optional_path})
    bot_delay_ms: int = field(default=0, metadata={"cast": int})
    bot_takeover_ms: int = field(default=3000, metadata={"cast": int})
    store_timeout_ms: int = field(default=2000, metadata={"cast": int})
    durability: str = field(default="auto", metadata={"cast": _choice("auto", "local", "replica")})
    """What an ack promises (``events.store.EventStore.connect``): the server's disk, or a replica too."""
    replica_timeout_ms: int = field(default=1000, metadata={"cast": int})
    ready_timeout_ms: int = field(default=1000, metadata={"cast": int})
    seed_key: Secret | None = field(default=None, metadata={"cast": _node_key, "secret": True})
    signing_key: Secret | None = field(default=None, metadata={"cast": _node_key, "secret": True})
    cors_origins: tuple[str, ...] = field(default=(), metadata={"cast": parse_origins})
    bot_sweep_ms: int = field(default=1000, metadata={"cast": int})
    cache_games: int = field(default=5000, metadata={"cast": int})
    cache_bytes: int = field(default=256 * 1024 * 1024, metadata={"cast": int})
    away_ms: int = field(default=120_000, metadata={"cast": int})
    workers: int = field(default=0, metadata={"cast": int})
    """``donjon serve`` processes on the one port (``service.run.workers``); 0: one per core."""
    worker_routing: str = field(default="game", metadata={"cast": _choice("game", "kernel")})
    """How those workers share the port: a router hands each game's connections to one worker
    (``game``, :mod:`service.run.routing`), or the kernel spreads them (``kernel``, ``SO_REUSEPORT``)."""
    drain_ms: int = field(default=2000, metadata={"cast": int})
    archive: bool = field(default=True, metadata={"cast": _switch})
    """Whether finished games move to the archive (``service.run.archiving``)."""
    archive_url: Secret | None = field(default=None, metadata={"cast": _archive_url, "secret": True})
    archive_after_s: int = field(default=300, metadata={"cast": int})
    archive_every_s: int = field(default=30, metadata={"cast": int})
    """On SIGTERM, how long the node says it is draining before it closes its sockets (``service.run.drain``)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read every ``DONJON_*`` key once; ``overrides`` (e.g. CLI flags) win over the environment."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in fields(cls):
            key = PREFIX + spec.name.upper()
            if key not in env:
                continue
            try:
                values[spec.name] = spec.metadata["cast"](env[key])
            except (TypeError, ValueError) as exc:
                shown = key if spec.metadata.get("secret") else f"{key}={env[key]!r}"  # a URL may hold a password
                raise SettingsError(f"{shown} is not valid: {exc}") from None
        values.update({key: value for key, value in overrides.items() if value is not None})
        settings = cls(**values)
        settings.check()
        return settings

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def check(self) -> None:
        """Raise :class:`SettingsError` naming the first value out of range."""
        positive = (
            "ws_max_frame", "ws_rate", "ws_burst", "ws_outbox", "http_max_body", "command_retries", "cache_games",
            "cache_bytes",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise SettingsError(f"{PREFIX}{name.upper()} must be positive, not {getattr(self, name)!r}")
        if not 0 <= self.port <= 65535:
            raise SettingsError(f"{PREFIX}PORT must be 0-65535, not {self.port!r}")
        at_least_one = (
            "store_timeout_ms", "ready_timeout_ms", "replica_timeout_ms", "read_block_ms", "bot_takeover_ms",
            "archive_every_s", "away_ms",
        )
        for name in at_least_one:
            if getattr(self, name) < 1:
                raise SettingsError(f"{PREFIX}{name.upper()} must be at least 1, not {getattr(self, name)!r}")
        for name in ("bot_delay_ms", "bot_sweep_ms", "drain_ms", "archive_after_s", "ws_spectator_batch_ms"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{PREFIX}{name.upper()} must be 0 or more, not {getattr(self, name)!r}")
        if self.workers < 0:
            raise SettingsError(f"{PREFIX}WORKERS must be 0 (one per core) or more, not {self.workers!r}")

    @property
    def cluster(self) -> bool | None:
        """``DONJON_REDIS_CLUSTER`` for :meth:`events.store.EventStore.connect`: ``None`` asks the server."""
        return {"auto": None, "yes": True, "no": False}[self.redis_cluster]

    @property
    def key_folder(self) -> Path:
        """``DONJON_KEYS_DIR``, else the folder ``donjon-keys`` beside the data folder (a copy of
        the data folder alone holds no key)."""
        if self.keys_dir is not None:
            return self.keys_dir
        return Path(self.data_dir).absolute().parent / "donjon-keys"

    @property
    def embedded(self) -> bool:
        """No shared store named: the service runs its own Valkey in ``data_dir``."""
        return self.redis_url is None
