"""The typed application keys, declared in one place (aiohttp ``AppKey``)."""

from __future__ import annotations

import weakref
from typing import Any, Mapping

from aiohttp import web

from games.base import Engine
from service.game_service import GameService
from service.metrics import Metrics
from service.node import Node
from service.seed_vault import SeedVault
from service.settings import Settings
from service.signing import NodeKey

__all__ = ["SETTINGS", "ENGINES", "METRICS", "STORE", "EMBEDDED", "SERVICE", "NODE", "SOCKETS", "VAULT", "SIGNING_KEY"]

SETTINGS = web.AppKey("settings", Settings)
ENGINES = web.AppKey("engines", Mapping[str, Engine])
METRICS = web.AppKey("metrics", Metrics)
STORE = web.AppKey("store", Any)
"""The :class:`events.store.EventStore`."""
EMBEDDED = web.AppKey("embedded", Any)
"""The :class:`events.embedded.EmbeddedServer` when the service started one, else absent."""
SERVICE = web.AppKey("service", GameService)
NODE = web.AppKey("node", Node)
SOCKETS = web.AppKey("sockets", weakref.WeakSet)
"""Open websockets, closed with GOING_AWAY on shutdown."""
VAULT = web.AppKey("vault", SeedVault)
"""Seals game seeds at rest with the node key (:mod:`service.seed_vault`)."""
SIGNING_KEY = web.AppKey("signing_key", NodeKey)
"""The node's Ed25519 key that signs exports; ``GET /keys`` lists its public half."""
