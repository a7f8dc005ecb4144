"""A copy of the store of running games shows nothing a spectator may not see (docs/fairness.md,
"Sealed at rest"), on a real node and its own embedded Valkey: every key read with real commands
(streams, hashes, sorted sets, sets, strings) and every file of the data folder (the append-only
file among them), searched for what is hidden, computed from the full game (the seed, the keys
derived from it, the secret options, every part of an event a spectator's copy leaves out, every
command, the hands and piles of the folded state, the seats' tokens) in the encodings it could
be stored in (raw bytes, hex, base64, msgpack, JSON)."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import redis.asyncio

import games
from events.embedded import EmbeddedServer
from games.base import owing_seat
from games.carcassonne.tiles import tile_set
from games.castle.engine import CastleEngine
from projections.views import events_for, view_for, visible_part
from service.edge.keys import SERVICE
from service.fairness.sealing import hiding_key
from service.play.decisions import PUBLIC_COMMANDS, drawing_seed
from service.run.app import create_app
from tests.service.conftest import TEST_SEED_KEY, TEST_SIGNING_KEY, settings_for

ENGINES = games.default_engines()
MOVES = 30
"""Commands played in each game before the dump: enough for hands to be dealt and cards drawn."""
SHORTEST = 8
"""Needles shorter than this are not searched: they could be anywhere by chance."""


def _encodings(value: Any) -> set[bytes]:
    """How ``value`` could lie in the store: bytes as they are, in hex and base64; text as UTF-8;
    lists and maps as msgpack and JSON (compact or not). Lone numbers and flags are not needles."""
    if isinstance(value, bytes):
        return {value, value.hex().encode(), base64.b64encode(value)}
    if isinstance(value, str):
        return {value.encode()}
    if value is None or isinstance(value, (bool, int)) or not value:
        return set()
    return {msgpack.packb(value, use_bin_type=True), json.dumps(value, separators=(",", ":")).encode(),
            json.dumps(value).encode()}


def _hidden_payload_values(engine: Any, envelopes: list[Any]) -> Iterator[Any]:
    """Every payload value a spectator's copy of an event does not show, and every command but
    the service's own (spectators never see commands)."""
    for envelope in envelopes:
        visible = visible_part(engine, envelope.type, envelope.payload, None)
        shown = {} if visible is None else visible[1]
        for name, value in envelope.payload.items():
            if name not in shown or shown[name] != value:
                yield value
        if envelope.command is not None and envelope.command.get("type") not in PUBLIC_COMMANDS:
            yield envelope.command


def _hidden_in_state(state: Any) -> Iterator[Any]:
    """The hands and piles of the folded state that views show only as counts (or to one seat)."""
    options = getattr(state, "options", None)
    yield getattr(options, "tile_order", None)
    yield getattr(state, "order", None)  # Carcassonne's remaining scripted order
    cards, tokens = getattr(state, "cards", None), getattr(state, "tokens", None)
    if cards is not None and tokens is not None:  # Castle Panic
        yield list(cards.deck)
        yield list(tokens.pile)
        yield list(tokens.overlord_hand)
        if state.config.options.hidden_hands:
            yield from (list(hand) for hand in cards.hands)


class Game:
    """One running game of the test: its id, its seats' tokens, and what was chosen for it."""

    def __init__(self, game: str, options: dict[str, Any], seats: int, client_seeds: dict[int, str]) -> None:
        self.game, self.options, self.seats, self.client_seeds = game, options, seats, client_seeds
        self.moves = 0
        self.id = ""
        self.tokens: list[str] = []
        self.ended: list[str] = []
        """Games of this kind that ended before the dump (started again): public by now."""


def _games() -> list[Game]:
    rng = random.Random(22)
    carcassonne = [tile for tile, n in tile_set(False).pile_counts().items() for _ in range(n)]
    castle_engine = ENGINES["castle"]
    assert isinstance(castle_engine, CastleEngine)
    dataset = castle_engine.dataset
    falcon = {tile.id for tile in dataset.falcon_tiles}
    castle = [tile for tile, n in dataset.counts.items() if tile not in falcon for _ in range(n)]
    rng.shuffle(carcassonne)
    rng.shuffle(castle)
    return [
        Game("carcassonne", {"tile_order": carcassonne[:40]}, 2, {0: "ada-dice-1"}),
        Game("carcassonne", {}, 3, {}),
        Game("castle", {"tile_order": castle[:40]}, 2, {1: "bob-dice-2"}),
        Game("castle_panic", {"overlord": True, "hidden_hands": True}, 4, {0: "cy-dice-3", 2: "di-dice-4"}),
        Game("castle_panic", {"hidden_hands": True}, 3, {}),
    ]


async def _start(client: Any, game: Game) -> None:
    game.tokens = []
    response = await client.post("/games", json={"game": game.game, "options": game.options, "seats": game.seats})
    assert response.status == 201, await response.text()
    game.id = (await response.json())["id"]
    for seat in range(game.seats):
        body: dict[str, Any] = {"name": f"p{seat}"}
        if seat in game.client_seeds:
            body["client_seed"] = game.client_seeds[seat]
        response = await client.post(f"/games/{game.id}/seats", json=body)
        assert response.status == 200, await response.text()
        game.tokens.append((await response.json())["token"])


async def _play(client: Any, game: Game, rng: random.Random) -> None:
    """Start ``game`` and play random legal commands of whichever seat owes one, through the
    service's command path; a game that ends meanwhile (the draws are the seed's) is started again."""
    service = client.app[SERVICE]
    for _attempt in range(5):
        await _start(client, game)
        game.moves = 0
        for move in range(MOVES):
            projection = await service.load(game.id)
            seat = owing_seat(projection.engine, projection.state, projection.seats)
            legal = view_for(projection, seat)["legal"] if seat is not None else []
            if not legal or projection.status.value != "active":
                break
            await service.execute(game.id, seat, f"m{move}", rng.choice(legal))
            game.moves += 1
        if (await service.load(game.id)).status.value == "active":
            return
        game.ended.append(game.id)
    raise AssertionError(f"every {game.game} game ended within {MOVES} moves")


async def _dump(redis: Any, data_dir: Path) -> bytes:
    """Every key's name and content, read with real commands, and every file of the data folder."""
    parts: list[bytes] = []
    async for key in redis.scan_iter(count=500):
        parts.append(key)
        kind = (await redis.type(key)).decode()
        if kind == "stream":
            for entry_id, fields in await redis.xrange(key):
                parts += [entry_id, *fields, *fields.values()]
        elif kind == "hash":
            for name, value in (await redis.hgetall(key)).items():
                parts += [name, value]
        elif kind == "zset":
            parts += [member for member, _ in await redis.zrange(key, 0, -1, withscores=True)]
        elif kind == "set":
            parts += list(await redis.smembers(key))
        elif kind == "list":
            parts += await redis.lrange(key, 0, -1)
        elif kind == "string":
            parts.append(await redis.get(key))
        else:
            raise AssertionError(f"key {key!r} is a {kind}, which the dump does not read")
    files = [path for path in sorted(data_dir.rglob("*")) if path.is_file() and not path.is_socket()]
    assert any("appendonly" in str(path) for path in files), files
    parts += [path.read_bytes() for path in files]
    return b"\x00".join(parts)


async def _needles(client: Any, game: Game) -> tuple[dict[bytes, tuple[str, str]], bytes]:
    """What must not be in the dump (each encoding, with what it is: not yet checked against what
    spectators of the other games see), and what a spectator of this game sees."""
    service = client.app[SERVICE]
    projection = await service.load(game.id)
    meta = await service.cache.meta(game.id)
    envelopes = await service.events(game.id)
    engine = projection.engine
    secrets: list[tuple[str, Any]] = [
        ("the server seed", meta.seed),
        ("the game seed", drawing_seed(projection, meta.seed)),
        ("the hiding key", hiding_key(meta.seed)),
        ("the seat key", meta.seat_key),
        ("the node's seed key", bytes.fromhex(TEST_SEED_KEY)),
        ("the node's signing key", bytes.fromhex(TEST_SIGNING_KEY)),
        *(("a seat's token", token) for token in game.tokens),
        *(("a secret option", meta.full_options(projection).get(name)) for name in engine.secret_options),
        *(("a part of an event spectators do not see", value) for value in _hidden_payload_values(engine, envelopes)),
        *(("a hand or pile of the state", value) for value in _hidden_in_state(projection.state)),
    ]
    shown = [events_for(engine, envelopes, None), view_for(projection, None), projection.seat_list(),
             await (await client.get(f"/games/{game.id}")).json(),
             await (await client.get("/games", params={"status": "active"})).json()]
    for ended in game.ended:
        shown.append(events_for(engine, await service.events(ended), None))
    public = b"\x00".join(
        encoded
        for value in shown
        for encoded in (msgpack.packb(value, use_bin_type=True), json.dumps(value).encode(),
                        json.dumps(value, separators=(",", ":")).encode())
    )
    needles: dict[bytes, tuple[str, str]] = {}
    for what, value in secrets:
        for encoded in _encodings(value):
            if len(encoded) >= SHORTEST:
                needles.setdefault(encoded, (what, f"{game.game} game {game.id}"))
    return needles, public


@pytest.mark.timeout(240)
async def test_a_dump_of_every_key_and_file_of_running_games_holds_nothing_a_spectator_may_not_see(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    async with EmbeddedServer(data_dir) as server:
        client = await aiohttp_client(create_app(settings_for(server.url), engines=ENGINES))
        chosen, rng = _games(), random.Random(7)
        for game in chosen:
            await _play(client, game, rng)
        needles: dict[bytes, tuple[str, str]] = {}
        public = []
        for game in chosen:
            found, seen = await _needles(client, game)
            needles.update({needle: what for needle, what in found.items() if needle not in needles})
            public.append(seen)
        # What a spectator of any game sees is no secret (a card hidden in one game is played in another).
        needles = {needle: what for needle, what in needles.items() if not any(needle in seen for seen in public)}
        for game in chosen:
            kinds = {what for what, label in needles.values() if label.endswith(game.id)}
            assert {"the server seed", "the hiding key", "a part of an event spectators do not see"} <= kinds, kinds
        assert ("a secret option", f"castle game {chosen[2].id}") in needles.values()
        assert ("a hand or pile of the state", f"castle_panic game {chosen[3].id}") in needles.values()
        await client.close()  # the node is gone; what it left is in the store
        reader = redis.asyncio.Redis.from_url(server.url)
        try:
            dump = await _dump(reader, data_dir)
        finally:
            await reader.aclose()
        assert len(dump) > 100_000  # the events, metas and append-only file are all there
        leaked = sorted({(what, needle) for needle, what in needles.items() if needle in dump})
        assert leaked == [], f"{len(leaked)} secrets in the dump, e.g. {leaked[:5]}"
