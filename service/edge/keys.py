"""The typed application keys, declared in one place (aiohttp ``AppKey``)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

from events.embedded import EmbeddedServer
from events.store import EventStore
from games.base import Engine
from service.edge.reader import Node
from service.edge.spectator_batch import SpectatorBatch
from service.fairness.deployment_keys import DeploymentKeys
from service.fairness.seed_vault import SeedVault
from service.ops.lifecycle import Lifecycle
from service.ops.metrics import Metrics
from service.ops.scrape import WorkerPlace
from service.ops.settings import Settings
from service.play.game_service import GameService

__all__ = [
    "SETTINGS", "ENGINES", "METRICS", "STORE", "EMBEDDED", "SERVICE", "NODE", "SOCKETS", "CLOCK", "VAULT",
    "DEPLOYMENT_KEYS", "LIFECYCLE", "WORKER", "SPECTATOR_BATCH",
]

SETTINGS = web.AppKey("settings", Settings)
# A generic type as AppKey's second argument is not a type mypy can infer from: annotate instead.
ENGINES: web.AppKey[Mapping[str, Engine[Any]]] = web.AppKey("engines")
METRICS = web.AppKey("metrics", Metrics)
STORE = web.AppKey("store", EventStore)
EMBEDDED = web.AppKey("embedded", EmbeddedServer)
"""The :class:`events.embedded.EmbeddedServer` when the service started one, else absent."""
SERVICE = web.AppKey("service", GameService)
NODE = web.AppKey("node", Node)
SOCKETS: web.AppKey[weakref.WeakSet[web.WebSocketResponse]] = web.AppKey("sockets")
"""Open websockets, closed with GOING_AWAY on shutdown."""
SPECTATOR_BATCH = web.AppKey("spectator_batch", SpectatorBatch)
"""Where spectators' updates wait to leave together (:mod:`service.edge.spectator_batch`); absent
when ``DONJON_WS_SPECTATOR_BATCH_MS`` is 0."""
CLOCK: web.AppKey[Callable[[], int]] = web.AppKey("clock")
"""The node's clock, ``() -> int`` ms since the epoch (the wall clock unless a test injects one)."""
VAULT = web.AppKey("vault", SeedVault)
"""Seals game seeds at rest with the node key (:mod:`service.fairness.seed_vault`)."""
DEPLOYMENT_KEYS = web.AppKey("deployment_keys", DeploymentKeys)
"""The deployment's keyring (:mod:`service.fairness.deployment_keys`): its current key signs
exports, ``GET /keys`` lists it; set once the store is connected."""
LIFECYCLE = web.AppKey("lifecycle", Lifecycle)
"""Whether the node drains, and why and with which status it stops (:mod:`service.run.drain`)."""
WORKER = web.AppKey("worker", WorkerPlace)
"""This worker's place among a ``donjon serve --workers N``'s, else absent (:mod:`service.ops.scrape`)."""
