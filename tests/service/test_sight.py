"""What a spectator of a delayed game may see (service/play/sight.py), move by move: the projection a
route shows is the game folded from its first event to the delayed version, whether it was
folded from the start or on from the view a spectator had before, for a delay in versions and
one in seconds (on a clock the test moves)."""

from __future__ import annotations

import random
from typing import Any

from games.base import owing_seat
from projections.game import GameProjection
from projections.views import view_for
from service.edge.keys import SERVICE
from tests.service.conftest import take_seat
from tests.service.test_lifecycle import T0, FakeClock
from tests.tinygame import TINY


async def _game(client: Any, delay: dict[str, int]) -> str:
    body = {"game": "tiny", "seats": 2, "options": {"target": 20}, "spectator_delay": delay}
    game_id: str = (await (await client.post("/games", json=body)).json())["id"]
    for name in ("ann", "bob"):
        await take_seat(client, game_id, name)
    return game_id


async def _move(service: Any, game_id: str, n: int, rng: random.Random) -> bool:
    projection = await service.load(game_id)
    if projection.status.value != "active":
        return False
    seat = owing_seat(projection.engine, projection.state, projection.seats)
    await service.execute(game_id, seat, f"m{n}", rng.choice(view_for(projection, seat)["legal"]))
    return True


def _same(a: GameProjection, b: GameProjection) -> bool:
    return (a.version, a.status, a.state, a.names) == (b.version, b.status, b.state, b.names)


async def test_a_versions_delay_folds_on_from_what_spectators_saw_to_exactly_the_delayed_game(make_client):
    client = await make_client()
    service = client.app[SERVICE]
    game_id, rng = await _game(client, {"versions": 3}), random.Random(5)
    for n in range(40):
        seen = await service.sight(game_id, None)
        present = await service.load(game_id)
        if present.status.value == "finished":
            assert seen is present
            break
        assert seen.version == max(1, present.version - 3)
        assert _same(seen, GameProjection.fold(game_id, TINY, await service.events(game_id, 1, seen.version)))
        assert (await service.sight(game_id, 0)) is present  # a seat sees the present
        await _move(service, game_id, n, rng)


async def test_a_seconds_delay_shows_what_is_that_old_and_never_goes_back(make_client):
    clock = FakeClock()
    client = await make_client(clock=clock)
    service = client.app[SERVICE]
    game_id, rng = await _game(client, {"seconds": 2}), random.Random(6)
    shown = 0
    for n in range(30):
        clock.now = T0 + 700 * (n + 1)
        if not await _move(service, game_id, n, rng):
            break
        seen = await service.sight(game_id, None)
        events = await service.events(game_id)
        if events[-1].type == "game.finished":
            assert seen.version == len(events)  # the end shows everything
            break
        old_enough = [e.version for e in events if e.ts <= clock.now - 2000]
        assert seen.version == max([1, *old_enough]) >= shown
        assert _same(seen, GameProjection.fold(game_id, TINY, events[: seen.version]))
        shown = seen.version
    assert shown > 5
