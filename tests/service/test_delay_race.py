"""A spectator delay holds on every route a spectator reaches, while events are appended: appends
(made by a second node on the same store, as in any deployment of several) race spectators
reading ``GET /games/{id}``, ``/state``, ``/events`` and the websocket (hellos, with and without
``since``, and the updates that follow) of a ``donjon serve`` process, of games 3 versions
behind and 1 second behind; no read shows an event early, over at least 10,000 reads per route.

A read is early when it shows a version no spectator may see at the moment its answer arrived:
for ``{"seconds": N}``, an event whose ``ts`` is not N seconds older than the time the answer was
received (the server decided earlier, so it had less to show); for ``{"versions": N}``, a
version above N versions behind every event stamped by then (the stream had no more). A read
that shows a game's ``game.finished``, stamped by then, is not judged: the end shows everything.
Version 1 (``game.created``) is always shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from games.base import owing_seat
from projections.views import view_for
from service.edge.keys import SERVICE, STORE
from tests.service.conftest import receive, take_seat
from tests.service.nodes import Nodes

READS = 10_000
"""Reads of a running game each route must make (the updates a socket receives count, a hello's
answer too); reads of a game that had ended by then are made too, and not judged."""
MARGIN = 1.03
"""Reads of running games each route makes, over :data:`READS`: the writer sees an end a moment
after it is stamped, so a few reads it counted as of a running game are not."""
DEADLINE_S = 420.0
DELAYS = {"versions": {"versions": 3}, "seconds": {"seconds": 1}}
ROUTES = ("game", "state", "events", "ws")


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True)
class Read:
    kind: str
    game_id: str
    received_ms: int
    version: int
    """The newest version the answer shows (its own version, or its newest event's)."""


@dataclass
class Race:
    """The games being played, and every read made of them."""

    current: dict[str, str] = field(default_factory=dict)
    games: dict[str, str] = field(default_factory=dict)
    """Every game played: id -> its delay kind."""
    ended: set[str] = field(default_factory=set)
    """The games the writer has seen end."""
    reads: dict[str, list[Read]] = field(default_factory=lambda: {route: [] for route in ROUTES})
    running: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROUTES, 0))
    """Reads per route of games the writer had not seen end."""
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def wants(self, route: str) -> bool:
        """Reads of ``route`` go on until it has made its share (the others then have the machine)."""
        return not self.done.is_set() and self.running[route] < READS * MARGIN

    def record(self, route: str, kind: str, game_id: str, version: int, status: str | None = None) -> None:
        """A read made now, showing ``version`` (and the game's ``status``, when the answer says it)."""
        self.reads[route].append(Read(kind, game_id, _now_ms(), version))
        if game_id not in self.ended and status != "finished":
            self.running[route] += 1
        if not any(self.wants(route) for route in ROUTES):
            self.done.set()


async def _new_game(client: Any, race: Race, kind: str) -> str:
    """A tiny game with both seats taken, on the node that appends (``client``); its id."""
    body = {"game": "tiny", "seats": 2, "options": {"target": 20}, "spectator_delay": DELAYS[kind]}
    response = await client.post("/games", json=body)
    game_id: str = (await response.json())["id"]
    for name in ("ann", "bob"):
        await take_seat(client, game_id, name)
    race.games[game_id] = kind
    return game_id


async def _writer(client: Any, race: Race, kind: str, rng: random.Random) -> None:
    """Plays tiny games one after the other as both seats, in bursts: a few moves at once, then a
    pause (longer than the seconds delay for that game, so that its spectators catch up and the
    next burst starts from a caught-up view, where a late filter would slip)."""
    service = client.app[SERVICE]
    moves, spare = 0, await _new_game(client, race, kind)
    while not race.done.is_set():
        game_id = race.current[kind]
        for _ in range(rng.randint(1, 4)):
            projection = await service.load(game_id)
            seat = owing_seat(projection.engine, projection.state, projection.seats)
            moves += 1
            await service.execute(game_id, seat, f"w{moves}", rng.choice(view_for(projection, seat)["legal"]))
            if (await service.load(game_id)).status.value != "active":  # readers move to the next game at once
                race.ended.add(game_id)
                race.current[kind], spare = spare, await _new_game(client, race, kind)
                break
        pause = 1.05 + rng.random() * 0.2 if kind == "seconds" else 0.02 + rng.random() * 0.08
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(race.done.wait(), pause)


async def _http_reader(session: aiohttp.ClientSession, base: str, race: Race, route: str, rng: random.Random) -> None:
    while race.wants(route):
        kind = rng.choice(list(DELAYS))
        game_id = race.current[kind]
        if route == "events":
            start = rng.choice([1, 1, 4, 8])
            async with session.get(f"{base}/games/{game_id}/events", params={"from": str(start)}) as response:
                body = await response.json()
            shown, status = max([body["version"], *(event["version"] for event in body["events"])]), None
        else:
            path = f"/games/{game_id}" if route == "game" else f"/games/{game_id}/state"
            async with session.get(f"{base}{path}") as response:
                body = await response.json()
            shown, status = body["version"], body["status"]
        race.record(route, kind, game_id, shown, status)


async def _ws_reader(session: aiohttp.ClientSession, base: str, race: Race, rng: random.Random) -> None:
    """A spectator socket after another: a hello (from scratch, or ``since`` a version it saw),
    then the updates of a moment; every frame is a read."""
    seen: dict[str, int] = {}
    while race.wants("ws"):
        kind = rng.choice(list(DELAYS))
        game_id = race.current[kind]
        hello: dict[str, Any] = {"type": "hello"}
        if game_id in seen and rng.random() < 0.5:
            hello["since"] = seen[game_id]
        async with session.ws_connect(f"{base}/games/{game_id}/ws") as ws:
            await ws.send_json(hello)
            until = time.monotonic() + rng.random() * 0.5
            while race.wants("ws"):
                try:
                    frame = await receive(ws, max(0.01, until - time.monotonic()))
                except TimeoutError:
                    break
                assert frame["type"] in ("snapshot", "update"), frame
                shown = max([frame["version"], *(event["version"] for event in frame.get("events", []))])
                seen[game_id] = frame["version"]
                race.record("ws", kind, game_id, shown, frame["status"])
                if frame["status"] == "finished":
                    break  # on to the game being played


async def _stamps(client: Any, game_id: str) -> tuple[list[int], int | None]:
    """Each version's ``ts`` (index 0 is version 1) and the ``ts`` of ``game.finished``, if any."""
    envelopes = await client.app[STORE].read(game_id)
    finished = next((e.ts for e in envelopes if e.type == "game.finished"), None)
    return [e.ts for e in envelopes], finished


def _over(read: Read, stamps: list[int], finished: int | None) -> bool:
    """The answer shows the game's end, stamped before the answer came: it may show everything
    (an answer that shows less was decided before the end, and is judged by the delay)."""
    return finished is not None and finished <= read.received_ms and read.version >= len(stamps)


def _early(read: Read, stamps: list[int]) -> bool:
    """The answer shows a version no spectator may see when it was received (module docstring)."""
    if read.version <= 1:
        return False
    if read.kind == "seconds":
        return stamps[read.version - 1] > read.received_ms - DELAYS["seconds"]["seconds"] * 1000
    stamped = sum(1 for ts in stamps if ts <= read.received_ms)  # the stream had at most this many events
    return read.version > max(1, stamped - DELAYS["versions"]["versions"])


async def _run(tasks: list[Awaitable[None]], race: Race) -> None:
    running = [asyncio.ensure_future(task) for task in tasks]
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(race.done.wait(), DEADLINE_S)
        race.done.set()
        await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()


@pytest.mark.timeout(DEADLINE_S + 60)
async def test_no_route_shows_a_spectator_an_event_early_while_events_are_appended(
    make_client: Callable[..., Awaitable[Any]], embedded_redis_url: str, tmp_path: Path
) -> None:
    writer = await make_client()  # the node that appends
    race, rng = Race(), random.Random(22)
    for kind in DELAYS:
        race.current[kind] = await _new_game(writer, race, kind)
    nodes = Nodes(embedded_redis_url, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            _proc, base = await nodes.start(session)  # the node spectators read
            tasks: list[Awaitable[None]] = [_writer(writer, race, kind, random.Random(rng.random())) for kind in DELAYS]
            tasks += [_http_reader(session, base, race, route, random.Random(rng.random()))
                      for route in ("game", "state", "events") for _ in range(3)]
            tasks += [_ws_reader(session, base, race, random.Random(rng.random())) for _ in range(16)]
            await _run(tasks, race)
    finally:
        nodes.stop_all()

    stamps = {game_id: await _stamps(writer, game_id) for game_id in race.games}
    judged = {route: [read for read in reads if not _over(read, *stamps[read.game_id])]
              for route, reads in race.reads.items()}
    counts = {route: (len(race.reads[route]), len(judged[route])) for route in ROUTES}
    assert all(len(judged[route]) >= READS for route in ROUTES), f"reads (made, judged) in {DEADLINE_S:g} s: {counts}"
    early = {route: [read for read in reads if _early(read, stamps[read.game_id][0])] for route, reads in judged.items()}
    assert {route: found[:3] for route, found in early.items() if found} == {}, counts
