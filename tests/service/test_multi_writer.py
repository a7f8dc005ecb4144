"""Two nodes writing one game: the command path's retry branches, forced, not left to timing.

Node A seats the players, so its cache holds the game at version 6, and no socket on A watches
the game, so A's stream reader never moves that cache on. The seats then play on node B, over
B's websockets, and the next command goes to A's command path (the call ``service/edge/ws.py``
makes for a command frame). A therefore decides on a state it knows to be behind the stream,
every time:

* a command legal on A's stale state: A's append conflicts, A catches up and decides again;
* a command the stale state refuses (not that seat's turn there): A decides again on the
  latest state before it reports a refusal;
* ``DONJON_COMMAND_RETRIES`` bounds the attempts: with one attempt, the conflict is the end.

Seats are taken the same way: on the node's cached game first, read again when the append
conflicts or the cached game shows no seat to take.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.edge.keys import METRICS, SERVICE, STORE
from service.errors import ErrorCode, ServiceError
from service.fairness.replay import replay_game
from tests.service.conftest import (
    ENGINES,
    TEST_VAULT,
    command,
    create_tiny,
    expect_reply,
    hello,
    receive_until,
    started_tiny,
    take_seat,
)

DRAW: dict[str, Any] = {"type": "draw", "args": {}}
SET_UP = 6
"""The tiny game's version once both seats are taken and the setup is in; seat 0 moves first."""


async def stale_on_a(node_a: Any, node_b: Any, moves_on_b: int) -> tuple[str, list[str]]:
    """A started tiny game that node A holds at version 6 while ``moves_on_b`` draws, seat 0's
    first, are appended through node B: ``(game_id, tokens)``."""
    game_id, tokens = await started_tiny(node_a)
    for n in range(moves_on_b):
        seat = n % 2
        ws, _ = await hello(node_b, game_id, tokens[seat])
        await command(ws, f"b{n}", DRAW)
        reply, _ = await expect_reply(ws, f"b{n}")
        assert (reply["type"], reply["version"]) == ("ack", SET_UP + n + 1), reply
        await ws.close()
    cached = node_a.app[SERVICE].cached(game_id)
    assert cached is not None and cached.version == SET_UP  # A has not seen B's moves
    return game_id, tokens


def conflicts(node: Any) -> float:
    return node.app[METRICS].command_conflicts.value()


async def test_a_conflicting_append_catches_up_and_decides_again_on_the_latest_state(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=2)  # seat 0's turn again, at 8
    spectator, _ = await hello(node_b, game_id)
    before = conflicts(node_a)

    result = await node_a.app[SERVICE].execute(game_id, 0, "a1", DRAW)

    assert (result.version, result.duplicate) == (SET_UP + 3, False)
    assert conflicts(node_a) == before + 1  # decided on 6, refused by the store, decided on 8
    update, _ = await receive_until(spectator, lambda f: f["type"] == "update" and f["version"] == SET_UP + 3)
    assert [(e["type"], e["payload"]["seat"]) for e in update["events"]] == [("drew", 0)]
    events = await node_a.app[STORE].read(game_id, SET_UP + 3)
    assert [(e.command_id, e.actor, e.type) for e in events] == [("0:a1", 0, "drew")]
    # Decided again on version 8, so its draw is the one the seed gives at 8: replay agrees.
    report = await replay_game(node_a.app[STORE], game_id, ENGINES, TEST_VAULT)
    assert report.ok, report.problems


async def test_a_refusal_on_a_stale_cache_is_decided_again_on_the_latest_state(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=1)  # seat 1's turn at 7; at 6 seat 0's
    before = conflicts(node_a)

    result = await node_a.app[SERVICE].execute(game_id, 1, "a1", DRAW)

    assert (result.version, result.duplicate) == (SET_UP + 2, False)
    assert conflicts(node_a) == before  # no append was tried on the stale state
    assert node_a.app[SERVICE].cached(game_id).version == SET_UP + 2
    report = await replay_game(node_a.app[STORE], game_id, ENGINES, TEST_VAULT)
    assert report.ok, report.problems


async def test_a_refusal_that_stands_on_the_latest_state_is_reported(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=1)

    with pytest.raises(ServiceError) as refused:
        await node_a.app[SERVICE].execute(game_id, 0, "a1", DRAW)  # seat 0's turn at 6, not at 7

    assert refused.value.code == "not_your_turn"
    assert node_a.app[SERVICE].cached(game_id).version == SET_UP + 1  # it looked at the latest state


async def test_the_attempts_are_bounded_by_command_retries_with_the_documented_error(make_client):
    node_a, node_b = await make_client(command_retries=1), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=2)
    before = conflicts(node_a)

    with pytest.raises(ServiceError) as exhausted:
        await node_a.app[SERVICE].execute(game_id, 0, "a1", DRAW)

    assert exhausted.value.code == ErrorCode.CONFLICT and ErrorCode.CONFLICT.value == "conflict"
    assert exhausted.value.message == f"game {game_id!r} kept changing under the command; resend it"
    assert exhausted.value.http_status == 409
    assert conflicts(node_a) == before + 1  # one attempt, as configured, and no more
    assert (await node_a.app[STORE].version(game_id)) == SET_UP + 2  # nothing appended
    assert node_a.app[METRICS].commands.value(game="tiny", result="conflict") == 1


async def test_two_attempts_are_enough_for_one_conflict(make_client):
    node_a, node_b = await make_client(command_retries=2), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=2)

    result = await node_a.app[SERVICE].execute(game_id, 0, "a1", DRAW)

    assert result.version == SET_UP + 3


async def test_a_conflict_with_expected_version_is_not_decided_again(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=2)
    before = conflicts(node_a)

    with pytest.raises(ServiceError) as moved:
        await node_a.app[SERVICE].execute(game_id, 0, "a1", DRAW, expected_version=SET_UP)

    assert moved.value.code == "conflict"
    assert moved.value.message == f"game {game_id!r} moved past expected_version {SET_UP}; resync and resend"
    assert conflicts(node_a) == before + 1
    assert (await node_a.app[STORE].version(game_id)) == SET_UP + 2


async def test_a_resend_to_a_node_whose_cache_is_behind_gets_the_earlier_ack(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id, _ = await stale_on_a(node_a, node_b, moves_on_b=2)  # B applied "0:b0" at version 7
    # A decides it again on version 6; the store knows the command id, so nothing is appended.

    result = await node_a.app[SERVICE].execute(game_id, 0, "b0", DRAW, expected_version=SET_UP)

    assert (result.version, result.duplicate) == (SET_UP + 1, True)
    assert (await node_a.app[STORE].version(game_id)) == SET_UP + 2


async def test_a_seat_taken_on_a_stale_cache_conflicts_and_takes_the_next_free_seat(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id = await create_tiny(node_a)  # A caches the game with both seats free
    assert (await take_seat(node_b, game_id, "ann"))["seat"] == 0
    before = conflicts(node_a)

    taken = await take_seat(node_a, game_id, "bob")

    assert taken["seat"] == 1
    assert conflicts(node_a) == before + 1  # tried seat 0 on the stale cache, refused by the store
    names = [seat["name"] for seat in (await (await node_a.get(f"/games/{game_id}")).json())["seats"]]
    assert names == ["ann", "bob"]


async def test_a_seat_asked_of_a_stale_cache_in_a_full_game_is_refused_as_full(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id = await create_tiny(node_a)
    for name in ("ann", "bob"):
        await take_seat(node_b, game_id, name)

    response = await node_a.post(f"/games/{game_id}/seats", json={"name": "cat"})

    assert response.status == 409 and (await response.json())["error"]["code"] == "game_full"
    assert node_a.app[SERVICE].cached(game_id).version == SET_UP  # it read the game again
