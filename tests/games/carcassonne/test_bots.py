"""The Carcassonne bots as the service seats them: the ``BOTS`` registry of named bot objects,
which play exactly what the ``*_choose`` functions play, only legal commands, the same for the
same rng."""

from __future__ import annotations

from games.carcassonne import ENGINE
from games.carcassonne.bots import (
    BOTS,
    GREEDY,
    RANDOM,
    choose,
    greedy_choose,
    random_choose,
)
from service.fairness.draw_schemes import LegacyRandom
from tests.games.carcassonne.play import new_game, play_random, send


def test_bots_names_the_random_and_greedy_bots_by_their_own_names():
    assert BOTS == {"random": RANDOM, "greedy": GREEDY}
    assert {key: bot.name for key, bot in BOTS.items()} == {"random": "random", "greedy": "greedy"}


def test_the_greedy_bot_completes_the_start_city_and_claims_it():
    game = new_game(2, tile_order=["E", "E"])
    assert GREEDY.choose(game.state, 0, LegacyRandom(1)) == {
        "type": "place_tile", "args": {"x": 0, "y": -1, "rotation": 180},
    }
    send(game, 0, GREEDY.choose(game.state, 0, LegacyRandom(1)))
    assert GREEDY.choose(game.state, 0, LegacyRandom(1)) == {
        "type": "place_follower", "args": {"at": "S", "kind": "normal"},
    }


def test_the_random_bot_draws_one_choice_among_the_legal_commands():
    game = new_game(2, tile_order=["E", "E"])
    moves = ENGINE.legal_moves(game.state, 0)
    assert len(moves) == 4
    assert [RANDOM.choose(game.state, 0, LegacyRandom(seed)) for seed in range(3)] == [
        LegacyRandom(seed).choice(moves) for seed in range(3)
    ]


def test_every_bot_plays_a_legal_command_the_functions_play_and_the_same_one_again():
    kinds = []

    def check(game, _events):
        state = game.state
        if ENGINE.is_terminal(state):
            return
        seat = state.current
        legal = ENGINE.legal_moves(state, seat)
        kinds.append(legal[0]["type"])
        for bot, function in ((RANDOM, random_choose), (GREEDY, greedy_choose), (GREEDY, choose)):
            first = bot.choose(state, seat, LegacyRandom(len(kinds)))
            assert first in legal
            assert bot.choose(state, seat, LegacyRandom(len(kinds))) == first
            assert function(state, seat, LegacyRandom(len(kinds))) == first

    play_random(2, 5, greedy_choose, observe=check, tile_order=list("EUVKWLJE"))
    assert kinds == ["place_tile", "place_follower"] * 8
