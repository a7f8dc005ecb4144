"""Scripted websocket players for tests: play any game using only the ``legal`` list of the view."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from tests.service.conftest import command, receive


class Player:
    """One seat's socket: keeps the latest view, plays a uniformly random legal command when it may."""

    def __init__(self, ws: Any, first: dict[str, Any], rng: random.Random, name: str) -> None:
        self.ws = ws
        self.rng = rng
        self.name = name
        self.view = first["view"]
        self.version = first["version"]
        self.status = first["status"]
        self.frames: list[dict[str, Any]] = [first]
        self.acked: dict[str, int] = {}
        self.sent = 0

    async def play(self, max_commands: int = 10_000, timeout: float = 5.0) -> None:
        pending: str | None = None
        waiting_for = 0
        while self.status != "finished":
            if pending is None and self.version >= waiting_for and self.view.get("legal"):
                if self.sent >= max_commands:
                    raise AssertionError(f"{self.name}: still playing after {max_commands} commands")
                self.sent += 1
                pending = f"{self.name}-{self.sent}"
                await command(self.ws, pending, self.rng.choice(self.view["legal"]))
            frame = await receive(self.ws, timeout)
            self.frames.append(frame)
            if frame["type"] in ("update", "snapshot"):
                self.view, self.version, self.status = frame["view"], frame["version"], frame["status"]
            elif frame["type"] == "ack":
                assert frame["id"] == pending, frame
                self.acked[pending] = frame["version"]
                pending, waiting_for = None, frame["version"]
            elif frame["type"] == "error":
                raise AssertionError(f"{self.name}: a legal command was refused: {frame}")


async def play_all(players: list[Player], **kw: Any) -> None:
    await asyncio.gather(*(player.play(**kw) for player in players))
