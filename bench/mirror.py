"""The mirror game, and the load that ``donjon bench --only peers`` puts on donjon with it.

The mirror game is the trivial game of issue 26's comparison with boardgame.io, written for
both servers (``bench/bgio/server.mjs`` is the same game the boardgame.io way): 2 seats, 9
cells, ``play {cell}`` always legal for either seat at any time, never over. It is served by the
bench's own ``donjon serve`` processes only, never by the product's catalog (:mod:`games`).

The load (:func:`mirror_load`, run in a process of its own: ``python -m bench.mirror PARAMS``)
is the one ``bench/bgio/driver.mjs`` puts on boardgame.io: ``games`` games, each with its two
seats sending their next ``play`` as soon as the previous one is acknowledged, and
``spectators`` sockets per game that follow every update; a warm-up, then the measuring window.
The seats are the service section's raw-socket players and the spectators count their frames
without parsing them, so that the load takes little of the cores it shares with the server.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bench.load import drive
from bench.processes import raise_fd_limit
from bench.raw_sockets import Player, client_frame, frame_at, receive_some, upgraded
from games.base import BadCommand, EngineBase, Event, Rng, UnknownCommand, UnknownEvent, command, int_arg, parse_command

__all__ = ["MIRROR", "MirrorEngine", "MirrorState", "CELLS", "mirror_load"]

CELLS = 9
SEATS = 2


@dataclass(frozen=True, slots=True)
class MirrorState:
    """Who played each cell last (``None``: nobody yet), and how many moves each seat made."""

    cells: tuple[int | None, ...] = (None,) * CELLS
    moves: tuple[int, ...] = (0,) * SEATS


class MirrorEngine(EngineBase):
    """2 seats, 9 cells, ``play {cell}`` for either seat at any time, never over."""

    name = "mirror"
    title = "Mirror (the bench's trivial game, compared with boardgame.io)"
    min_seats = SEATS
    max_seats = SEATS

    def initial_state(self) -> MirrorState:
        return MirrorState()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return [Event("opened", {})]

    def evolve(self, state: MirrorState, event: Event) -> MirrorState:
        if event.type == "opened":
            return state
        if event.type != "played":
            raise UnknownEvent(self.name, event.type)
        seat, cell = event.payload["seat"], event.payload["cell"]
        cells = state.cells[:cell] + (seat,) + state.cells[cell + 1 :]
        moves = state.moves[:seat] + (state.moves[seat] + 1,) + state.moves[seat + 1 :]
        return MirrorState(cells, moves)

    def decide(self, state: MirrorState, seat: int, cmd: dict[str, Any], rng: Rng) -> list[Event]:
        """:raises: bad_command, unknown_command."""
        kind, args = parse_command(cmd)
        if kind != "play":
            raise UnknownCommand(f"mirror has no command {kind!r} (only play)")
        cell = int_arg(args, "cell", "play")
        if not 0 <= cell < CELLS:
            raise BadCommand(f"play needs a cell from 0 to {CELLS - 1}, got {cell!r}")
        return [Event("played", {"seat": seat, "cell": cell})]

    def legal_moves(self, state: MirrorState, seat: int | None) -> list[dict[str, Any]]:
        return [command("play", cell=cell) for cell in range(CELLS)] if seat is not None else []

    def waiting_for(self, state: MirrorState) -> list[int]:
        return list(range(SEATS))

    def view(self, state: MirrorState, viewer: int | None) -> dict[str, Any]:
        return {"cells": list(state.cells), "moves": list(state.moves), "legal": self.legal_moves(state, viewer)}

    def redact(self, event: Event, viewer: int | None) -> Event:
        return event  # nothing is hidden

    def is_terminal(self, state: MirrorState) -> bool:
        return False

    def summary(self, state: MirrorState) -> dict[str, Any]:
        return {"status": "active", "moves": list(state.moves)}


MIRROR = MirrorEngine()


# --- the load (run in its own process) ----------------------------------------------------------

_PLAY = b'{"type":"command","command":{"type":"play","args":{"cell":%d}},"id":"'
_UPDATE = b'{"type":"update",'
_VERSION = b'"version":'
CONNECTING_AT_ONCE = 50
RESEND = ("conflict", "store_unavailable")


class _Seat(Player):
    """One seat of a mirror game: the service section's player, sending ``play`` commands."""

    def payload(self, number: int) -> bytes:
        return _PLAY % (number % CELLS) + self.prefix + b'%d"}' % number

    resent = 0
    """Commands sent again after an answer that asks for it."""

    @property
    def acked(self) -> int:
        return len(self.latencies)

    def refused(self, error: dict[str, Any]) -> bool:
        """``conflict`` ("resend it") and ``store_unavailable`` (the store did not answer in
        time) ask for the command again: sent again with the same id, as a client would (the
        service answers the earlier ack if it had been applied after all)."""
        if error.get("code") not in RESEND:
            return False
        self.resent += 1
        self.send_next()
        return True


class _Follower:
    """A spectator that reads every frame it is sent and keeps the last version an update
    brought, found by a byte search, not a JSON parse (and answers the server's pings, or its
    heartbeat closes the socket). One update may bring several versions: the node's reader sends
    what it read of the stream at once."""

    def __init__(self, sock: Any, buffer: bytearray) -> None:
        self.sock = sock
        self.buffer = buffer
        self.first = self.version = 0
        self.frames = 0

    @classmethod
    async def connect(cls, host: str, port: int, game_id: str) -> _Follower:
        loop = asyncio.get_running_loop()
        sock, rest = await upgraded(host, port, game_id)
        follower = cls(sock, rest)
        await loop.sock_sendall(sock, client_frame(b'{"type":"hello"}'))
        while (snapshot := frame_at(follower.buffer, 0)) is None:
            follower.buffer += await receive_some(loop, sock)
        _, start, end = snapshot
        follower.first = follower.version = json.loads(follower.buffer[start:end])["version"]
        del follower.buffer[:end]
        loop.add_reader(sock.fileno(), follower.on_readable)
        return follower

    @property
    def seen(self) -> int:
        """Versions this spectator was shown since it joined."""
        return self.version - self.first

    def on_readable(self) -> None:
        try:
            data = self.sock.recv(1 << 18)
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            asyncio.get_running_loop().remove_reader(self.sock.fileno())
            return
        buffer = self.buffer
        buffer += data
        at = 0
        while (frame := frame_at(buffer, at)) is not None:
            opcode, start, at = frame
            if opcode == 0x1 and buffer.startswith(_UPDATE, start):
                self.frames += 1
                found = buffer.find(_VERSION, start, at) + len(_VERSION)
                self.version = int(buffer[found : buffer.index(b",", found)])
            elif opcode == 0x9:
                self.sock.send(client_frame(bytes(buffer[start:at]), opcode=0xA))
        del buffer[:at]

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.sock.fileno())
        self.sock.close()


async def _new_table(session: Any, base: str) -> tuple[str, list[str]]:
    """A mirror game with both seats taken: its id and the seats' tokens."""
    async with session.post(f"{base}/games", json={"game": "mirror", "seats": SEATS}) as response:
        game_id = (await response.json())["id"]
    tokens = []
    for seat in range(SEATS):
        async with session.post(f"{base}/games/{game_id}/seats", json={"name": f"p{seat}"}) as response:
            tokens.append((await response.json())["token"])
    return game_id, tokens


async def _until(condition: Callable[[], bool], limit: float) -> bool:
    deadline = time.perf_counter() + limit
    while not condition() and time.perf_counter() < deadline:  # noqa: ASYNC110 - counters of reader callbacks
        await asyncio.sleep(0.02)
    return condition()


async def mirror_load(base: str, games: int, spectators: int, warmup: float, window: float) -> dict[str, Any]:
    """The load of the comparison on donjon at ``base``; the window's start and end
    (``perf_counter``), the moves acknowledged in it, and whether every spectator had every update."""
    import aiohttp

    host, port = base.removeprefix("http://").split(":")
    async with aiohttp.ClientSession() as session:
        tables = [await _new_table(session, base) for _ in range(games)]
    seats = [
        await _Seat.connect(host, int(port), game_id, token, SEATS * index + seat)
        for index, (game_id, tokens) in enumerate(tables)
        for seat, token in enumerate(tokens)
    ]
    watching = [(index, game_id) for index, (game_id, _) in enumerate(tables) for _ in range(spectators)]
    followers: list[tuple[int, _Follower]] = []
    for start in range(0, len(watching), CONNECTING_AT_ONCE):
        batch = watching[start : start + CONNECTING_AT_ONCE]
        connected = await asyncio.gather(*(_Follower.connect(host, int(port), game_id) for _, game_id in batch))
        followers += [(index, follower) for (index, _), follower in zip(batch, connected)]
    try:
        return await _measured(seats, followers, warmup, window)
    finally:
        for seat in seats:
            seat.close()
        for _, follower in followers:
            follower.close()


async def _measured(
    seats: list[_Seat], followers: list[tuple[int, _Follower]], warmup: float, window: float
) -> dict[str, Any]:
    def acked() -> int:
        return sum(seat.acked for seat in seats)

    for seat in seats:
        seat.start(math.inf)
    await asyncio.sleep(warmup)
    t0, before = time.perf_counter(), acked()
    await asyncio.sleep(window)
    t1, moves = time.perf_counter(), acked() - before
    for seat in seats:
        seat.stop = 0.0  # each seat stops at its next ack
    done = asyncio.gather(*(seat.done for seat in seats))
    settled = await _until(done.done, 10.0)
    if done.done():
        done.result()  # a seat's error (a refused command, a closed socket) ends the run here

    def total(index: int) -> int:
        return seats[SEATS * index].acked + seats[SEATS * index + 1].acked

    followed = await _until(lambda: all(f.seen >= total(i) for i, f in followers), 15.0)
    return {
        "t0": t0,
        "t1": t1,
        "moves": moves,
        "per_s": moves / (t1 - t0),
        "settled": settled,
        "followed": followed,
        "updates_expected": sum(total(index) for index, _ in followers),
        "updates_received": sum(min(f.seen, total(index)) for index, f in followers),
        "frames": sum(f.frames for _, f in followers),
        "resent": sum(seat.resent for seat in seats),
    }


def main(argv: list[str]) -> int:
    """``python -m bench.mirror PARAMS``: run one load, print its result as one JSON line.

    ``PARAMS`` is ``{"kind": "mirror", "base": URL, "games": G, "spectators": S, "warmup": s,
    "window": s}``, or ``{"kind": "real_games", "base": URL, "game": NAME, "games": G, "warmup": s,
    "seconds": s}`` for the service section's real-games load (seats choosing from ``legal``), or
    the same with ``"kind": "setups"`` for its tables set up and left with no move."""
    params = json.loads(argv[0])
    kind, base = params.pop("kind"), params.pop("base")
    if kind == "mirror":
        from service.run.serving import run

        raise_fd_limit()
        result = run(mirror_load(base, **params))
    else:
        result = drive(kind, base, params)
        result["t0"], result["t1"] = result.pop("window")
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
