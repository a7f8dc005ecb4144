"""``create_app(settings, engines=None)``: the aiohttp application, one cleanup context per resource.

Resources start in dependency order and stop in reverse, and only those that started:

1. the embedded Valkey server, when ``DONJON_REDIS_URL`` is not set (in ``settings.data_dir``);
2. the event store client (an :class:`~events.archive.reading.ArchivingStore`: it also reads the archive);
3. the deployment's keyring (:mod:`service.fairness.deployment_keys`: made by the first node to
   start on a new store, loaded by every other), then the archive and its passes (:mod:`service.run.archiving`);
4. the game service (command path, cache and bot tasks) and the node's stream reader.

The engines are :func:`service.run.served.served_engines`: ``DONJON_CASTLE_DATA`` swaps in an
operator's dataset for ``castle``, and an invalid one makes ``create_app`` raise
:class:`~service.ops.settings.SettingsError` with every problem of the file.

On shutdown every open websocket is closed with ``GOING_AWAY`` (1001) first.

>>> app = create_app(Settings(redis_url=Secret("redis://127.0.0.1:6379/0")))   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, cast

from aiohttp import web

from events.archive.reading import ArchivingStore
from events.embedded import EmbeddedServer
from events.errors import StoreUnavailable
from events.store import Durability, EventStore
from events.tasks import stop_task
from games.base import Engine
from games.tileboard import BOARD_COMPILED
from service.bots import bots_for
from service.edge.draining import refuse_new_work_while_draining
from service.edge.http import HANDLER_ARGS, error_middleware, setup_routes
from service.edge.keys import (
    CLOCK,
    DEPLOYMENT_KEYS,
    EMBEDDED,
    ENGINES,
    LIFECYCLE,
    METRICS,
    NODE,
    SERVICE,
    SETTINGS,
    SOCKETS,
    SPECTATOR_BATCH,
    STORE,
    VAULT,
    WORKER,
)
from service.edge.origins import add_cors_headers, origin_middleware
from service.edge.reader import Node
from service.edge.spectator_batch import SpectatorBatch
from service.edge.ws import websocket_handler
from service.fairness.deployment_keys import DeploymentKeys, KeyringError
from service.fairness.key_files import key_bytes
from service.fairness.seed_vault import SeedVault, load_or_create_key
from service.fairness.signing import old_signing_key
from service.ops.lifecycle import Lifecycle
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.ops.scrape import WorkerPlace
from service.ops.settings import Settings, SettingsError
from service.play.game_service import GameService, now_ms
from service.run.archiving import archiving
from service.run.drain import close_sockets
from service.run.served import served_engines
from service.run.supervise import watch_embedded
from service.web import setup_web

__all__ = ["create_app"]

log = get_logger()
_DETECT_FOR = 30.0


def create_app(
    settings: Settings | None = None,
    engines: Mapping[str, Engine[Any]] | None = None,
    clock: Callable[[], int] | None = None,
    worker: WorkerPlace | None = None,
) -> web.Application:
    """The service as an aiohttp app. ``engines`` defaults to :func:`games.default_engines`;
    ``clock`` (ms since the epoch; the wall clock by default) stamps events and drives the turn
    clocks, so tests can move time; ``worker`` places a worker of ``donjon serve --workers N``
    among the others (its ``/metrics`` shows them all); :class:`~service.ops.settings.SettingsError`
    when an operator dataset cannot be used."""
    settings = settings or Settings.from_env()
    app = web.Application(
        middlewares=[error_middleware, origin_middleware, refuse_new_work_while_draining],
        client_max_size=settings.http_max_body,
        handler_args=HANDLER_ARGS,
    )
    app.on_response_prepare.append(add_cors_headers)
    app[SETTINGS] = settings
    app[ENGINES] = served_engines(settings, engines)
    app[METRICS] = Metrics(settings.node_id, {name: sorted(bots_for(engine)) for name, engine in app[ENGINES].items()})
    app[SOCKETS] = weakref.WeakSet()
    if settings.ws_spectator_batch_ms > 0:
        app[SPECTATOR_BATCH] = SpectatorBatch(settings.ws_spectator_batch_ms / 1000)
    app[CLOCK] = clock or now_ms
    app[VAULT] = node_vault(settings)
    app[LIFECYCLE] = Lifecycle()
    if worker is not None:
        app[WORKER] = worker
    if settings.embedded:
        app.cleanup_ctx.append(_embedded_server)
    app.cleanup_ctx.append(_event_store)
    app.cleanup_ctx.append(_deployment_keys)
    app.cleanup_ctx.append(archiving)
    app.cleanup_ctx.append(_node)
    app.on_shutdown.append(_close_sockets)
    setup_routes(app)
    setup_web(app)
    app[METRICS].touch_routes(_timed_routes(app))
    return app


def node_vault(settings: Settings) -> SeedVault:
    """The node's seed vault, from ``DONJON_SEED_KEY`` or the keys folder's key file (moved there
    from the data folder when an older version left it there); :class:`SettingsError` naming the
    problem of a bad key."""
    setting = settings.seed_key.reveal() if settings.seed_key is not None else None
    try:
        return SeedVault(load_or_create_key(setting, Path(settings.data_dir), settings.key_folder))
    except (ValueError, OSError) as exc:
        raise SettingsError(f"seed key: {exc}") from None


def old_signing_key_of(settings: Settings) -> bytes | None:
    """The ``signing.key`` an older version left (in the data folder, moved to the keys folder),
    the first key of a keyring made now; :class:`SettingsError` for a damaged file."""
    try:
        return old_signing_key(Path(settings.data_dir), settings.key_folder)
    except (ValueError, OSError) as exc:
        raise SettingsError(f"signing key: {exc}") from None


async def open_deployment_keys(
    settings: Settings, store: EventStore, vault: SeedVault, clock: Callable[[], int]
) -> DeploymentKeys:
    """The deployment's keyring in ``store`` (made when there is none; ``DONJON_SIGNING_KEY``
    imported); :class:`SettingsError` when it does not open with this node's seed key."""
    imported = settings.signing_key.reveal() if settings.signing_key is not None else None
    try:
        keys = await DeploymentKeys.open(
            store.server, vault, clock, migrated=old_signing_key_of(settings),
            imported=None if imported is None else key_bytes(imported, "DONJON_SIGNING_KEY"),
        )
    except KeyringError as exc:
        raise SettingsError(f"signing key: {exc}") from None
    return keys


def _timed_routes(app: web.Application) -> list[tuple[str, str]]:
    """``(method, route)`` of every route whose latency ``/metrics`` shows (sockets are not timed)."""
    return [
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD" and route.handler is not websocket_handler
    ]


async def _embedded_server(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    data_dir = Path(settings.data_dir)
    server = EmbeddedServer(data_dir, settings.fsync)
    await server.start_async()
    app[EMBEDDED] = server
    log.info("embedded.started", data_dir=str(data_dir), fsync=settings.fsync)
    watch = asyncio.create_task(watch_embedded(server, app[LIFECYCLE]), name="donjon-embedded-watch")
    try:
        yield
    finally:
        await stop_task(watch)
        await _stop_embedded(server)
        log.info("embedded.stopped", data_dir=str(data_dir))


async def _stop_embedded(server: EmbeddedServer) -> None:
    await asyncio.to_thread(server.stop)


async def _event_store(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    url = app[EMBEDDED].url if settings.embedded else settings.redis_url.reveal()  # type: ignore[union-attr]
    cluster = False if settings.embedded else settings.cluster
    store = await _connect(url, cluster, f"donjon-{settings.node_id}", settings)
    app[STORE] = store
    try:
        yield
    finally:
        await store.close()


async def _deployment_keys(app: web.Application) -> AsyncIterator[None]:
    keys = await open_deployment_keys(app[SETTINGS], app[STORE], app[VAULT], app[CLOCK])
    app[DEPLOYMENT_KEYS] = keys
    log.info("keys.loaded", key_id=(await keys.signer()).id)
    yield


async def _connect(url: str, cluster: bool | None, client_name: str, settings: Settings) -> EventStore:
    """The store; with ``DONJON_REDIS_CLUSTER=auto`` the server is asked what it is, again and
    again for up to :data:`_DETECT_FOR` seconds while it does not answer (a store starting
    alongside the service), then the start fails with the store's message."""
    deadline = asyncio.get_running_loop().time() + _DETECT_FOR
    while True:
        try:
            store = await ArchivingStore.connect(
                url,
                call_timeout=settings.store_timeout_ms / 1000,
                cluster=cluster,
                client_name=client_name,
                durability=cast(Durability, settings.durability),
                replica_timeout_ms=settings.replica_timeout_ms,
            )
        except StoreUnavailable as exc:
            if asyncio.get_running_loop().time() > deadline:
                raise
            log.warning("store.connect_failed", error=str(exc))
            await asyncio.sleep(0.5)
            continue
        log.info("store.connected", cluster=store.cluster, durability=store.durability)
        return store


async def _node(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    service = GameService(
        app[STORE],
        app[ENGINES],
        metrics=app[METRICS],
        retries=settings.command_retries,
        bot_delay=settings.bot_delay_ms / 1000,
        bot_takeover=settings.bot_takeover_ms / 1000,
        bot_sweep=settings.bot_sweep_ms / 1000,
        cache_games=settings.cache_games,
        cache_bytes=settings.cache_bytes,
        clock=app[CLOCK],
        vault=app[VAULT],
    )
    node = Node(
        app[STORE], service, app[METRICS], block_ms=settings.read_block_ms,
        spectators_batched=SPECTATOR_BATCH in app,
    )
    app[SERVICE] = service
    app[NODE] = node
    node.start()
    service.start()
    engines = app[ENGINES]  # not inside sorted(): mypy would infer the key's type from sorted's argument
    log.info("node.started", node_id=settings.node_id, games=sorted(engines),
             tile_board="compiled" if BOARD_COMPILED else "python")
    try:
        yield
    finally:
        await service.close()
        await node.stop()


async def _close_sockets(app: web.Application) -> None:
    """Sockets a drain left open (or all of them, when the app stops without one)."""
    await close_sockets(app, b"server shutting down")
