"""A board that settles late reads exactly as one settled after every change.

``Board`` records its changes and settles (brings features and frontier up to date) when one of
them is first read. These checks fold random Carcassonne and Castle games twice, once reading
every board as it is made and once reading only at the end (or newest first), and compare
everything a caller can see, the order of ``features`` included (views and final scoring walk
it in that order).
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import find_engine
from games.base import fold, owing_seat
from games.tileboard import Board, Follower
from games.tileboard.settling import MAX_PENDING as _MAX_PENDING
from service.fairness.draw_schemes import LegacyRandom

GAMES = st.sampled_from([("carcassonne", "inns_cathedrals"), ("castle", "falcon")])


def events_of_a_game(game: str, options: dict[str, Any], seed: int) -> list[Any]:
    engine = find_engine(game)
    rng = LegacyRandom(seed)
    events = list(engine.setup(options, 2, rng))
    state = fold(engine, events)
    while not engine.is_terminal(state):
        seat = owing_seat(engine, state, 2)
        assert seat is not None  # a game not over always waits for someone
        for event in engine.decide(state, seat, rng.choice(engine.legal_moves(state, seat)), rng):
            state = engine.evolve(state, event)
            events.append(event)
    return events


def boards_folded(game: str, events: list[Any], *, read_each: bool) -> list[Board]:
    """The board after every event; with ``read_each`` each is settled as soon as it is made."""
    engine = find_engine(game)
    state, boards = engine.initial_state(), []
    for event in events:
        state = engine.evolve(state, event)
        if state.board is not None:
            if read_each:
                state.board.features  # noqa: B018 -- reading settles the board
            boards.append(state.board)
    return boards


def seen(board: Board) -> tuple[Any, ...]:
    """Everything a caller reads of a board, with the orders of its maps."""
    return (
        list(board.cells.items()),
        list(board.seg_feature.items()),
        list(board.features.items()),
        list(board.frontier.items()),
        board.next_id,
    )


@settings(deadline=None, max_examples=6, derandomize=True)
@given(game=GAMES, seed=st.integers(0, 2**32 - 1), with_expansion=st.booleans())
def test_a_board_read_late_equals_one_read_after_every_change(game, seed, with_expansion):
    name, expansion = game
    events = events_of_a_game(name, {expansion: with_expansion}, seed)
    eager = boards_folded(name, events, read_each=True)
    late = boards_folded(name, events, read_each=False)
    assert seen(late[-1]) == seen(eager[-1])
    # Earlier boards, read newest first after the last one settled, are still their own values.
    for index in range(len(late) - 2, -1, -7):
        assert seen(late[index]) == seen(eager[index])
    assert late[-1] == eager[-1]


def test_settling_leaves_the_board_it_started_from_as_it_was():
    events = events_of_a_game("carcassonne", {"inns_cathedrals": True}, 7)
    boards = boards_folded("carcassonne", events, read_each=False)
    middle = boards[len(boards) // 2]
    before = seen(middle)
    placed = next(iter(middle.cells.values()))
    spots = middle.free_segments(placed.x, placed.y)
    assert spots, "the tile has a spot for a follower"
    changed = middle.with_follower(Follower(0, "normal", placed.x, placed.y, spots[0]))
    changed.features  # noqa: B018
    assert seen(middle) == before
    assert seen(boards_folded("carcassonne", events, read_each=True)[len(boards) // 2]) == before


def test_a_long_run_of_changes_settles_on_the_way():
    events = events_of_a_game("carcassonne", {}, 3)
    boards = boards_folded("carcassonne", events, read_each=False)
    assert len(boards) > 2 * _MAX_PENDING
    assert all(len(board._changes) < _MAX_PENDING for board in boards)


def boards_kept_by(board: Board) -> set[int]:
    """Ids of the boards that ``board`` keeps alive (itself included)."""
    kept, todo = set(), [board]
    while todo:
        each = todo.pop()
        if id(each) in kept:
            continue
        kept.add(id(each))
        todo += [ref for ref in gc.get_referents(each) if isinstance(ref, Board)]
    return kept


@pytest.mark.parametrize("game, options", [("carcassonne", {}), ("castle", {"falcon": True})])
def test_an_unsettled_board_keeps_no_chain_of_the_boards_before_it(game, options):
    """A cached game folded from the store holds its last board unread: that board must not
    hold every board of the fold."""
    events = events_of_a_game(game, options, 13)
    engine = find_engine(game)
    for end in (len(events) // 3, len(events) // 2, len(events) - 1):
        state = fold(engine, events[:end])
        assert len(boards_kept_by(state.board)) <= 3


def test_followers_cleared_by_segment_equal_followers_cleared_by_feature():
    events = events_of_a_game("carcassonne", {"inns_cathedrals": True}, 11)
    boards = boards_folded("carcassonne", events, read_each=False)
    board = max(boards[::5], key=lambda b: sum(1 for _ in b.followers()))
    held = [f for f in board.all_features() if f.followers]
    assert len(held) > 1
    by_feature = board.without_followers(f.id for f in held)
    by_segment = board.without_followers_at(
        (follower.x, follower.y, follower.segment) for f in held for follower in f.followers
    )
    assert seen(by_segment) == seen(by_feature)
    assert not any(f.followers for f in by_segment.all_features())


def test_a_board_whose_settling_the_next_change_took_over_still_reads_as_its_own_value():
    """A query of a few features (``features_around``) leaves the settling unfrozen for the next
    change to carry on from; the board it came from must still read as itself afterwards."""
    events = events_of_a_game("castle", {"falcon": True}, 5)
    eager = boards_folded("castle", events, read_each=True)
    late = boards_folded("castle", events, read_each=False)
    for index in range(1, len(late) - 1, 9):
        board, after = late[index], late[index + 1]
        placed = next(reversed(board.cells.values()))
        board.features_around(placed.x, placed.y)  # keeps its settling unfrozen
        after.features_around(placed.x, placed.y)  # takes it over, if ``after`` came from ``board``
        assert seen(after) == seen(eager[index + 1])
        assert seen(board) == seen(eager[index])


def test_complete_features_around_are_the_complete_ones_of_all_around():
    events = events_of_a_game("castle", {"falcon": False}, 9)
    for board in boards_folded("castle", events, read_each=False)[::6]:
        for placed in list(board.cells.values())[-3:]:
            wanted = [(ref, f) for ref, f in board.features_around(placed.x, placed.y) if f.complete]
            assert board.features_around(placed.x, placed.y, complete=True) == wanted
