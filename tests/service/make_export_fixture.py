"""Writes ``clients/js/test/data/carcassonne-export.json``: a finished Carcassonne game (a human
seat with a ``client_seed`` against a random bot) played through the service on a throwaway
embedded Valkey, exported and signed with the tests' node key. The JavaScript verifier is tested
on it, and ``tests/service/test_verify.py`` checks that this side still verifies it.
``carcassonne-export-unsealed.json`` beside it is this script's output of the version before
sealing at rest (bodies in clear, no ``hidden``), kept so that both verifiers keep checking such
games.

    python -m tests.service.make_export_fixture
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import games
from events.embedded import EmbeddedServer
from events.store import EventStore
from games.base import owing_seat
from games.carcassonne.bots import RANDOM
from service.draw_schemes import LegacyRandom
from service.export import export_game
from service.game_service import GameService
from service.signing import NodeKey
from tests.service.conftest import TEST_SIGNING_KEY, TEST_VAULT

OUT = Path(__file__).resolve().parents[2] / "clients" / "js" / "test" / "data" / "carcassonne-export.json"


async def make(folder: Path) -> dict:
    async with EmbeddedServer(folder) as server:
        store = await EventStore.connect(server.url)
        service = GameService(store, games.default_engines(), vault=TEST_VAULT)
        try:
            created = await service.create_game("carcassonne", {}, 2, {"1": "random"})
            game_id = created.game_id
            await service.take_seat(game_id, "ada", client_seed="fair-dice-7")
            human, moves = LegacyRandom(11), 0
            while (projection := await service.load(game_id)).status.value != "finished":
                if owing_seat(projection.engine, projection.state, 2) == 0:
                    moves += 1
                    command = RANDOM.choose(projection.state, 0, human)
                    await service.execute(game_id, 0, f"ada-{moves}", command)
                else:
                    await asyncio.sleep(0.01)  # the bot scheduler moves seat 1
            export = await export_game(store, game_id, "carcassonne")
            return NodeKey(bytes.fromhex(TEST_SIGNING_KEY)).sign_export(export)
        finally:
            await service.close()
            await store.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        export = asyncio.run(make(Path(folder)))
    OUT.write_text(json.dumps(export, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(export['events'])} events)")


if __name__ == "__main__":
    main()
