"""Castle Panic ``evolve``: fold one event into the state. Dull on purpose.

Every check and every random outcome lives in :mod:`games.castle_panic.rules` and its steps; here an event only
moves ids between zones, sets a number or flips a flag. One function per event type, found by a
dict lookup. An unknown event type is a bug and raises :class:`games.base.UnknownEvent`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.base import Event, UnknownEvent
from games.castle_panic.data import ALL_CARDS, ALL_TOKENS, CARD_KIND, SETUP_MONSTERS, TOKEN_KIND, CardCategory
from games.castle_panic.state import (
    Board,
    Cards,
    Config,
    DamageChoice,
    House,
    Monster,
    Options,
    Pending,
    Phase,
    Result,
    State,
    Tokens,
    Trade,
    Turn,
)

__all__ = ["evolve", "EVENT_TYPES"]

Payload = dict[str, Any]


def _without(items: tuple[str, ...], gone: Any) -> tuple[str, ...]:
    """``items`` minus the ids in ``gone`` (each removed once)."""
    out = list(items)
    for item in gone:
        out.remove(item)
    return tuple(out)


_PHASES: dict[str, Phase] = {phase.value: phase for phase in Phase}


def _phase(value: str) -> Phase:
    """``Phase(value)`` by a dict lookup (an enum call costs more than the rest of a phase change)."""
    phase = _PHASES.get(value)
    return Phase(value) if phase is None else phase


def _set_at(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return items[:index] + (value,) + items[index + 1 :]


def _game_started(s: State, p: Payload) -> State:
    options = Options.from_dict(p["options"])
    seats = p["seats"]
    removed = tuple(p["removed_tokens"])
    pile = _without(ALL_TOKENS, removed)
    config = Config(
        options=options,
        seats=seats,
        castle_seats=tuple(p["castle_seats"]),
        overlord=p["overlord"],
        discard_limit=p["discard_limit"],
        trades_per_turn=p["trades_per_turn"],
    )
    return State(
        config=config,
        cards=Cards(deck=ALL_CARDS, hands=((),) * seats, dealt=ALL_CARDS),
        tokens=Tokens(
            pile=pile, trophies=((),) * seats, removed=tuple(sorted(removed)), dealt=_without(pile, SETUP_MONSTERS)
        ),
        board=Board(walls=frozenset(p["walls"]), towers=frozenset(p["towers"])),
        turn=Turn(),
        pending=Pending(),
        house=House(
            hand_size=p["hand_size"],
            claims=tuple((arc, seat) for arc, seat in p["claims"]),
            kings_tower=p["kings_tower"],
        ),
    )


def _monster_placed(s: State, p: Payload) -> State:
    token = p["monster"]
    kind = TOKEN_KIND[token]
    monster = Monster(token, kind.name, p["ring"], p["arc"], kind.hp, kind.hp)
    board = s.board.but(monsters=s.board.monsters + (monster,))
    return s.but(
        tokens=_drawn_token(s.tokens, p["source"], token), board=board, turn=_draws_left(s.turn, p), house=_rolled(s, p)
    )


def _rolled(s: State, p: Payload) -> House:
    """The house after an event that may carry a die roll (``roll``: the number, or null)."""
    return s.house if p.get("roll") is None else s.house.but(rolls=s.house.rolls + 1)


def _drawn_token(tokens: Tokens, source: str, token: str) -> Tokens:
    """``tokens`` with ``token`` taken from the Overlord's hand or from the pile."""
    if source == "overlord":
        return tokens.but(overlord_hand=_without(tokens.overlord_hand, (token,)))
    return tokens.but(pile=_without(tokens.pile, (token,)))


def _draws_left(turn: Turn, p: Payload) -> Turn:
    """A token drawn in phase 6 carries the number of draws still queued after it."""
    if "draws_left" in p:
        return turn.but(draws_left=p["draws_left"])
    return turn


def _cards_drawn(s: State, p: Payload) -> State:
    seat, drawn = p["seat"], p["cards"]
    cards = s.cards
    hands = _set_at(cards.hands, seat, cards.hands[seat] + tuple(drawn))
    return s.but(cards=cards.but(deck=_without(cards.deck, drawn), hands=hands))


def _deck_reshuffled(s: State, p: Payload) -> State:
    removed = p["removed"]
    cards = s.cards
    deck = tuple(sorted(cards.deck + _without(cards.discard, removed)))
    cards = cards.but(deck=deck, discard=(), removed=cards.removed + tuple(removed), dealt=deck, deals=cards.deals + 1)
    return s.but(cards=cards)


def _turn_started(s: State, p: Payload) -> State:
    turn = Turn(number=p["turn"], seat=p["seat"], phase=Phase.DISCARD)
    return s.but(turn=turn, board=s.board.but(tar=None))


def _phase_changed(s: State, p: Payload) -> State:
    turn = s.turn.but(
        phase=_phase(p["phase"]),
        draws_left=p.get("draws", s.turn.draws_left),
        overlord_plays=p.get("plays", s.turn.overlord_plays),
    )
    return s.but(turn=turn)


def _cards_discarded(s: State, p: Payload) -> State:
    seat, gone, reason = p["seat"], p["cards"], p["reason"]
    cards = s.cards
    hands = _set_at(cards.hands, seat, _without(cards.hands[seat], gone))
    cards = cards.but(hands=hands, discard=cards.discard + tuple(gone))
    if reason == "discard_and_draw":
        return s.but(cards=cards, turn=s.turn.but(discards=s.turn.discards + 1))
    if reason == "owed":
        return s.but(cards=cards, pending=s.pending.but(discards=s.pending.discards - {seat}))
    return s.but(cards=cards)


def _trade_proposed(s: State, p: Payload) -> State:
    trade = Trade(p["from"], p["to"], p["give"], p.get("take"))
    return s.but(turn=s.turn.but(trade=trade))


def _trade_refused(s: State, p: Payload) -> State:
    return s.but(turn=s.turn.but(trade=None, proposals=s.turn.proposals + 1))


def _cards_traded(s: State, p: Payload) -> State:
    a, b = p["from"], p["to"]
    a_gave, b_gave = p["gave"], p["got"]
    hands = s.cards.hands
    hands = _set_at(hands, a, _without(hands[a], (a_gave,)) + (b_gave,))
    hands = _set_at(hands, b, _without(hands[b], (b_gave,)) + (a_gave,))
    turn = s.turn.but(trade=None, trades=s.turn.trades + 1)
    return s.but(cards=s.cards.but(hands=hands), turn=turn)


def _card_played(s: State, p: Payload) -> State:
    seat = p["seat"]
    played = (p["card"], *p.get("with", ()))
    cards = s.cards
    hands = _set_at(cards.hands, seat, _without(cards.hands[seat], played))
    missing = s.turn.missing or CARD_KIND[p["card"]].category is CardCategory.MISSING
    turn = s.turn.but(plays=s.turn.plays + 1, missing=missing)
    return s.but(cards=cards.but(hands=hands, discard=cards.discard + played), turn=turn)


def _card_scavenged(s: State, p: Payload) -> State:
    seat, card = p["seat"], p["card"]
    cards = s.cards
    hands = _set_at(cards.hands, seat, cards.hands[seat] + (card,))
    return s.but(cards=cards.but(hands=hands, discard=_without(cards.discard, (card,))))


def _monster_damaged(s: State, p: Payload) -> State:
    target, hp = p["monster"], p["hp"]
    monsters = tuple([m.but(hp=hp) if m.id == target else m for m in s.board.monsters])
    return s.but(board=s.board.but(monsters=monsters))


def _monsters_healed(s: State, p: Payload) -> State:
    healed = dict(p["monsters"])  # [[monster, hp], ...]
    monsters = tuple([m.but(hp=healed[m.id]) if m.id in healed else m for m in s.board.monsters])
    return s.but(board=s.board.but(monsters=monsters))


def _monster_slain(s: State, p: Payload) -> State:
    target, by = p["monster"], p["by"]
    board = s.board
    board = board.but(
        monsters=tuple(m for m in board.monsters if m.id != target),
        tar=None if board.tar == target else board.tar,
    )
    tokens = s.tokens
    if not p["trophy"]:
        tokens = tokens.but(discard=tokens.discard + (target,))
    else:
        tokens = tokens.but(trophies=_set_at(tokens.trophies, by, tokens.trophies[by] + (target,)))
    return s.but(board=board, tokens=tokens)


def _monsters_moved(s: State, p: Payload) -> State:
    moves = {monster: (ring, arc) for monster, ring, arc in p["moves"]}
    monsters = tuple([_moved(m, *moves[m.id]) if m.id in moves else m for m in s.board.monsters])
    return s.but(board=s.board.but(monsters=monsters))


def _moved(monster: Monster, ring: int, arc: int) -> Monster:
    return monster.but(ring=ring, arc=arc)


def _wall_destroyed(s: State, p: Payload) -> State:
    return s.but(board=s.board.but(walls=s.board.walls - {p["arc"]}))


def _wall_built(s: State, p: Payload) -> State:
    return s.but(board=s.board.but(walls=s.board.walls | {p["arc"]}))


def _fortify_removed(s: State, p: Payload) -> State:
    return s.but(board=s.board.but(fortified=s.board.fortified - {p["arc"]}))


def _wall_fortified(s: State, p: Payload) -> State:
    return s.but(board=s.board.but(fortified=s.board.fortified | {p["arc"]}))


def _tower_destroyed(s: State, p: Payload) -> State:
    return s.but(board=s.board.but(towers=s.board.towers - {p["arc"]}))


def _tar_placed(s: State, p: Payload) -> State:
    return s.but(board=s.board.but(tar=p["monster"]))


def _token_revealed(s: State, p: Payload) -> State:
    token = p["token"]
    tokens = _drawn_token(s.tokens, p["source"], token)
    return s.but(tokens=tokens.but(discard=tokens.discard + (token,)), turn=_draws_left(s.turn, p), house=_rolled(s, p))


def _draws_queued(s: State, p: Payload) -> State:
    return s.but(turn=s.turn.but(draws_left=s.turn.draws_left + p["count"]))


def _discards_owed(s: State, p: Payload) -> State:
    pending = s.pending.but(discards=s.pending.discards | frozenset(p["seats"]), discard_reason=p["reason"])
    return s.but(pending=pending)


def _damage_pending(s: State, p: Payload) -> State:
    choice = DamageChoice(p["seat"], p["arc"], p["structure"], tuple(p["candidates"]))
    return s.but(pending=s.pending.but(damage=s.pending.damage + (choice,)))


def _damage_assigned(s: State, p: Payload) -> State:
    return s.but(pending=s.pending.but(damage=s.pending.damage[1:]))


def _overlord_drew(s: State, p: Payload) -> State:
    drawn = p["tokens"]
    tokens = s.tokens.but(
        pile=_without(s.tokens.pile, drawn), overlord_hand=s.tokens.overlord_hand + tuple(drawn)
    )
    turn = s.turn.but(overlord_plays=s.turn.overlord_plays + p.get("plays", 0))
    return s.but(tokens=tokens, turn=turn)


def _overlord_played(s: State, p: Payload) -> State:
    mode = p["mode"]
    plays = 0 if mode == "chosen" else s.turn.overlord_plays - 1
    turn = s.turn.but(overlord_plays=plays, overlord_mode=mode, overlord_played=True)
    return s.but(turn=turn)


def _tower_claimed(s: State, p: Payload) -> State:
    arc, seat = p["arc"], p["seat"]
    claims = tuple(sorted([(a, owner) for a, owner in s.house.claims if a != arc] + [(arc, seat)]))
    return s.but(house=s.house.but(claims=claims))


def _player_eliminated(s: State, p: Payload) -> State:
    seat = p["seat"]
    cards = s.cards
    hand = cards.hands[seat]
    cards = cards.but(hands=_set_at(cards.hands, seat, ()), discard=cards.discard + hand)
    house = s.house.but(eliminated=s.house.eliminated | {seat})
    pending = s.pending.but(discards=s.pending.discards - {seat})
    return s.but(cards=cards, house=house, pending=pending)


def _hand_size_changed(s: State, p: Payload) -> State:
    return s.but(house=s.house.but(hand_size=p["hand_size"]))


def _game_ended(s: State, p: Payload) -> State:
    result = Result(
        outcome=p["outcome"],
        reason=p["reason"],
        scores=tuple((seat, vp, slain) for seat, vp, slain in p["scores"]),
        master_slayers=tuple(p["master_slayers"]),
    )
    return s.but(result=result, turn=s.turn.but(phase=Phase.OVER, trade=None))


_HANDLERS: dict[str, Callable[[State, Payload], State]] = {
    "game_started": _game_started,
    "monster_placed": _monster_placed,
    "cards_drawn": _cards_drawn,
    "deck_reshuffled": _deck_reshuffled,
    "turn_started": _turn_started,
    "phase_changed": _phase_changed,
    "cards_discarded": _cards_discarded,
    "trade_proposed": _trade_proposed,
    "trade_declined": _trade_refused,
    "trade_cancelled": _trade_refused,
    "cards_traded": _cards_traded,
    "card_played": _card_played,
    "card_scavenged": _card_scavenged,
    "monster_damaged": _monster_damaged,
    "monsters_healed": _monsters_healed,
    "monster_slain": _monster_slain,
    "monsters_moved": _monsters_moved,
    "wall_destroyed": _wall_destroyed,
    "wall_built": _wall_built,
    "fortify_removed": _fortify_removed,
    "wall_fortified": _wall_fortified,
    "tower_destroyed": _tower_destroyed,
    "tar_placed": _tar_placed,
    "token_revealed": _token_revealed,
    "draws_queued": _draws_queued,
    "discards_owed": _discards_owed,
    "damage_pending": _damage_pending,
    "damage_assigned": _damage_assigned,
    "overlord_drew": _overlord_drew,
    "overlord_played": _overlord_played,
    "tower_claimed": _tower_claimed,
    "player_eliminated": _player_eliminated,
    "hand_size_changed": _hand_size_changed,
    "game_ended": _game_ended,
}

EVENT_TYPES: frozenset[str] = frozenset(_HANDLERS)
"""Every event type this engine emits (none contains a dot)."""


def evolve(state: State, event: Event) -> State:
    """Apply one event; returns a new state and never mutates ``state``. The engine's ``evolve``
    is this function (one call from the fold to the handler)."""
    handler = _HANDLERS.get(event.type)
    if handler is None:
        raise UnknownEvent("castle_panic", event.type)
    return handler(state, event.payload)
