"""Writes ``clients/js/test/data/draw2-<game>.json``: a finished ``donjon-draw-2`` game of each game
(a human seat with a ``client_seed`` against the service's bots, options that exercise every deal:
Inns & Cathedrals, the Falcon, the Overlord with Easier Battles and Dwindling Resources, a game with
a reshuffle and rolls) played through the service on a throwaway embedded Valkey, exported and
signed with the tests' node key. The JavaScript verifier is tested on them, and
``tests/service/test_verify.py`` checks that this side still verifies them.

``clients/js/test/data/carcassonne-export.json`` is a ``donjon-draw-1`` game this script wrote
before ``donjon-draw-2`` (kept as it is: the JavaScript verifier still re-runs its tile draws), and
``legacy-castle.json`` the export of the legacy game of ``tests/service/data/legacy_castle.json``
(no draw scheme, SHA-1), which the JavaScript verifier must call "legacy: weaker guarantees".
``carcassonne-export-unsealed.json`` is the output of the version before sealing at rest
(bodies in clear, no ``hidden``), kept so that both verifiers keep checking such games.

    python -m tests.service.make_export_fixture
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import games
from events.embedded import EmbeddedServer
from events.store import EventStore
from games.base import owing_seat
from service.bots import bots_for
from service.fairness.draw_schemes import LegacyRandom
from service.fairness.export import export_game, signed_export
from service.fairness.signing import NodeKey
from service.play.game_service import GameService
from tests.service.conftest import TEST_SIGNING_KEY, TEST_VAULT
from tests.service.recorded import load_recorded

DATA = Path(__file__).resolve().parents[2] / "clients" / "js" / "test" / "data"

Wanted = Callable[[list[str]], bool]
GAMES: dict[str, tuple[int, dict[str, Any], dict[str, str], Wanted]] = {
    "carcassonne": (3, {"inns_cathedrals": True}, {"1": "random", "2": "greedy"}, lambda kinds: True),
    "castle": (2, {"falcon": True}, {"1": "greedy"}, lambda kinds: "wall_tile_taken" in kinds),
    "castle_panic": (
        3, {"overlord": True, "easier_battles": True, "dwindling_resources": True},
        {"1": "heuristic", "2": "heuristic"},
        lambda kinds: "deck_reshuffled" in kinds and "overlord_drew" in kinds,
    ),
}
"""Per game: seats, options, bot seats (seat 0 is the human), and what the game must show."""


async def _play(service: GameService, name: str, attempt: int) -> str:
    seats, options, bots, _ = GAMES[name]
    created = await service.create_game(name, options, seats, bots)
    game_id = created.game_id
    await service.take_seat(game_id, "ada", client_seed=f"fair-dice-{attempt}")
    engine = service.engine_for(name, game_id)
    human, moves = LegacyRandom(attempt), 0
    player = bots_for(engine)["random"]
    while (projection := await service.load(game_id)).status.value != "finished":
        if owing_seat(engine, projection.state, seats) == 0:
            moves += 1
            await service.execute(game_id, 0, f"ada-{moves}", player.choose(projection.state, 0, human))
        else:
            await asyncio.sleep(0.005)  # the bot scheduler moves the other seats
    return game_id


async def make(folder: Path) -> dict[str, dict[str, Any]]:
    async with EmbeddedServer(folder) as server:
        store = await EventStore.connect(server.url)
        service = GameService(store, games.default_engines(), vault=TEST_VAULT)
        key = NodeKey(bytes.fromhex(TEST_SIGNING_KEY))
        try:
            recorded = await load_recorded(store, "legacy_castle.json")
            out = {"legacy-castle": await signed_export(store, recorded["game_id"], "castle", key)}
            for name, (*_, wanted) in GAMES.items():
                for attempt in range(1, 50):
                    game_id = await _play(service, name, attempt)
                    kinds = [e.type for e in await store.read(game_id)]
                    if wanted(kinds):
                        break
                out[f"draw2-{name}"] = key.sign_export(await export_game(store, game_id, name))
            return out
        finally:
            await service.close()
            await store.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        exports = asyncio.run(make(Path(folder)))
    for name, export in exports.items():
        path = DATA / f"{name}.json"
        path.write_text(json.dumps(export, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path} ({len(export['events'])} events)")


if __name__ == "__main__":
    main()
