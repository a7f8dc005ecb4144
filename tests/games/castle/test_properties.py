"""Properties over many seeded random games (random and greedy bots, every option)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from games.base import fold
from games.castle import ENGINE
from games.castle.bots import greedy_bot, random_bot
from games.castle.state import Phase
from service.fairness.draw_schemes import LegacyRandom

GAMES = st.fixed_dictionaries({
    "seed": st.integers(0, 2**32 - 1),
    "falcon": st.booleans(),
    "ties": st.sampled_from(["nobody", "both"]),
    "halt": st.booleans(),
    "bots": st.sampled_from([(random_bot, random_bot), (greedy_bot, random_bot), (greedy_bot, greedy_bot)]),
})


def play(spec):
    rng = LegacyRandom(spec["seed"])
    options = {"falcon": spec["falcon"], "ties": spec["ties"], "halt_at_gates": spec["halt"] and spec["falcon"]}
    events = ENGINE.setup(options, 2, rng)
    state = fold(ENGINE, events)
    states = [state]
    steps = 0
    while not ENGINE.is_terminal(state):
        seat = state.active
        cmd = spec["bots"][seat](ENGINE, state, seat, rng)
        new = ENGINE.decide(state, seat, cmd, rng)
        assert new, cmd
        for event in new:
            state = ENGINE.evolve(state, event)
        events.extend(new)
        states.append(state)
        steps += 1
        assert steps < 1000, "the game does not end"
    return events, states


def followers_on_board(state, seat):
    counts = {"normal": 0, "prince": 0, "falconer": 0}
    for f in state.board.followers():
        if f.owner == seat:
            counts[f.kind] += 1
    return counts


@settings(deadline=None, max_examples=60)
@given(GAMES)
def test_random_games_keep_every_invariant(spec):
    events, states = play(spec)
    final = states[-1]
    falcon = spec["falcon"]
    interior = ENGINE.board_rules(falcon).interior
    tiles = 78 if falcon else 60

    # Every game ends, every castle tile is placed or set aside, and no two share a space.
    placed = [(e.payload["x"], e.payload["y"]) for e in events if e.type == "tile_placed"]
    assert len(placed) == len(set(placed))
    assert set(placed) <= interior
    assert len(placed) + len(final.set_aside) == tiles
    assert final.phase is Phase.OVER and final.remaining == 0

    # Followers are conserved (merchants stay on the board, others come back).
    for state in states[::7] + [final]:
        for seat in (0, 1):
            on_board = followers_on_board(state, seat)
            supply = state.seats[seat]
            assert supply.followers + on_board["normal"] == 6
            if falcon:
                assert int(supply.prince) + on_board["prince"] == 1
                assert int(supply.falconer) + on_board["falconer"] == 1
            else:
                assert not supply.prince and not supply.falconer and on_board["prince"] == on_board["falconer"] == 0

    # Scores only grow, and equal the sum of the marker moves.
    for seat in (0, 1):
        moves = [e.payload for e in events if e.type == "marker_moved" and e.payload["seat"] == seat]
        assert all(m["to"] >= m["from"] for m in moves)
        assert final.seats[seat].marker.score == (moves[-1]["to"] if moves else 0)
    # Wall tiles: 13 on towers at most, none taken twice from one tower.
    taken = [e.payload["tower"] for e in events if e.type == "wall_tile_taken"]
    assert len(taken) == len(set(taken)) and 0 not in taken
    # Aerie tokens are conserved: the 12 are on the table or held; a lead past the 12 (the engine
    # counts it beyond the table, see scoring.take_aeries) leaves the supply empty and the trailer none.
    if falcon:
        held = [s.aeries for s in final.seats]
        if sum(held) <= 12:
            assert final.aerie_supply + sum(held) == 12
        else:
            assert final.aerie_supply == 0 and min(held) == 0

    # Replay of the log gives the same state.
    replayed = fold(ENGINE, events)
    assert ENGINE.view(replayed, None) == ENGINE.view(final, None)
    assert replayed.board.cells.keys() == final.board.cells.keys()
    assert sorted(map(repr, replayed.board.followers())) == sorted(map(repr, final.board.followers()))

    # Events are JSON-safe and engine event types have no dot.
    for event in events:
        assert "." not in event.type
        json.dumps(event.payload)


@settings(deadline=None, max_examples=15)
@given(GAMES)
def test_views_never_show_the_stack_or_the_face_down_wall_tiles(spec):
    _, states = play(spec)
    for state in states[::5]:
        for viewer in (0, 1, None):
            view = ENGINE.view(state, viewer)
            text = json.dumps(view)
            assert "stack" not in view and "wall_pool" not in view
            # A different (same-sized) remaining stack and tower pool give the very same view.
            shuffled = state.but(
                stack=(("B01", state.remaining),) if state.remaining else (),
                wall_pool=(("flat_points", sum(n for _, n in state.wall_pool)),) if state.wall_pool else state.wall_pool,
            )
            assert json.dumps(ENGINE.view(shuffled, viewer)) == text
            if viewer is not None and state.phase is not Phase.OVER:
                assert view["legal"] == (ENGINE.legal_moves(state, viewer))
            if viewer is None:
                assert view["legal"] == []


@settings(deadline=None, max_examples=10)
@given(GAMES)
def test_every_legal_command_is_accepted(spec):
    _, states = play(spec)
    rng = LegacyRandom(0)
    for state in states[::9]:
        seat = state.active
        for cmd in ENGINE.legal_moves(state, seat)[:25]:
            assert ENGINE.decide(state, seat, cmd, rng)
        assert ENGINE.legal_moves(state, 1 - seat) == []
