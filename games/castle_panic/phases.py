"""The commands of a turn's phases other than playing a card: discard and draw, ending a phase,
trading, an owed discard, damage assigned, and the Overlord's tokens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import (
    BadCommand,
    IllegalMove,
    NotYourTurn,
    Rng,
    int_arg,
    str_arg,
)
from games.castle_panic.data import (
    ARCS,
    TOKEN_KIND,
)
from games.castle_panic.drawing import draw_cards
from games.castle_panic.monsters import hurt, resolve_token
from games.castle_panic.run import (
    PLAY_PHASES,
    Run,
    can_propose,
    hands_hidden,
    in_hand,
    overlord_must_play,
    trade_partners,
    turn_step,
)
from games.castle_panic.state import Phase
from games.castle_panic.turns import end_turn, monster_phases, open_phase


def cmd_discard_and_draw(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    assert state.config is not None
    turn_step(state, seat, "discard_and_draw", (Phase.DISCARD,))
    card = str_arg(args, "card", "discard_and_draw")
    in_hand(state, seat, card)
    if state.turn.discards >= state.config.discard_limit:
        raise IllegalMove(f"only {state.config.discard_limit} discard-and-draw per turn")
    run.emit("cards_discarded", {"seat": seat, "cards": [card], "reason": "discard_and_draw"})
    draw_cards(run, seat, 1, rng, "discard_and_draw")


def cmd_end_phase(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    turn_step(state, seat, "end_phase", (*PLAY_PHASES, Phase.OVERLORD))
    phase = state.turn.phase
    if phase is Phase.DISCARD:
        run.emit("phase_changed", {"phase": open_phase(state, Phase.TRADE).value})
    elif phase is Phase.TRADE:
        run.emit("phase_changed", {"phase": Phase.PLAY.value})
    elif phase is Phase.PLAY:
        monster_phases(run)
    else:
        if overlord_must_play(state):
            raise IllegalMove("the board is empty: the Overlord must play a token this turn")
        end_turn(run, rng)


def cmd_propose_trade(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    assert state.config is not None
    turn_step(state, seat, "propose_trade", (Phase.TRADE,))
    to = int_arg(args, "to", "propose_trade")
    give = str_arg(args, "give", "propose_trade")
    hidden = state.config.options.hidden_hands
    take = None if hidden else str_arg(args, "take", "propose_trade")
    if hidden and args.get("take") is not None:
        raise BadCommand("with hidden hands a proposal names only 'give'; the other seat picks its card")
    if not can_propose(state, seat):
        raise IllegalMove("no more trade proposals this turn")
    if to not in trade_partners(state, seat):
        raise IllegalMove(f"cannot trade with seat {to!r}: it must be another castle player holding a card")
    in_hand(state, seat, give)
    if take is not None:
        in_hand(state, to, take)
    run.emit("trade_proposed", {"from": seat, "to": to, "give": give, "take": take, "hidden": hidden})


def cmd_accept_trade(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    trade = state.turn.trade
    if trade is None or seat != trade.to:
        raise NotYourTurn(f"seat {seat} has no trade proposal to answer")
    if trade.take is None:
        got = str_arg(args, "card", "accept_trade")
        in_hand(state, seat, got)
    else:
        got = trade.take
        if args.get("card") not in (None, got):
            raise IllegalMove(f"the proposal asks for {got!r}, not {args.get('card')!r}")
    traded = {"from": trade.proposer, "to": seat, "gave": trade.give, "got": got, "hidden": hands_hidden(state)}
    run.emit("cards_traded", traded)


def cmd_decline_trade(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    trade = run.state.turn.trade
    if trade is None or seat != trade.to:
        raise NotYourTurn(f"seat {seat} has no trade proposal to answer")
    run.emit("trade_declined", {"by": seat})


def cmd_cancel_trade(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    trade = run.state.turn.trade
    if trade is None or seat != trade.proposer:
        raise IllegalMove(f"seat {seat} has no open trade proposal to cancel")
    run.emit("trade_cancelled", {"by": seat})


def cmd_discard(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    if seat not in state.pending.discards:
        raise NotYourTurn(f"seat {seat} owes no discard")
    if state.pending.damage:
        raise IllegalMove("discards wait until the pending damage is assigned")
    card = str_arg(args, "card", "discard")
    in_hand(state, seat, card)
    run.emit("cards_discarded", {"seat": seat, "cards": [card], "reason": "owed"})


def cmd_assign_damage(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    if not state.pending.damage or state.pending.damage[0].seat != seat:
        raise NotYourTurn(f"seat {seat} has no damage to assign")
    choice = state.pending.damage[0]
    monster = str_arg(args, "monster", "assign_damage")
    if monster not in choice.candidates:
        raise IllegalMove(f"monster {monster!r} is not one of {list(choice.candidates)}")
    run.emit("damage_assigned", {"seat": seat, "monster": monster})
    hurt(run, monster, choice.structure)


def cmd_place_monster(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    turn_step(state, seat, "place_monster", (Phase.OVERLORD,))
    token = str_arg(args, "token", "place_monster")
    arc = int_arg(args, "arc", "place_monster")
    if arc not in ARCS:
        raise BadCommand(f"arc must be 1 to 6, not {arc!r}")
    if token not in state.tokens.overlord_hand:
        raise IllegalMove(f"token {token!r} is not in the Overlord's hand")
    if not TOKEN_KIND[token].is_monster:
        raise IllegalMove(f"token {token!r} is an effect, not a monster to place")
    if state.turn.overlord_mode is not None or state.turn.overlord_plays <= 0:
        raise IllegalMove("a monster may be placed in a chosen arc only as the turn's single play")
    run.emit("overlord_played", {"token": token, "mode": "chosen"})
    resolve_token(run, token, "overlord", rng, {}, arc=arc)


def cmd_play_token(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    turn_step(state, seat, "play_token", (Phase.OVERLORD,))
    token = str_arg(args, "token", "play_token")
    if token not in state.tokens.overlord_hand:
        raise IllegalMove(f"token {token!r} is not in the Overlord's hand")
    if state.turn.overlord_plays <= 0:
        raise IllegalMove("the Overlord has no token plays left this turn")
    run.emit("overlord_played", {"token": token, "mode": "rolled"})
    resolve_token(run, token, "overlord", rng, {})
