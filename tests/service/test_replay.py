"""``donjon replay``: a clean game checks, a forged one does not (exit code 1)."""

from __future__ import annotations

import asyncio
import json

from events.envelope import NewEvent
from games.base import Event
from projections.game import GameProjection
from service.edge.keys import SERVICE, STORE
from service.fairness.draw_schemes import LegacyRandom
from service.fairness.replay import replay_game
from service.play.decisions import HIDDEN, decision_rng
from service.run.cli import main
from tests.service.conftest import ENGINES, TEST_VAULT, hello, kept_seed, started_tiny
from tests.service.players import Player, play_all
from tests.tinygame import TINY


async def played_tiny(client, seed=7):
    """A tiny game its seats played to the end: its id, the seats' tokens and their players (sockets open)."""
    game_id, tokens = await started_tiny(client)
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(client, game_id, token)
        players.append(Player(ws, first, LegacyRandom(seed + seat), f"p{seat}"))
    await play_all(players)
    return game_id, tokens, players


async def finished_game(client, seed=7):
    game_id, _, players = await played_tiny(client, seed)
    return game_id, sum(p.sent for p in players)


async def test_replay_of_a_finished_game_re_runs_every_batch_with_the_revealed_seed(client):
    game_id, commands = await finished_game(client)
    report = await replay_game(client.app[STORE], game_id, ENGINES, TEST_VAULT)
    assert report.problems == []
    assert report.seed_source == "revealed"
    assert report.status == "finished"
    assert report.batches_checked == 2 + commands  # two seat batches, then one per command
    assert report.summary["status"] == "finished"
    assert report.version == (await client.app[STORE].version(game_id))


async def test_replay_of_a_running_game_uses_the_kept_seed(client):
    game_id, _ = await started_tiny(client)
    report = await replay_game(client.app[STORE], game_id, ENGINES, TEST_VAULT)
    assert (report.ok, report.seed_source, report.status, report.batches_checked) == (True, "meta", "active", 2)


async def test_a_forged_random_outcome_is_a_mismatch(client):
    game_id, _ = await started_tiny(client)
    store = client.app[STORE]
    envelopes = await client.app[SERVICE].events(game_id)
    projection = GameProjection.fold(game_id, TINY, envelopes)
    state = projection.state
    seed = await kept_seed(client.app, game_id)
    honest = TINY.decide(state, 0, {"type": "draw", "args": {}}, decision_rng(projection, seed))
    forged = next(card for card in state.pile if card != honest[0].payload["card"])
    # Forged by someone holding the node key: sealed at rest as the service seals it.
    sealer = await client.app[SERVICE].cache.sealer(game_id)
    stored, command = sealer.seal(
        TINY, [Event("drew", {"seat": 0, "card": forged})], len(envelopes) + 1, {"type": "draw", "args": {}}, HIDDEN
    )
    await store.append(
        game_id,
        stored,
        expected_version=len(envelopes),
        command_id="0:forged",
        actor=0,
        command=command,
        ts=1,
        link=(await store.head(game_id))[1],
    )
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert report.problems == [
        f"versions {len(envelopes) + 1}-{len(envelopes) + 1}: re-running the batch gives other events "
        "(['drew'] vs ['drew'])"
    ]


async def test_an_event_appended_in_clear_where_spectators_see_less_is_a_mismatch(client):
    """The store keeps in clear only what a spectator may see: a drawn card or a command appended
    in clear to a game that seals (``hidden``) is found by replay, as by ``donjon verify``."""
    game_id, _ = await started_tiny(client)
    store = client.app[STORE]
    envelopes = await client.app[SERVICE].events(game_id)
    projection = GameProjection.fold(game_id, TINY, envelopes)
    card = TINY.decide(projection.state, 0, {"type": "draw", "args": {}},
                       decision_rng(projection, await kept_seed(client.app, game_id)))[0].payload["card"]
    await store.append(
        game_id,
        [NewEvent("drew", {"seat": 0, "card": card})],
        expected_version=len(envelopes),
        command_id="0:in-clear",
        actor=0,
        command={"type": "draw", "args": {}},
        ts=1,
        link=(await store.head(game_id))[1],
    )
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert report.problems == [
        f"version {len(envelopes) + 1}: the stored clear part is not what a spectator may see"
    ]


async def test_a_revealed_seed_that_breaks_the_commitment_is_a_mismatch(client):
    game_id, _ = await started_tiny(client)
    store = client.app[STORE]
    await store.append(
        game_id,
        [NewEvent("game.finished", {"seed": "00" * 32, "summary": {}})],
        expected_version=await store.version(game_id),
        command_id=None,
        actor=None,
        ts=1,
        link=(await store.head(game_id))[1],
    )
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert report.problems[0] in (
        "the revealed seed differs from the one the service kept",
        "the seed (and secret options) do not match game.created's seed_commitment",
    )


async def test_the_replay_command_exits_0_when_it_checks_and_1_otherwise(client, embedded_redis_url, monkeypatch, capsys):
    game_id, _ = await finished_game(client, seed=11)
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    assert await asyncio.to_thread(main, ["replay", game_id], ENGINES) == 0
    printed = capsys.readouterr().out
    assert f"game      {game_id} (tiny)" in printed and "OK:" in printed
    assert await asyncio.to_thread(main, ["replay", game_id, "--json"], ENGINES) == 0
    assert '"ok": true' in capsys.readouterr().out


async def test_replaying_a_game_the_store_does_not_hold_says_so_with_its_own_exit_code(
    client, embedded_redis_url, monkeypatch, capsys
):
    """Defect: an unknown id was reported as a MISMATCH with exit 1, as a tampered log is."""
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    assert await asyncio.to_thread(main, ["replay", "0000000000000000"], ENGINES) == 3
    printed = capsys.readouterr()
    assert printed.err == "donjon: no game '0000000000000000' in the store\n"
    assert "MISMATCH" not in printed.out and printed.out == ""
    assert await asyncio.to_thread(main, ["replay", "0000000000000000", "--json"], ENGINES) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["found"] is False and report["ok"] is False and report["outcome"] == "not_found"
    assert report["message"] == "no game '0000000000000000' in the store" and report["problems"] == []
    game_id, _ = await finished_game(client, seed=12)
    assert await asyncio.to_thread(main, ["replay", game_id, "--json"], ENGINES) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["found"], found["outcome"], found["message"]) == (True, "ok", None)


async def test_exporting_a_game_the_store_does_not_hold_says_so_with_the_same_exit_code(
    embedded_redis_url, monkeypatch, capsys
):
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    assert await asyncio.to_thread(main, ["export", "0000000000000000"]) == 3
    printed = capsys.readouterr()
    assert printed.err == "donjon: no game '0000000000000000' in the store\n" and printed.out == ""
