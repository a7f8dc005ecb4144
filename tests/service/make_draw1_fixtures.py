"""Writes ``tests/service/data/draw1_<name>.json``: finished games of all three engines as the
service recorded them under ``donjon-draw-1`` (each decision drawing from the stream of its
stream version), so that ``tests/service/test_fairness.py`` can check they still replay and
verify, byte for byte, once new games deal with another scheme.

Each game is played through the real service on a throwaway embedded Valkey, with a fake clock
(so that a turn clock can run out on demand): bots, humans with and without a ``client_seed``, a
timeout whose bot moves, an undo, a resignation a bot takes over, options of each game. The file
holds what ``tests/service/data/legacy_*.json`` holds (the events with their command, actor,
command id and time; the server seed; the full options) plus the SHA-256 chain head.

The files were written by the code of the commit that added this script, the last to create
``donjon-draw-1`` games; since then the service creates ``donjon-draw-2`` games, and this script
asks :func:`service.play.decisions.game_created` for the old scheme to record more (new ids and seeds:
the files are not reproduced byte for byte, and need not be):

    python -m tests.service.make_draw1_fixtures
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import games
from events.embedded import EmbeddedServer
from events.store import EventStore
from games.base import owing_seat
from games.draw import DRAW_VERSION
from service.bots import bots_for
from service.errors import ErrorCode, ServiceError
from service.fairness.draw_schemes import LegacyRandom
from service.play import decisions
from service.play.game_service import GameService
from tests.service.conftest import TEST_VAULT

OUT = Path(__file__).resolve().parent / "data"
T0 = 1_700_000_000_000


@dataclass
class Plan:
    """One fixture game: who sits where and what the humans do."""

    name: str
    game: str
    seats: int
    options: dict[str, Any] = field(default_factory=dict)
    bots: dict[str, str] = field(default_factory=dict)
    client_seeds: dict[int, str] = field(default_factory=dict)
    features: dict[str, Any] = field(default_factory=dict)
    timeouts: int = 0
    """Human turns whose clock is let run out (``on_timeout``)."""
    undo_every: int = 0
    """Undo a human's command every this many (when the game lets it)."""
    resign: tuple[int, int] | None = None
    """(seat, after this many of its commands): that human resigns, a bot takes the seat."""


PLANS = [
    Plan("carcassonne_timeouts", "carcassonne", 2, bots={"1": "greedy"}, client_seeds={0: "fair-dice-7"},
         features={"clock": {"per_move_s": 30}, "on_timeout": "bot"}, timeouts=4),
    Plan("carcassonne_inns_cathedrals", "carcassonne", 3, {"inns_cathedrals": True},
         bots={"0": "random", "1": "greedy", "2": "greedy"}),
    Plan("carcassonne_tile_order", "carcassonne", 2, {"tile_order": ["U", "V", "E", "K", "D", "B", "W", "L"]},
         bots={"1": "random"}),
    Plan("castle_undo", "castle", 2, bots={"1": "greedy"}, client_seeds={0: "castle-keep"},
         features={"undo": True}, undo_every=5),
    Plan("castle_falcon", "castle", 2, {"falcon": True}, bots={"0": "random", "1": "greedy"}),
    Plan("castle_panic_coop_resign", "castle_panic", 3, {"hidden_hands": True, "master_slayer": False},
         bots={"2": "heuristic"}, client_seeds={1: "panic!"}, resign=(0, 6)),
    Plan("castle_panic_overlord", "castle_panic", 3, {"overlord": True},
         bots={"0": "heuristic", "1": "random", "2": "heuristic"}),
    Plan("castle_panic_solitaire", "castle_panic", 1, {"dwindling_resources": True, "under_construction": True}),
    Plan("castle_panic_variants", "castle_panic", 4,
         {"easier_battles": True, "my_home_is_my_castle": True, "all_for_one": True, "heroic_powers": True},
         bots={"1": "random", "2": "heuristic", "3": "random"}, client_seeds={0: "four-towers"}),
]


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        self.now += 7  # every reading a little later, as a real clock
        return self.now


async def _play(service: GameService, clock: FakeClock, plan: Plan) -> str:
    created = await service.create_game(plan.game, plan.options, plan.seats, plan.bots or None,
                                        bots_only=len(plan.bots) == plan.seats, features=plan.features or None)
    game_id = created.game_id
    humans = [seat for seat in range(plan.seats) if str(seat) not in plan.bots]
    for human in humans:
        await service.take_seat(game_id, f"human {human}", client_seed=plan.client_seeds.get(human))
    engine = service.engine_for(plan.game, game_id)
    takeover = bots_for(engine)[service.takeover_bot(plan.game) or ""]
    chooser = LegacyRandom(len(plan.name))
    counts = dict.fromkeys(humans, 0)
    timeouts_left, left = plan.timeouts, set()
    while (projection := await service.load(game_id)).status.value != "finished":
        seat = owing_seat(engine, projection.state, plan.seats)
        if seat is None or seat not in counts or seat in left:
            await asyncio.sleep(0.005)  # the bot scheduler moves the bot seats
            continue
        if plan.resign and seat == plan.resign[0] and counts[seat] >= plan.resign[1]:
            await service.execute(game_id, seat, f"resign-{seat}", {"type": "resign", "args": {}})
            left.add(seat)
            continue
        if timeouts_left and counts[seat] % 7 == 3:
            timeouts_left -= 1
            counts[seat] += 1
            clock.now += 31_000
            assert await service.clocks.fire(game_id), "the clock did not run out"
            continue
        counts[seat] += 1
        command = takeover.choose(projection.state, seat, chooser)
        try:
            await service.execute(game_id, seat, f"h{seat}-{counts[seat]}", command)
        except ServiceError as exc:  # the turn's clock ran out in a timeout earlier this turn
            assert exc.code == ErrorCode.CLOCK_EXPIRED.value, exc
            assert await service.clocks.fire(game_id), "the clock did not run out"
            continue
        if plan.undo_every and counts[seat] % plan.undo_every == 0:
            after = await service.load(game_id)
            if after.undo_owed(seat) is not None:
                await service.execute(game_id, seat, f"u{seat}-{counts[seat]}", {"type": "undo", "args": {}})
    return game_id


async def _record(store: EventStore, service: GameService, game_id: str) -> dict[str, Any]:
    envelopes = await store.read(game_id, upcast=False)
    meta = await store.get_meta(game_id)
    assert meta is not None
    projection = await service.load(game_id)
    options = {**projection.options, **(projection.secret_options or {})}
    events = [
        {"version": e.version, "type": e.type, "schema": e.schema, "payload": e.payload, "actor": e.actor,
         "command": e.command, "command_id": e.command_id, "ts": e.ts}
        for e in envelopes
    ]
    assert envelopes[0].payload["draw"] == "donjon-draw-1"
    return {"game_id": game_id, "game": projection.game, "seed": projection.seed, "options": options,
            "seats": projection.seats, "head": envelopes[-1].hash, "events": events}


async def make(folder: Path) -> dict[str, dict[str, Any]]:
    async with EmbeddedServer(folder) as server:
        store = await EventStore.connect(server.url)
        clock = FakeClock()
        service = GameService(store, games.default_engines(), vault=TEST_VAULT, clock=clock)
        try:
            out = {}
            for plan in PLANS:
                game_id = await asyncio.wait_for(_play(service, clock, plan), 600)
                out[plan.name] = await _record(store, service, game_id)
                print(f"{plan.name}: {len(out[plan.name]['events'])} events")
            return out
        finally:
            await service.close()
            await store.close()


def _created_as_draw1(*args: Any, **kwargs: Any) -> Any:
    return _game_created(*args, **kwargs, draw=DRAW_VERSION)


_game_created = decisions.game_created


def main() -> None:
    decisions.game_created = _created_as_draw1  # this script only
    with tempfile.TemporaryDirectory() as folder:
        recorded = asyncio.run(make(Path(folder)))
    for name, game in recorded.items():
        (OUT / f"draw1_{name}.json").write_text(json.dumps(game, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
