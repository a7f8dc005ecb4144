"""Legal moves: every command ``decide`` accepts from a seat now, built from the predicates it
checks, and the answer a timed-out seat gives to a trade offer."""

from __future__ import annotations

from typing import Any

from games.base import (
    command,
)
from games.castle_panic.cards import all_for_one_colour, all_for_one_reaches
from games.castle_panic.data import (
    ARCS,
    CARD_KIND,
    FORTIFY_TOKENS,
    TOKEN_KIND,
    CardCategory,
    Ring,
    Soldier,
)
from games.castle_panic.run import (
    MAX_PLAYS,
    acting_seat,
    can_draw_2,
    can_propose,
    overlord_must_play,
    reaches,
    trade_partners,
)
from games.castle_panic.state import Monster, Phase, State

# --- legal moves --------------------------------------------------------------------------------


def legal_moves(state: State, seat: int | None) -> list[dict[str, Any]]:
    """Every command ``decide`` accepts from ``seat`` now, each exactly as a client sends it."""
    if seat is None or state.config is None or state.result is not None:
        return []
    pending = state.pending
    if pending.damage:
        choice = pending.damage[0]
        if choice.seat != seat:
            return []
        return [command("assign_damage", monster=m) for m in choice.candidates]
    if pending.discards:
        if seat not in pending.discards:
            return []
        return [command("discard", card=c) for c in state.cards.hands[seat]]
    trade = state.turn.trade
    if trade is not None:
        if seat == trade.proposer:
            return [command("cancel_trade")]
        if seat != trade.to:
            return []
        if trade.take is None:
            accepts = [command("accept_trade", card=c) for c in state.cards.hands[seat]]
        else:
            accepts = [command("accept_trade")]
        return [*accepts, command("decline_trade")]
    phase = state.turn.phase
    if seat != acting_seat(state):
        return []
    if phase is Phase.DISCARD:
        moves = [command("discard_and_draw", card=c) for c in state.cards.hands[seat]]
    elif phase is Phase.TRADE:
        moves = _legal_trades(state, seat)
    elif phase is Phase.PLAY:
        moves = _legal_plays(state, seat)
    elif phase is Phase.OVERLORD:
        moves = _legal_overlord(state)
        if overlord_must_play(state):
            return moves
    else:
        return []
    moves.append(command("end_phase"))
    return moves


def timeout_answer(state: State, seat: int) -> dict[str, Any] | None:
    """``decline_trade`` when ``seat`` owes the answer to a trade offer now (nothing else pending
    before it), else ``None``: see :meth:`games.base.Engine.timeout_answer`."""
    trade, pending = state.turn.trade, state.pending
    if trade is None or trade.to != seat or pending.damage or pending.discards or state.result is not None:
        return None
    return command("decline_trade")


def _legal_trades(state: State, seat: int) -> list[dict[str, Any]]:
    assert state.config is not None
    if not can_propose(state, seat):
        return []
    hands = state.cards.hands
    moves = []
    for to in trade_partners(state, seat):
        for give in hands[seat]:
            if state.config.options.hidden_hands:
                moves.append(command("propose_trade", to=to, give=give))
            else:
                moves.extend(command("propose_trade", to=to, give=give, take=take) for take in hands[to])
    return moves


def _legal_plays(state: State, seat: int) -> list[dict[str, Any]]:
    assert state.config is not None
    if state.turn.plays >= MAX_PLAYS:
        return []
    options = state.config.options
    board = state.board
    monsters = board.monsters
    hand = state.cards.hands[seat]
    moves: list[dict[str, Any]] = []
    hits: list[tuple[str, list[str]]] = []
    by_category: dict[CardCategory, list[str]] = {}
    for card in hand:
        kind = CARD_KIND[card]
        category = kind.category
        by_category.setdefault(category, []).append(card)
        if category is CardCategory.HIT:
            targets = [m.id for m in monsters if reaches(kind, m, options)]
            hits.append((card, targets))
            moves.extend(command("play_card", card=card, target=t) for t in targets)
        elif category is CardCategory.BARBARIAN or category is CardCategory.DRIVE_HIM_BACK:
            moves.extend(command("play_card", card=card, target=m.id) for m in monsters if m.ring != Ring.FOREST)
        elif category is CardCategory.TAR:
            if board.tar is None:
                moves.extend(command("play_card", card=card, target=m.id) for m in monsters)
        elif category is CardCategory.FORTIFY_WALL:
            if len(board.fortified) < FORTIFY_TOKENS:
                moves.extend(
                    command("play_card", card=card, target=arc)
                    for arc in sorted(board.walls)
                    if arc not in board.fortified
                )
        elif category is CardCategory.MISSING:
            if not state.turn.missing:
                moves.append(command("play_card", card=card))
        elif category is CardCategory.SCAVENGE:
            moves.extend(command("play_card", card=card, target=c) for c in sorted(set(state.cards.discard)))
        elif category is CardCategory.DRAW_2 and can_draw_2(state):  # the chain's last branch
            moves.append(command("play_card", card=card))
    for nice in by_category.get(CardCategory.NICE_SHOT, ()):
        for card, targets in hits:
            moves.extend(command("play_card", card=card, target=t, **{"with": [nice]}) for t in targets)
    empty_walls = [arc for arc in ARCS if arc not in board.walls]
    if empty_walls:
        for brick in by_category.get(CardCategory.BRICK, ()):
            for mortar in by_category.get(CardCategory.MORTAR, ()):
                moves.extend(command("play_card", card=brick, target=arc, **{"with": [mortar]}) for arc in empty_walls)
    if options.all_for_one:
        moves.extend(_legal_all_for_one(hand, monsters))
    return moves


def _legal_all_for_one(hand: tuple[str, ...], monsters: tuple[Monster, ...]) -> list[dict[str, Any]]:
    by_soldier: dict[Soldier, list[str]] = {}
    for card in hand:
        kind = CARD_KIND[card]
        soldier = kind.soldier
        if kind.category is CardCategory.HIT and soldier is not None and soldier is not Soldier.HERO:
            by_soldier.setdefault(soldier, []).append(card)
    moves = []
    for archer in by_soldier.get(Soldier.ARCHER, ()):
        for knight in by_soldier.get(Soldier.KNIGHT, ()):
            for swordsman in by_soldier.get(Soldier.SWORDSMAN, ()):
                colour = all_for_one_colour((archer, knight, swordsman))
                if colour is False:
                    continue
                for m in monsters:
                    if all_for_one_reaches(colour, m):
                        moves.append(command("play_card", card=archer, target=m.id, **{"with": [knight, swordsman]}))
    return moves


def _legal_overlord(state: State) -> list[dict[str, Any]]:
    turn = state.turn
    hand = state.tokens.overlord_hand
    if turn.overlord_plays <= 0:
        return []
    moves: list[dict[str, Any]] = []
    if turn.overlord_mode is None:
        for token in hand:
            if TOKEN_KIND[token].is_monster:
                moves.extend(command("place_monster", token=token, arc=arc) for arc in ARCS)
    moves.extend(command("play_token", token=token) for token in hand)
    return moves
