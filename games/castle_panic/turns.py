"""The turn flow: drawing up, the automatic steps between commands (phases with nothing to do,
the monsters' phases, the monster draws), the end of a turn and of the game."""

from __future__ import annotations

from games.base import (
    Rng,
)
from games.castle_panic.data import (
    OVERLORD_HAND,
    OVERLORD_PLAYS,
)
from games.castle_panic.drawing import draw_cards, overlord_draw, pile_token
from games.castle_panic.monsters import everyone, move_monsters, resolve_token
from games.castle_panic.run import MAX_TURNS, Run, can_propose, living_castle_seats
from games.castle_panic.scoring import master_slayers, seat_scores
from games.castle_panic.state import Phase, State

# --- turn flow --------------------------------------------------------------------------------


def start_turn(run: Run, seat: int, number: int, rng: Rng) -> None:
    run.emit("turn_started", {"seat": seat, "turn": number})
    missing = run.state.house.hand_size - len(run.state.cards.hands[seat])
    if missing > 0:
        draw_cards(run, seat, missing, rng, "draw_up")


def end_turn(run: Run, rng: Rng) -> None:
    state = run.state
    living = living_castle_seats(state)
    if not living:
        return
    number = state.turn.number + 1
    if number > MAX_TURNS:
        _finish(run, "loss", "turn_limit")
        return
    later = [seat for seat in living if seat > state.turn.seat]
    start_turn(run, later[0] if later else living[0], number, rng)


def advance(run: Run, rng: Rng) -> None:
    """Run every automatic step until a seat owes a command or the game ends."""
    while True:
        state = run.state
        if state.result is not None or _check_end(run):
            return
        if state.pending.damage or state.pending.discards:
            return
        assert state.config is not None
        phase = state.turn.phase
        if phase is Phase.DISCARD or phase is Phase.TRADE:
            opened = open_phase(state, phase)
            if opened is phase:
                return
            run.emit("phase_changed", {"phase": opened.value})
        elif phase is Phase.PLAY:
            return
        elif phase is Phase.DRAW:
            if state.turn.draws_left > 0 and state.tokens.pile:
                token = pile_token(state, rng)
                resolve_token(run, token, "pile", rng, {"draws_left": state.turn.draws_left - 1})
            else:
                end_turn(run, rng)
        elif phase is Phase.OVERLORD_DRAW:
            overlord_draw(run, OVERLORD_HAND - len(state.tokens.overlord_hand), 0, rng)
            plays = 0 if state.turn.missing else OVERLORD_PLAYS
            run.emit("phase_changed", {"phase": Phase.OVERLORD.value, "plays": plays})
        elif phase is Phase.OVERLORD:
            if state.turn.overlord_plays > 0 and state.tokens.overlord_hand:
                return
            end_turn(run, rng)
        else:  # pragma: no cover - SETUP and OVER never reach here
            return


def open_phase(state: State, phase: Phase) -> Phase:
    """The first phase from ``phase`` on (discard, trade, play) where the player can do
    something; phases with nothing to do are skipped in one step."""
    assert state.config is not None
    seat = state.turn.seat
    if phase is Phase.DISCARD:
        if state.cards.hands[seat] and state.turn.discards < state.config.discard_limit:
            return phase
        phase = Phase.TRADE
    if phase is Phase.TRADE and (state.turn.trade is not None or can_propose(state, seat)):
        return phase
    return Phase.PLAY


def monster_phases(run: Run) -> None:
    """Phase 5 (every monster moves), then phase 6 or the Overlord's turn, which the advance
    loop runs; movement comes after the phase change so any damage choice it raises belongs to
    the new phase and the draws resume once it is answered."""
    state = run.state
    assert state.config is not None
    if state.config.overlord is not None:
        run.emit("phase_changed", {"phase": Phase.OVERLORD_DRAW.value})
    else:
        run.emit("phase_changed", {"phase": Phase.DRAW.value, "draws": 0 if state.turn.missing else 2})
    move_monsters(run, everyone, 0, "move_phase")


def _check_end(run: Run) -> bool:
    """Loss first: the last tower falling loses even if the last monster dies with it."""
    state = run.state
    if not state.board.towers:
        _finish(run, "loss", "towers_destroyed")
        return True
    if not living_castle_seats(state):
        _finish(run, "loss", "all_players_out")
        return True
    if not state.tokens.pile and not state.tokens.overlord_hand and not state.board.monsters:
        _finish(run, "win", "monsters_defeated")
        return True
    return False


def _finish(run: Run, outcome: str, reason: str) -> None:
    state = run.state
    assert state.config is not None
    scores = seat_scores(state)
    slayers: list[int] = []
    if outcome == "win" and state.config.options.master_slayer:
        slayers = master_slayers(scores, living_castle_seats(state))
    rows = [list(row) for row in scores]
    run.emit("game_ended", {"outcome": outcome, "reason": reason, "scores": rows, "master_slayers": slayers})
