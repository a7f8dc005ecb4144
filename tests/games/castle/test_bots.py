"""The bots play only what ``legal`` lists."""

from __future__ import annotations

from games.base import fold
from games.castle import ENGINE
from games.castle.bots import greedy_bot, random_bot
from service.fairness.draw_schemes import LegacyRandom


def test_random_bot_tile_choice_is_the_one_legal_moves_would_give():
    rng = LegacyRandom(5)
    state = fold(ENGINE, ENGINE.setup({}, 2, rng))
    legal = ENGINE.legal_moves(state, 0)
    assert random_bot(ENGINE, state, 0, LegacyRandom(9)) == LegacyRandom(9).choice(legal)


def test_bots_only_play_legal_commands():
    for bot in (random_bot, greedy_bot):
        rng = LegacyRandom(11)
        state = fold(ENGINE, ENGINE.setup({"falcon": True}, 2, rng))
        while not ENGINE.is_terminal(state):
            cmd = bot(ENGINE, state, state.active, rng)
            assert cmd in ENGINE.legal_moves(state, state.active)
            for event in ENGINE.decide(state, state.active, cmd, rng):
                state = ENGINE.evolve(state, event)


def test_greedy_bot_beats_random_bot_most_of_the_time():
    wins = 0
    for seed in range(12):
        rng = LegacyRandom(seed)
        bots = (greedy_bot, random_bot) if seed % 2 else (random_bot, greedy_bot)
        greedy_seat = 0 if seed % 2 else 1
        state = fold(ENGINE, ENGINE.setup({}, 2, rng))
        while not ENGINE.is_terminal(state):
            seat = state.active
            for event in ENGINE.decide(state, seat, bots[seat](ENGINE, state, seat, rng), rng):
                state = ENGINE.evolve(state, event)
        wins += state.winners == (greedy_seat,)
    assert wins >= 9


def test_the_named_bots_share_the_interface_of_the_other_games():
    from games.castle.bots import (
        BOTS,
        GREEDY,
        RANDOM,
        choose,
        greedy_choose,
        random_choose,
    )

    assert sorted(BOTS) == ["greedy", "random"]
    assert (BOTS["random"], BOTS["greedy"]) == (RANDOM, GREEDY)
    assert [bot.name for bot in BOTS.values()] == list(BOTS)
    state = fold(ENGINE, ENGINE.setup({}, 2, LegacyRandom(3)))
    assert RANDOM.choose(state, 0, LegacyRandom(4)) == random_bot(ENGINE, state, 0, LegacyRandom(4))
    assert random_choose(state, 0, LegacyRandom(4)) == random_bot(ENGINE, state, 0, LegacyRandom(4))
    assert GREEDY.choose(state, 0, LegacyRandom(4)) == greedy_bot(ENGINE, state, 0, LegacyRandom(4))
    assert greedy_choose(state, 0, LegacyRandom(4)) == choose(state, 0, LegacyRandom(4))


def test_bots_for_binds_the_bots_to_an_engine_over_another_dataset():
    from games.castle import engine_from_json, shipped_dataset_text
    from games.castle.bots import bots_for

    other = engine_from_json(shipped_dataset_text())
    bots = bots_for(other)
    assert sorted(bots) == ["greedy", "random"]
    assert all(bot.engine is other for bot in bots.values())
    state = fold(other, other.setup({}, 2, LegacyRandom(8)))
    assert bots["greedy"].choose(state, 0, LegacyRandom(1)) in other.legal_moves(state, 0)
