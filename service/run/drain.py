"""Drain: what a node does between the request to stop and its exit.

1. At once (:class:`~service.ops.lifecycle.Lifecycle` ``draining``): ``/readyz`` answers 503
   ``draining`` and the node takes no new game, seat, rematch or socket (503 ``draining``), so a
   load balancer's health check takes it out while its sockets still play.
2. For ``DONJON_DRAIN_MS`` (2 s) nothing else changes: the balancer notices, clients finish
   what they were doing.
3. Its background duty goes to the other nodes: no more sweeps, bot moves or timeouts fired here,
   and the games whose bots it drove are listed as overdue at once
   (:meth:`service.play.game_service.GameService.release_duty`).
4. Every socket is closed with 1001 (``GOING_AWAY``) and the reason ``draining: reconnect``:
   clients reconnect, to another node, with ``since`` (docs/protocol.md).
5. aiohttp's own shutdown then waits for requests and commands in flight (bounded by
   :data:`service.run.serving.STOP_BOUND`) and the app's resources stop in reverse order.
"""

from __future__ import annotations

import asyncio

from aiohttp import WSCloseCode, web

from service.edge.keys import LIFECYCLE, SERVICE, SETTINGS, SOCKETS
from service.ops.logs import get_logger

__all__ = ["CLOSE_WAIT", "close_sockets", "drain"]

CLOSE_WAIT = 2.0
"""Seconds the closing handshakes of all sockets may take together (a client that never answers)."""

log = get_logger()


async def drain(app: web.Application) -> None:
    """Steps 2-4 above, once the lifecycle says the node drains."""
    life = app[LIFECYCLE]
    drain_ms = app[SETTINGS].drain_ms
    log.info("serve.draining", reason=life.reason, drain_ms=drain_ms, sockets=len(app[SOCKETS]))
    await asyncio.sleep(drain_ms / 1000)
    if SERVICE in app:
        handed = await app[SERVICE].release_duty()
        log.info("serve.duty_released", bot_games=handed)
    await close_sockets(app, b"draining: reconnect")


async def close_sockets(app: web.Application, reason: bytes) -> None:
    """Close every open socket with 1001 at once; a client that never answers costs at most
    :data:`CLOSE_WAIT` seconds in all."""
    sockets = app[SOCKETS]  # not inside list(): mypy would infer the key's type from list's argument
    closing = [asyncio.ensure_future(ws.close(code=WSCloseCode.GOING_AWAY, message=reason)) for ws in list(sockets)]
    if closing:
        await asyncio.wait(closing, timeout=CLOSE_WAIT)
