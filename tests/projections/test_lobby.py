"""The lobby entry and when it must be recorded again."""

from __future__ import annotations

import json

from projections.game import GameProjection
from projections.lobby import lobby_entry, needs_record
from service.draw_schemes import LegacyRandom
from tests.projections.helpers import opening, random_game
from tests.tinygame import TINY


def test_an_open_game_entry():
    projection = GameProjection.fold("g1", TINY, opening()[:2])
    assert lobby_entry(projection) == {
        "id": "g1", "game": "tiny", "status": "open", "version": 2, "seats": 2, "taken": 1,
        "names": ["ann", None], "created": 1000,
    }


def test_a_finished_game_entry_carries_the_summary():
    projection = GameProjection.fold("g1", TINY, random_game(LegacyRandom(2)))
    entry = lobby_entry(projection)
    assert entry["status"] == "finished" and entry["summary"] == projection.summary


def test_needs_record_only_when_the_lobby_would_show_something_else():
    envs = opening()
    seated = GameProjection.fold("g1", TINY, envs[:2])
    started = GameProjection.fold("g1", TINY, envs)
    stored = {"lobby": json.dumps(lobby_entry(seated))}
    assert needs_record(None, seated)
    assert needs_record({}, seated)
    assert not needs_record(stored, seated)
    assert needs_record(stored, started)
    assert not needs_record({"lobby": json.dumps(lobby_entry(started))}, started)
