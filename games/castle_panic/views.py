"""What each viewer may see of a Castle Panic game: ``view`` (``public_view`` and
``private_view`` together), ``redact`` and ``summary``.

Open by the rules: the board, every hand (the base game deals hands face up), both discard
piles, trophies. Never sent to anyone: the castle deck's contents beyond its size (it has no
order to leak) and the monster pile beyond its size. Sent only to its owner: the Overlord's
hand of tokens, and under the hidden-hands rule ("Friends Close, Enemies Closer") each hand and
the cards of a trade the viewer is not part of.

``redact`` works on the event alone, so the events that can carry a secret say whose it is:
``cards_drawn``/``trade_proposed``/``cards_traded`` carry ``hidden`` (the hidden-hands rule was
on) and ``overlord_drew`` carries the Overlord's ``seat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from games.base import Event
from games.castle_panic.data import ARC_COLOUR, FORTIFY_TOKENS, Ring
from games.castle_panic.legal import legal_moves
from games.castle_panic.run import acting_seat, living_castle_seats, waiting_for
from games.castle_panic.scoring import seat_scores
from games.castle_panic.state import Board, State

__all__ = ["view", "public_view", "private_view", "redact", "summary"]


_RING_NAMES: Mapping[int, str] = MappingProxyType({ring.value: ring.name.lower() for ring in Ring})
_ARC_COLOURS: Mapping[int, str] = MappingProxyType({arc: colour.value for arc, colour in ARC_COLOUR.items()})
"""The names a view shows, looked up once here rather than through the enums for every monster."""


def _monster_view(tar: Any, m: Any) -> dict[str, Any]:
    return {
        "id": m.id,
        "kind": m.kind,
        "ring": m.ring,
        "ring_name": _RING_NAMES[m.ring],
        "arc": m.arc,
        "colour": _ARC_COLOURS[m.arc],
        "hp": m.hp,
        "max_hp": m.max_hp,
        "tarred": tar == m.id,
    }


def _trade_view(state: State, viewer: int | None) -> dict[str, Any] | None:
    trade = state.turn.trade
    if trade is None:
        return None
    assert state.config is not None
    out: dict[str, Any] = {"from": trade.proposer, "to": trade.to}
    if not state.config.options.hidden_hands or viewer in (trade.proposer, trade.to):
        out["give"] = trade.give
        out["take"] = trade.take
    return out


def view(state: State, viewer: int | None) -> dict[str, Any]:
    """The game as ``viewer`` (a seat, or None for a spectator) may see it, with its legal moves:
    :func:`public_view` and :func:`private_view` together."""
    return {**public_view(state), **private_view(state, viewer)}


def private_view(state: State, viewer: int | None) -> dict[str, Any]:
    """The fields that may differ between viewers: ``viewer``, ``legal``, for the Overlord alone
    ``overlord_hand``, and under the hidden-hands rule ``hands`` (each seat's own only) and
    ``trade`` (its cards only to its two parties); without that rule those two are public."""
    config = state.config
    if config is None:
        return {"legal": []}
    out: dict[str, Any] = {"viewer": viewer, "legal": legal_moves(state, viewer)}
    if config.options.hidden_hands:
        out["hands"] = _hands(state, viewer)
        out["trade"] = _trade_view(state, viewer)
    if config.overlord is not None and viewer == config.overlord:
        out["overlord_hand"] = list(state.tokens.overlord_hand)
    return out


def _hands(state: State, viewer: int | None) -> list[list[str] | None]:
    assert state.config is not None
    hidden = state.config.options.hidden_hands
    return [list(hand) if not hidden or viewer == seat else None for seat, hand in enumerate(state.cards.hands)]


def _board_view(board: Board) -> dict[str, Any]:
    return {
        "monsters": [_monster_view(board.tar, m) for m in board.monsters],
        "walls": sorted(board.walls),
        "fortified": sorted(board.fortified),
        "fortify_tokens_left": FORTIFY_TOKENS - len(board.fortified),
        "towers": sorted(board.towers),
        "tar": board.tar,
    }


def _turn_state(state: State) -> dict[str, Any]:
    """What the turn has used of its limits (discards, trades, proposals, plays, draws)."""
    turn, config = state.turn, state.config
    assert config is not None
    return {
        "discards_used": turn.discards,
        "discard_limit": config.discard_limit,
        "trades_used": turn.trades,
        "trades_per_turn": config.trades_per_turn,
        "proposals_refused": turn.proposals,
        "plays": turn.plays,
        "missing_played": turn.missing,
        "draws_left": turn.draws_left,
    }


def _pending_view(state: State) -> dict[str, Any]:
    """The choices the game waits on: damage to assign and discards owed."""
    return {
        "damage": [
            {"seat": c.seat, "arc": c.arc, "structure": c.structure, "candidates": list(c.candidates)}
            for c in state.pending.damage
        ],
        "discards": sorted(state.pending.discards),
        "discard_reason": state.pending.discard_reason if state.pending.discards else None,
    }


def public_view(state: State) -> dict[str, Any]:
    """Every field the same for every viewer: the board, counts, discards, scores, the turn."""
    config = state.config
    if config is None:
        return {"game": "castle_panic", "started": False}
    options = config.options
    board, cards, tokens, turn, house = state.board, state.cards, state.tokens, state.turn, state.house
    scores = [row._asdict() for row in seat_scores(state)]
    out: dict[str, Any] = {
        "game": "castle_panic",
        "started": True,
        "seats": config.seats,
        "castle_seats": list(config.castle_seats),
        "overlord": config.overlord,
        "options": options.as_dict(),
        "turn": turn.number,
        "turn_seat": turn.seat,
        "active": acting_seat(state),
        "phase": turn.phase.value,
        "waiting_for": waiting_for(state),
        "hand_size": house.hand_size,
        "board": _board_view(board),
        "hand_counts": [len(hand) for hand in cards.hands],
        "deck_size": len(cards.deck),
        "discard": list(cards.discard),
        "removed_cards": list(cards.removed),
        "monster_pile_size": len(tokens.pile),
        "monster_discard": list(tokens.discard),
        "removed_tokens": list(tokens.removed),
        "trophies": [list(t) for t in tokens.trophies],
        "scores": scores,
        "turn_state": _turn_state(state),
        "pending": _pending_view(state),
        "result": None if state.result is None else _result(state),
    }
    if not options.hidden_hands:
        out["hands"] = _hands(state, None)
        out["trade"] = _trade_view(state, None)
    if config.overlord is not None:
        out["overlord_hand_size"] = len(tokens.overlord_hand)
        out["overlord_plays_left"] = turn.overlord_plays
        out["overlord_mode"] = turn.overlord_mode
    if options.my_home_is_my_castle:
        out["my_home"] = {
            "claims": [{"arc": arc, "seat": seat} for arc, seat in house.claims],
            "kings_tower": house.kings_tower,
            "eliminated": sorted(house.eliminated),
        }
    return out


def redact(event: Event, viewer: int | None) -> Event | None:
    """The event as ``viewer`` may see it: secret card and token ids are replaced by counts."""
    p = event.payload
    kind = event.type
    if kind == "cards_drawn" and p.get("hidden") and viewer != p["seat"]:
        return Event(kind, {"seat": p["seat"], "count": len(p["cards"]), "reason": p["reason"], "hidden": True})
    if kind == "overlord_drew" and viewer != p["seat"]:
        return Event(kind, {"seat": p["seat"], "count": len(p["tokens"]), "plays": p["plays"]})
    if kind in ("trade_proposed", "cards_traded") and p.get("hidden") and viewer not in (p["from"], p["to"]):
        return Event(kind, {"from": p["from"], "to": p["to"], "hidden": True})
    return event


def _result(state: State) -> dict[str, Any]:
    result = state.result
    assert result is not None and state.config is not None
    if result.outcome == "win":
        winners = list(living_castle_seats(state))
    else:
        winners = [state.config.overlord] if state.config.overlord is not None else []
    return {
        "outcome": result.outcome,
        "reason": result.reason,
        "winners": winners,
        "master_slayers": list(result.master_slayers),
        "scores": [{"seat": seat, "vp": vp, "slain": slain} for seat, vp, slain in result.scores],
    }


def summary(state: State) -> dict[str, Any]:
    """Status, turn, towers left, scores and the outcome, for the lobby and replays."""
    if state.config is None:
        return {"status": "open"}
    out: dict[str, Any] = {
        "status": "finished" if state.result is not None else "active",
        "turn": state.turn.number,
        "towers": len(state.board.towers),
        "monster_pile": len(state.tokens.pile),
        "monsters_on_board": len(state.board.monsters),
    }
    if state.result is not None:
        out.update(_result(state))
    return out
