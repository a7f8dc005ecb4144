"""Wrong command args over a real websocket of a real ``donjon serve``: every command of every
game, the service's ``resign`` and ``undo`` too, with args it does not take, of the wrong kind
(floats, objects, lists, booleans) or missing, in JSON and msgpack frames. Each gets an error
frame with a stable code naming a wrong arg, nothing is appended, and the server logs no error
(a float that reached the event codec used to answer ``internal`` with a traceback)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import msgpack
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.edge.wire import MSGPACK_SUBPROTOCOL
from tests.service.bad_args import COMMAND_ARGS, names_one_of, plain_args, wrong_args
from tests.service.serving import donjon_serve

GAMES = {"carcassonne": 2, "castle": 2, "castle_panic": 3}
"""Each game and its seats (three in Castle Panic: a trade has another seat to go to)."""


@pytest.fixture(scope="module")
def served(embedded_redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with donjon_serve(embedded_redis_url, tmp_path_factory.mktemp("serve")) as base:
        yield base


@dataclass
class Table:
    """A started game of humans and an open socket per seat (JSON and msgpack alike)."""

    game_id: str
    version: int
    legal: list[list[dict[str, Any]]]
    sockets: list[dict[str, aiohttp.ClientWebSocketResponse]] = field(default_factory=list)
    sent: int = 0

    async def send(self, seat: int, codec: str, command: dict[str, Any]) -> dict[str, Any]:
        """The reply to ``command`` from ``seat`` over its ``codec`` socket."""
        self.sent += 1
        frame = {"type": "command", "id": f"c{self.sent}", "command": command}
        ws = self.sockets[seat][codec]
        if codec == "json":
            await ws.send_str(json.dumps(frame))
        else:
            await ws.send_bytes(msgpack.packb(frame))
        while True:
            message = await asyncio.wait_for(ws.receive(), 10)
            reply = json.loads(message.data) if codec == "json" else msgpack.unpackb(message.data)
            if reply.get("id") == frame["id"]:
                return reply


def seated(served: str, game: str, seats: int) -> tuple[str, list[str]]:
    game_id = requests.post(f"{served}/games", json={"game": game, "seats": seats}, timeout=5).json()["id"]
    tokens = [requests.post(f"{served}/games/{game_id}/seats", json={"name": f"p{seat}"}, timeout=5).json()["token"]
              for seat in range(seats)]
    return game_id, tokens


def seen(served: str, game_id: str, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.get(f"{served}/games/{game_id}", headers=headers, timeout=5).json()


async def open_table(session: aiohttp.ClientSession, served: str, game: str, seats: int) -> Table:
    game_id, tokens = seated(served, game, seats)
    table = Table(game_id, seen(served, game_id)["version"], [seen(served, game_id, t)["view"]["legal"] for t in tokens])
    for token in tokens:
        pair = {}
        for codec, protocols in (("json", ()), ("msgpack", (MSGPACK_SUBPROTOCOL,))):
            ws = await session.ws_connect(f"{served}/games/{game_id}/ws", protocols=protocols)
            hello = {"type": "hello", "token": token}
            await (ws.send_str(json.dumps(hello)) if codec == "json" else ws.send_bytes(msgpack.packb(hello)))
            await ws.receive()  # the snapshot
            pair[codec] = ws
        table.sockets.append(pair)
    return table


def test_wrong_args_of_every_command_are_refused_over_the_websocket_and_append_nothing(served: str) -> None:
    loop = asyncio.new_event_loop()
    session = loop.run_until_complete(_session())
    try:
        tables = {game: loop.run_until_complete(open_table(session, served, game, seats))
                  for game, seats in GAMES.items()}
        codes: dict[str, int] = {}

        @given(data=st.data())
        @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def one_command(data: st.DataObject) -> None:
            name = data.draw(st.sampled_from(sorted(tables)), label="game")
            table = tables[name]
            seat = data.draw(st.sampled_from(range(GAMES[name])), label="seat")
            kind = data.draw(st.sampled_from(sorted(COMMAND_ARGS[name])), label="command")
            takes = COMMAND_ARGS[name][kind]
            legal = [move["args"] for move in table.legal[seat] if move["type"] == kind]
            args, wrong = data.draw(wrong_args(takes, data.draw(st.sampled_from(legal)) if legal else plain_args(takes)))
            codec = data.draw(st.sampled_from(["json", "msgpack"]), label="codec")
            reply = loop.run_until_complete(table.send(seat, codec, {"type": kind, "args": args}))
            assert reply["type"] == "error", (name, seat, kind, args, reply)
            owing = seat == 0 or kind in ("resign", "undo")  # every game waits on seat 0 at its start
            assert reply["code"] in (("bad_command",) if owing else ("bad_command", "not_your_turn")), reply
            if reply["code"] == "bad_command":
                assert names_one_of(reply["message"], wrong), (kind, args, reply)
            codes[reply["code"]] = codes.get(reply["code"], 0) + 1

        one_command()
        for table in tables.values():
            for kind in ("resign", "undo", table.legal[0][0]["type"]):
                reply = loop.run_until_complete(table.send(0, "json", {"type": kind, "args": None}))
                assert (reply["type"], reply["code"]) == ("error", "bad_command"), reply  # {} or left out, never null
        # Seat 0's commands (about half the draws) and every resign and undo can only be
        # bad_command: ~110 of 200 on average; the bound is five deviations below, not one.
        assert codes.get("bad_command", 0) > 70
        for table in tables.values():
            assert seen(served, table.game_id)["version"] == table.version  # nothing appended
            log = requests.get(f"{served}/games/{table.game_id}/events", timeout=5).json()
            assert log["version"] == table.version
    finally:
        loop.run_until_complete(session.close())
        loop.close()


async def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession()
