"""Playing castle cards (``play_card``): hits, All For One!, the cards that repair, move, draw or
reach into the discard pile."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from games.base import (
    BadCommand,
    IllegalMove,
    Rng,
    str_arg,
)
from games.castle_panic.data import (
    ARC_COLOUR,
    ARCS,
    CARD_KIND,
    FORTIFY_TOKENS,
    MIDDLE_RINGS,
    CardCategory,
    Colour,
    Ring,
    Soldier,
)
from games.castle_panic.drawing import draw_cards
from games.castle_panic.monsters import hurt, slay
from games.castle_panic.run import MAX_PLAYS, Run, can_draw_2, find_monster, in_hand, reaches, turn_step
from games.castle_panic.state import Board, Monster, Phase, State

# --- playing castle cards ---------------------------------------------------------------------


def _classify(cards: list[str]) -> tuple[str, dict[CardCategory, list[str]]]:
    """Name the play a set of cards makes: single, nice_shot, brick_mortar or all_for_one."""
    by_category: dict[CardCategory, list[str]] = {}
    for card in cards:
        by_category.setdefault(CARD_KIND[card].category, []).append(card)
    if len(cards) == 1:
        return "single", by_category
    cats = set(by_category)
    if len(cards) == 2 and cats == {CardCategory.HIT, CardCategory.NICE_SHOT}:
        return "nice_shot", by_category
    if len(cards) == 2 and cats == {CardCategory.BRICK, CardCategory.MORTAR}:
        return "brick_mortar", by_category
    if len(cards) == 3 and cats == {CardCategory.HIT}:
        soldiers = {CARD_KIND[c].soldier for c in cards}
        if soldiers == {Soldier.ARCHER, Soldier.KNIGHT, Soldier.SWORDSMAN}:
            return "all_for_one", by_category
    raise IllegalMove(f"cards {cards!r} cannot be played together")


def all_for_one_colour(cards: Iterable[str]) -> Colour | Literal[False] | None:
    """The colour three All For One cards agree on (None: all any-colour; False: no agreement)."""
    colours = {CARD_KIND[c].colour for c in cards} - {None}
    if len(colours) > 1:
        return False
    return next(iter(colours)) if colours else None


def all_for_one_reaches(colour: Colour | None, monster: Monster) -> bool:
    return monster.ring in MIDDLE_RINGS and (colour is None or ARC_COLOUR[monster.arc] is colour)


@dataclass(frozen=True, slots=True)
class _Play:
    """One ``play_card`` being resolved: its run, seat and raw ``target``, the ``card_played``
    payload, and the checks of the target each card makes."""

    run: Run
    seat: int
    target: Any
    played: dict[str, Any]

    def monster(self, check: Callable[[Monster], bool], what: str) -> Monster:
        target = self.target
        if not isinstance(target, str):
            raise BadCommand(f"{what} needs a monster id 'target', got {target!r}")
        m = find_monster(self.run.state, target)
        if m is None:
            raise IllegalMove(f"there is no monster {target!r} on the board")
        if not check(m):
            raise IllegalMove(f"{what} cannot target {target!r} (ring {Ring(m.ring).name.lower()}, arc {m.arc})")
        return m

    def arc(self, check: Callable[[int], bool], what: str) -> int:
        target = self.target
        if not isinstance(target, int) or isinstance(target, bool) or target not in ARCS:
            raise BadCommand(f"{what} needs an arc 1-6 as 'target', got {target!r}")
        if not check(target):
            raise IllegalMove(f"{what} cannot target arc {target}")
        return target

    def no_target(self, what: str) -> None:
        if self.target is not None:
            raise BadCommand(f"{what} takes no target, got {self.target!r}")

    def emit(self, *more: tuple[str, dict[str, Any]]) -> None:
        """``card_played``, then the events that follow from it."""
        self.run.emit("card_played", self.played)
        for type_, payload in more:
            self.run.emit(type_, payload)


def _cards_of(state: State, seat: int, args: Mapping[str, Any]) -> list[str]:
    """The card played and those played ``with`` it, each checked to be in the seat's hand."""
    card = str_arg(args, "card", "play_card")
    extra = args.get("with", [])
    if extra is None:
        extra = []
    if not isinstance(extra, list) or not all(isinstance(c, str) for c in extra):
        raise BadCommand(f"'with' must be a list of card ids, got {extra!r}")
    cards = [card, *extra]
    if len(set(cards)) != len(cards):
        raise BadCommand(f"a card may be named once per play: {cards!r}")
    for c in cards:
        in_hand(state, seat, c)
    return cards


def cmd_play_card(run: Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    assert state.config is not None
    turn_step(state, seat, "play_card", (Phase.PLAY,))
    cards = _cards_of(state, seat, args)
    if state.turn.plays >= MAX_PLAYS:
        raise IllegalMove(f"at most {MAX_PLAYS} card plays per turn")
    play, by_category = _classify(cards)
    target = args.get("target")
    card, extra = cards[0], cards[1:]
    played = _Play(run, seat, target, {"seat": seat, "card": card, "with": list(extra), "target": target})
    if play == "single":
        _play_single(played, card, rng)
    else:
        _play_together(played, play, cards, by_category[CardCategory.HIT][0] if play == "nice_shot" else "")


def _play_together(p: _Play, play: str, cards: list[str], hit: str) -> None:
    """Nice shot with a hit card, brick and mortar, or All For One!"""
    state = p.run.state
    assert state.config is not None
    options = state.config.options
    if play == "nice_shot":
        m = p.monster(lambda m: reaches(CARD_KIND[hit], m, options), f"{hit} with nice shot")
        p.emit()
        slay(p.run, m.id, "nice_shot", p.seat)
    elif play == "brick_mortar":
        arc = p.arc(lambda a: a not in state.board.walls, "brick and mortar")
        p.emit(("wall_built", {"arc": arc}))
    else:
        if not options.all_for_one:
            raise IllegalMove("All For One is not in play (option 'all_for_one')")
        colour = all_for_one_colour(cards)
        if colour is False:
            raise IllegalMove(f"All For One needs three cards of one colour, got {cards!r}")
        m = p.monster(lambda m: all_for_one_reaches(colour, m), "All For One")
        p.emit()
        slay(p.run, m.id, "all_for_one", p.seat)


def _play_single(p: _Play, card: str, rng: Rng) -> None:
    """One card played alone: a hit, or a card that acts on the board, the discards or the deck."""
    state = p.run.state
    assert state.config is not None
    options = state.config.options
    kind = CARD_KIND[card]
    category = kind.category
    if category is CardCategory.HIT:
        m = p.monster(lambda m: reaches(kind, m, options), card)
        p.emit()
        hurt(p.run, m.id, kind.name, p.seat)
    elif category is CardCategory.BARBARIAN:
        m = p.monster(lambda m: m.ring != Ring.FOREST, "barbarian")
        p.emit()
        slay(p.run, m.id, "barbarian", p.seat)
    elif category in _BOARD_CARDS:
        _BOARD_CARDS[category](p, state.board)
    elif category in _HAND_CARDS:
        _HAND_CARDS[category](p, state, rng)
    else:
        raise IllegalMove(f"{card!r} cannot be played alone (nice shot needs a hit card, brick a mortar)")


def _tar(p: _Play, board: Board) -> None:
    if board.tar is not None:
        raise IllegalMove(f"the tar token is already on {board.tar!r}")
    m = p.monster(lambda m: True, "tar")
    p.emit(("tar_placed", {"monster": m.id}))


def _fortify_wall(p: _Play, board: Board) -> None:
    if len(board.fortified) >= FORTIFY_TOKENS:
        raise IllegalMove("both fortify tokens are in use")
    arc = p.arc(lambda a: a in board.walls and a not in board.fortified, "fortify wall")
    p.emit(("wall_fortified", {"arc": arc}))


def _drive_him_back(p: _Play, board: Board) -> None:
    m = p.monster(lambda m: m.ring != Ring.FOREST, "drive him back")
    p.emit(("monsters_moved", {"moves": [[m.id, int(Ring.FOREST), m.arc]], "cause": "drive_him_back"}))


_BOARD_CARDS: dict[CardCategory, Callable[[_Play, Board], None]] = {
    CardCategory.TAR: _tar,
    CardCategory.FORTIFY_WALL: _fortify_wall,
    CardCategory.DRIVE_HIM_BACK: _drive_him_back,
}


def _missing(p: _Play, state: State, rng: Rng) -> None:
    p.no_target("missing")
    if state.turn.missing:
        raise IllegalMove("Missing has already been played this turn")
    p.emit()


def _scavenge(p: _Play, state: State, rng: Rng) -> None:
    target = p.target
    if not isinstance(target, str):
        raise BadCommand(f"scavenge needs a card id 'target' from the discard pile, got {target!r}")
    if target not in state.cards.discard:
        raise IllegalMove(f"card {target!r} is not in the discard pile")
    p.emit(("card_scavenged", {"seat": p.seat, "card": target}))


def _draw_2(p: _Play, state: State, rng: Rng) -> None:
    p.no_target("draw 2 cards")
    if not can_draw_2(state):
        raise IllegalMove("the deck and the discard pile are empty: nothing to draw")
    p.emit()
    draw_cards(p.run, p.seat, 2, rng, "draw_2")


_HAND_CARDS: dict[CardCategory, Callable[[_Play, State, Rng], None]] = {
    CardCategory.MISSING: _missing,
    CardCategory.SCAVENGE: _scavenge,
    CardCategory.DRAW_2: _draw_2,
}
