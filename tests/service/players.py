"""Scripted websocket players for tests: play any game using only the ``legal`` list of the view,
as the protocol's recipe says: send one command, wait for its ack and the update at the acked
version, send the next. Such a client is never rate limited, at any speed; Player fails if it is."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from tests.service.conftest import command, receive


class Player:
    """One seat's socket: keeps the latest view, plays a uniformly random legal command when it may.

    In games where several seats may act at once (Castle Panic's trades), a command chosen from
    a view that another seat's move has just made stale may be refused; that is fine exactly
    when a newer update arrives for this seat. A refusal of a command that was legal in the
    latest view is a bug and fails the test.
    """

    def __init__(self, ws: Any, first: dict[str, Any], rng: random.Random, name: str) -> None:
        self.ws = ws
        self.rng = rng
        self.name = name
        self.view = first["view"]
        self.version = first["version"]
        self.status = first["status"]
        self.frames: list[dict[str, Any]] = [first]
        self.acked: dict[str, int] = {}
        self.refused: list[dict[str, Any]] = []
        self.sent = 0

    async def play(self, max_commands: int = 10_000, timeout: float = 5.0) -> None:
        pending: str | None = None
        sent_at = 0
        waiting_for = 0
        stale_check: int | None = None  # the version a refused command was chosen at
        while self.status != "finished":
            if pending is None and stale_check is None and self.version >= waiting_for and self.view.get("legal"):
                if self.sent >= max_commands:
                    raise AssertionError(f"{self.name}: still playing after {max_commands} commands")
                self.sent += 1
                pending, sent_at = f"{self.name}-{self.sent}", self.version
                await command(self.ws, pending, self.rng.choice(self.view["legal"]))
            try:
                frame = await receive(self.ws, timeout if stale_check is None else 2.0)
            except asyncio.TimeoutError:
                if stale_check is not None:
                    raise AssertionError(f"{self.name}: a command legal at the latest view was refused: {self.refused[-1]}")
                raise
            self.frames.append(frame)
            if frame["type"] in ("update", "snapshot"):
                self.view, self.version, self.status = frame["view"], frame["version"], frame["status"]
                if stale_check is not None and self.version > stale_check:
                    stale_check = None
            elif frame["type"] == "ack":
                assert frame["id"] == pending, frame
                self.acked[pending] = frame["version"]
                pending, waiting_for = None, frame["version"]
            elif frame["type"] == "error":
                assert frame.get("id") == pending, frame
                assert frame["code"] != "rate_limited", f"{self.name} waits for each ack, yet was limited: {frame}"
                self.refused.append(frame)
                pending = None
                stale_check = None if self.version > sent_at else sent_at


async def play_all(players: list[Player], **kw: Any) -> None:
    await asyncio.gather(*(player.play(**kw) for player in players))
