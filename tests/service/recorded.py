"""Games as the code of their time recorded them (``tests/service/data``), put back in a store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from events.chain import genesis
from events.envelope import NewEvent
from events.store import cmds_key, events_key, meta_key

DATA = Path(__file__).parent / "data"


async def load_recorded(store: Any, filename: str) -> dict[str, Any]:
    """A finished game as the code of its time recorded it (``tests/service/data``), put in the
    store as that code stored it: a clear seed in the meta; a SHA-256 game linked batch by batch,
    a SHA-1 one hashed by the script. A SHA-256 game's chain must come out at the recorded head."""
    recorded = json.loads((DATA / filename).read_text())
    game_id = recorded["game_id"]
    for key in (events_key(game_id), meta_key(game_id), cmds_key(game_id)):
        await store.redis.delete(key)
    await store.create_game(game_id, {"game": recorded["game"], "seed": recorded["seed"],
                                      "options": recorded["options"], "seats": recorded.get("seats", 2)})
    sha256 = recorded["events"][0]["payload"].get("chain") == "sha256"
    head = genesis("sha256") if sha256 else None
    batch: list[dict[str, Any]] = []
    for event in [*recorded["events"], None]:
        if batch and (event is None or event["command"] is not None or event["type"] == "game.created"):
            first = batch[0]
            result = await store.append(
                game_id, [NewEvent(e["type"], e["payload"], e.get("schema", 1)) for e in batch],
                expected_version=first["version"] - 1, command_id=first["command_id"],
                actor=first["actor"], command=first["command"], ts=first["ts"], link=head)
            head = result.head if sha256 else None
            batch = []
        if event is not None:
            batch.append(event)
    if sha256:
        assert head == recorded["head"], "the stored chain is not the recorded one"
    return recorded
