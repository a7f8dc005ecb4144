"""The loads the service figures are measured under, each run in a child process (:func:`drive`).

* ``throughput``: closed loop, one :class:`bench.raw_sockets.Player` per game sending its next
  roll as soon as the last is acked;
* ``paced``: open loop, a fixed rate of rolls spread evenly over the games;
* ``fanout``: one player per game paced, and :class:`bench.raw_sockets.Spectator` probes
  watching each game;
* ``real_games``: closed loop over tables of a real game with 2 seats choosing from ``legal``;
* ``setups``: the same tables set up and left, no move made (what a real game's set-up costs).

All but ``real_games`` play :data:`bench.die_game.BENCH`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections.abc import Callable, Coroutine
from typing import Any

from bench.die_game import ROLL
from bench.percentiles import percentile
from bench.processes import raise_fd_limit
from bench.raw_sockets import Player, Spectator

__all__ = ["drive", "new_game", "open_socket"]


async def new_game(session: Any, base: str) -> tuple[str, str]:
    """A new bench game with its one seat taken: its id and the seat's token."""
    async with session.post(f"{base}/games", json={"game": "bench", "seats": 1}) as response:
        game_id = (await response.json())["id"]
    async with session.post(f"{base}/games/{game_id}/seats", json={"name": "bench"}) as response:
        token = (await response.json())["token"]
    return game_id, token


async def open_socket(session: Any, base: str, game_id: str, token: str | None = None) -> Any:
    """An aiohttp websocket on ``game_id``, hello said (as the seat of ``token``, if given) and
    the snapshot read."""
    ws = await session.ws_connect(f"{base}/games/{game_id}/ws", max_msg_size=0)
    hello: dict[str, Any] = {"type": "hello"}
    if token:
        hello["token"] = token
    await ws.send_json(hello)
    await ws.receive_json()
    return ws


async def _throughput(base: str, games: int, seconds: float) -> dict[str, Any]:
    """Closed loop: ``games`` :class:`Player` sockets, each sending its next command as soon as
    the last one is acked, for ``seconds``."""
    import aiohttp

    host, port = base.removeprefix("http://").split(":")
    async with aiohttp.ClientSession() as session:
        pairs = [await new_game(session, base) for _ in range(games)]
    players = [await Player.connect(host, int(port), game_id, token, n) for n, (game_id, token) in enumerate(pairs)]
    started, spent = time.perf_counter(), time.process_time()
    for player in players:
        player.start(started + seconds)
    try:
        await asyncio.gather(*(player.done for player in players))
    finally:
        ended, spent = time.perf_counter(), time.process_time() - spent
        for player in players:
            player.close()
    latencies = [latency for player in players for latency in player.latencies]
    return {
        "per_s": len(latencies) / (ended - started),
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "n": len(latencies),
        "window": (started, ended),  # perf_counter is the system-wide monotonic clock on Linux
        "client_cpu": spent,  # the load process's own CPU seconds over the window
    }


async def _paced(base: str, games: int, rate: float, seconds: float) -> dict[str, Any]:
    """Open loop: ``rate`` commands/s in total, spread evenly over ``games`` sockets."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        pairs = [await new_game(session, base) for _ in range(games)]
        sockets = [await open_socket(session, base, game_id, token) for game_id, token in pairs]
        latencies: list[float] = []
        sent_at: dict[str, float] = {}
        interval = games / rate
        start = time.perf_counter() + 0.2
        count = int(seconds * rate / games)

        async def send(ws: Any, n: int) -> None:
            for k in range(count):
                delay = start + n * interval / games + k * interval - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                sent_at[f"{n}-{k}"] = time.perf_counter()
                await ws.send_json(dict(ROLL, id=f"{n}-{k}"))

        async def read(ws: Any) -> None:
            got = 0
            while got < count:
                frame = await ws.receive_json()
                if frame["type"] == "ack":
                    latencies.append(time.perf_counter() - sent_at[frame["id"]])
                    got += 1
                elif frame["type"] == "error":
                    raise RuntimeError(frame)

        await asyncio.gather(*(send(ws, n) for n, ws in enumerate(sockets)), *(read(ws) for ws in sockets))
        for ws in sockets:
            await ws.close()
    return {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "n": len(latencies)}


async def _fanout(base: str, games: int, spectators: int, rate_per_game: float, seconds: float) -> dict[str, Any]:
    """Each game: one player paced at ``rate_per_game``, ``spectators`` sockets watching.

    The spectators are :class:`Spectator` sockets, stamped by the kernel on arrival (see there),
    so the figure is when each spectator's machine had its update, not when this one process got
    round to reading a thousand sockets. ``read`` is the same, stamped when this process read it.
    """
    import aiohttp

    host, port = base.removeprefix("http://").split(":")
    async with aiohttp.ClientSession() as session:
        pairs = [await new_game(session, base) for _ in range(games)]
        players = [await open_socket(session, base, game_id, token) for game_id, token in pairs]
        count = int(seconds * rate_per_game)
        last = 3 + count  # created, seat taken, opened, then one event per command
        watchers: list[tuple[int, Spectator]] = []
        for game_index, (game_id, _) in enumerate(pairs):
            for spectator in await asyncio.gather(
                *(Spectator.connect(host, int(port), game_id, last) for _ in range(spectators))
            ):
                watchers.append((game_index, spectator))
        sent_at: dict[tuple[int, int], float] = {}
        pending: dict[tuple[int, str], float] = {}
        start = time.time() + 0.3

        async def play(game_index: int, ws: Any) -> None:
            for k in range(count):
                delay = start + k / rate_per_game + game_index / (rate_per_game * games) - time.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                pending[(game_index, f"c{k}")] = time.time()
                await ws.send_json(dict(ROLL, id=f"c{k}"))
            acked = 0
            while acked < count:
                frame = await ws.receive_json()
                if frame["type"] == "ack":
                    sent_at[(game_index, frame["version"])] = pending.pop((game_index, frame["id"]))
                    acked += 1

        await asyncio.gather(*(play(i, ws) for i, ws in enumerate(players)))
        await asyncio.wait_for(asyncio.gather(*(spectator.done for _, spectator in watchers)), 30 + seconds)
        arrived: list[float] = []
        read: list[float] = []
        for game_index, spectator in watchers:
            for version, (at, read_at) in spectator.arrivals.items():
                sent = sent_at.get((game_index, version))
                if sent is not None:
                    arrived.append(at - sent)
                    read.append(read_at - sent)
            spectator.close()
        for ws in players:
            await ws.close()
    return {
        "p50": percentile(arrived, 50),
        "p99": percentile(arrived, 99),
        "n": len(arrived),
        "read_p50": percentile(read, 50),
        "read_p99": percentile(read, 99),
        "kernel_stamps": all(spectator.kernel_stamps for _, spectator in watchers),
    }



@dataclasses.dataclass
class _Tally:
    """What the real-games load counts: the acks of the commands sent in its measuring window
    (from ``measured_from`` to ``stop``, ``perf_counter`` times), the refusals by code, and the
    games set up in the window (their set-up is in the server's CPU of the window)."""

    measured_from: float
    stop: float
    latencies: list[float] = dataclasses.field(default_factory=list)
    refusals: dict[str, int] = dataclasses.field(default_factory=dict)
    tables: int = 0

    def acked(self, sent: float) -> None:
        if sent >= self.measured_from:
            self.latencies.append(time.perf_counter() - sent)

    def refused(self, code: str) -> None:
        self.refusals[code] = self.refusals.get(code, 0) + 1


class _Table:
    """One real game of 2 seats as its two sockets see it: each seat's last view, version and
    status, and the acks and errors each seat's socket was answered."""

    def __init__(self, sockets: list[Any]) -> None:
        self.sockets = sockets
        self.views: list[dict[str, Any]] = [{}, {}]
        self.versions = [0, 0]
        self.status = ["active", "active"]
        self.answers: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue(), asyncio.Queue()]
        self.seen = asyncio.Event()
        self.readers: list[asyncio.Task[None]] = []

    @classmethod
    async def open(cls, session: Any, base: str, game: str) -> _Table:
        """A new game of ``game`` with both seats taken, a socket on each, hello said."""
        async with session.post(f"{base}/games", json={"game": game, "seats": 2}) as response:
            game_id = (await response.json())["id"]
        tokens = []
        for name in ("a", "b"):
            async with session.post(f"{base}/games/{game_id}/seats", json={"name": name}) as response:
                tokens.append((await response.json())["token"])
        table = cls([await session.ws_connect(f"{base}/games/{game_id}/ws", max_msg_size=0) for _ in tokens])
        for ws, token in zip(table.sockets, tokens, strict=True):
            await ws.send_json({"type": "hello", "token": token})
        table.readers = [asyncio.create_task(table.read(seat)) for seat in range(len(tokens))]
        return table

    async def read(self, seat: int) -> None:
        async for message in self.sockets[seat]:
            frame = message.json()
            if frame["type"] in ("snapshot", "update"):
                self.views[seat], self.versions[seat], self.status[seat] = (
                    frame["view"], frame["version"], frame["status"]
                )
                self.seen.set()
            elif frame["type"] in ("ack", "error"):
                self.answers[seat].put_nowait(frame)

    @property
    def finished(self) -> bool:
        return "finished" in self.status

    def movers(self, at: int) -> list[int]:
        """The seats that may move once every socket has seen version ``at``: none before."""
        if min(self.versions) < at:
            return []
        return [seat for seat in (0, 1) if self.views[seat].get("legal")]

    async def news(self, within: float) -> None:
        """Until a socket is shown something new, or ``within`` seconds."""
        self.seen.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.seen.wait(), within)

    async def shown_to_both(self) -> None:
        """Until both sockets are shown the game (a snapshot or an update each)."""
        while min(self.versions) == 0:
            await self.news(1.0)

    async def close(self) -> None:
        for ws in self.sockets:
            await ws.close()
        for reader in self.readers:
            reader.cancel()


async def _play_table(table: _Table, tally: _Tally, rng: random.Random, index: int) -> None:
    """Random legal commands on ``table`` until it is over or the load's time is up."""
    at, k = 0, 0
    while time.perf_counter() < tally.stop and not table.finished:
        movers = table.movers(at)
        if not movers:
            await table.news(1.0)
            continue
        seat = movers[0]
        k += 1
        sent = time.perf_counter()
        command = rng.choice(table.views[seat]["legal"])
        await table.sockets[seat].send_json({"type": "command", "id": f"{index}-{k}", "command": command})
        answer = await table.answers[seat].get()
        if answer["type"] == "ack":
            tally.acked(sent)
            at = answer["version"]
        else:  # refused (a view the other seat made stale): choose again, once more is shown
            tally.refused(answer.get("code", "?"))
            await table.news(0.05)


async def _tables_in_turn(session: Any, base: str, game: str, index: int, tally: _Tally, play: bool = True) -> None:
    """Table ``index`` of the load: one game after another until the load's time is up, each
    played to its end (``play``) or only set up: left once both sockets are shown the game."""
    rng = random.Random(index)
    while time.perf_counter() < tally.stop:
        if time.perf_counter() >= tally.measured_from:
            tally.tables += 1
        table = await _Table.open(session, base, game)
        if play:
            await _play_table(table, tally, rng, index)
        else:
            await table.shown_to_both()
        await table.close()


async def _real_games(base: str, game: str, games: int, seconds: float, warmup: float = 0.0) -> dict[str, Any]:
    """Closed loop over ``games`` tables of a real game with 2 seats: a seat whose view lists
    ``legal`` commands sends one of them, chosen at random, once every socket has seen the last
    ack's version; a finished game makes way for a new one. The figures count the ``seconds``
    after the first ``warmup`` seconds."""
    import aiohttp

    measured_from = time.perf_counter() + warmup
    tally = _Tally(measured_from, measured_from + seconds)
    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(_tables_in_turn(session, base, game, index, tally) for index in range(games)))
        ended = time.perf_counter()
    return {
        "per_s": len(tally.latencies) / (ended - measured_from),
        "p50": percentile(tally.latencies, 50),
        "p99": percentile(tally.latencies, 99),
        "n": len(tally.latencies),
        "window": (measured_from, ended),
        "refusals": tally.refusals,
        "tables": tally.tables,
    }


async def _setups(base: str, game: str, games: int, seconds: float, warmup: float = 0.0) -> dict[str, Any]:
    """``games`` loops each setting up a table of ``game`` as the real-games load does (created,
    both seats taken, a socket on each, hello said and the game shown) and leaving it, with no
    move: the figures count the tables set up in the ``seconds`` after ``warmup``."""
    import aiohttp

    measured_from = time.perf_counter() + warmup
    tally = _Tally(measured_from, measured_from + seconds)
    async with aiohttp.ClientSession() as session:
        await asyncio.gather(
            *(_tables_in_turn(session, base, game, index, tally, play=False) for index in range(games))
        )
        ended = time.perf_counter()
    return {"per_s": tally.tables / (ended - measured_from), "n": tally.tables, "window": (measured_from, ended)}


_DRIVERS: dict[str, Callable[..., Coroutine[Any, Any, dict[str, Any]]]] = {
    "throughput": _throughput, "paced": _paced, "fanout": _fanout, "real_games": _real_games, "setups": _setups
}


def drive(kind: str, base: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run one load generator to its end, on a uvloop event loop as ``donjon serve`` runs (the
    load shares the machine's cores with the service: the less it spends, the more they get)."""
    from service.run.serving import run

    raise_fd_limit()
    return run(_DRIVERS[kind](base, **params))

