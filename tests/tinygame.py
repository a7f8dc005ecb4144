"""Tiny: a two-seat card race that exercises the whole service path, for tests only.

Rules. A hidden pile holds the cards 1, 1, 2, 2, 3, 3, 4, 4, shuffled once as the game starts
(the deal ``pile``). Setup deals one card to each seat. Seats alternate; on its turn a seat either draws (a random card from the pile
into its hidden hand, at most three cards in hand), plays a card from its hand (its value is
added to the seat's score), or passes when it can do neither. The first seat to reach the
``target`` score (option, default 6) wins; when the pile and both hands are empty the higher
score wins (equal scores: no winner).

Bots: ``random`` (a uniformly random legal command) and ``first`` (the first legal command),
:class:`games.base.Bot` objects named by the engine itself in ``bots``, since the tiny game is
outside the registry of :mod:`games` (see :mod:`service.bots`).

What it exercises: turns (``not_your_turn``), an illegal move (playing a card not in hand, drawing
with a full hand), a malformed command (``bad_command``), a random outcome written into the event
(``drew``/``dealt`` carry the card), hidden information (the pile and each hand: ``redact`` strips
the card from other viewers' copies of ``dealt``/``drew``), and an end with a winner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from games.base import (
    SPECTATOR,
    BadCommand,
    BadOptions,
    Bot,
    Event,
    GameOver,
    IllegalMove,
    NotYourTurn,
    OptionSpec,
    Rng,
    UnknownCommand,
    command,
)
from games.base.rng import dealt_rest

PILE: tuple[int, ...] = (1, 1, 2, 2, 3, 3, 4, 4)
HAND_LIMIT = 3
SEATS = 2


@dataclass(frozen=True, slots=True)
class TinyState:
    """Everything, hidden parts included; ``view`` decides what leaves."""

    started: bool = False
    target: int = 6
    pile: tuple[int, ...] = ()
    hands: tuple[tuple[int, ...], ...] = ((), ())
    scores: tuple[int, ...] = (0, 0)
    turn: int = 0
    finished: bool = False
    winner: int | None = None


def _replace_at(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1 :]


def _remove_one(values: tuple[int, ...], value: int) -> tuple[int, ...]:
    index = values.index(value)
    return values[:index] + values[index + 1 :]


def _next_card(rng: Rng, pile: tuple[int, ...]) -> int:
    """The next card of the pile, dealt once (``donjon-draw-2``), or drawn from the decision's rng."""
    rest = dealt_rest(rng, "pile", 0, PILE, len(pile))
    return rest[0] if rest is not None else rng.choice(pile)


@dataclass(frozen=True, slots=True)
class TinyBot:
    """A :class:`games.base.Bot` of the tiny game: ``pick(legal, rng)`` chooses one of the legal
    commands of the seat, drawing only from ``rng``."""

    name: str
    pick: Callable[[list[dict[str, Any]], Rng], dict[str, Any]]

    def choose(self, state: TinyState, seat: int, rng: Rng) -> dict[str, Any]:
        return self.pick(TINY.legal_moves(state, seat), rng)


RANDOM = TinyBot("random", lambda legal, rng: rng.choice(legal))
"""A uniformly random legal command."""
FIRST = TinyBot("first", lambda legal, rng: legal[0])
"""The first legal command (draw while it may, then its lowest card)."""
BOTS: Mapping[str, Bot] = {bot.name: bot for bot in (RANDOM, FIRST)}


class TinyEngine:
    """The engine surface of :mod:`games.base` for the tiny card race."""

    name = "tiny"
    title = "Tiny card race (tests only)"
    min_seats = SEATS
    max_seats = SEATS
    options: Mapping[str, OptionSpec] = {
        "target": OptionSpec("int", 6, "Score that wins at once (1-20)."),
    }
    secret_options: frozenset[str] = frozenset()
    bots: Mapping[str, Bot] = BOTS

    def catalog_entry(self) -> dict[str, Any]:
        return {
            "id": self.name,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "options": {key: spec.as_dict() for key, spec in self.options.items()},
        }

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        if seats != SEATS:
            raise BadOptions(f"tiny is played by exactly 2 seats, not {seats!r}")
        unknown = set(options) - set(self.options)
        if unknown:
            raise BadOptions(f"unknown option(s) {sorted(unknown)!r}")
        target = options.get("target", 6)
        if not isinstance(target, int) or isinstance(target, bool) or not 1 <= target <= 20:
            raise BadOptions(f"option 'target' must be an int from 1 to 20, not {target!r}")
        return {"target": target}

    def initial_state(self) -> TinyState:
        return TinyState()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        pile = PILE
        events = [Event("started", {"target": options["target"]})]
        for seat in range(seats):
            card = _next_card(rng, pile)
            pile = _remove_one(pile, card)
            events.append(Event("dealt", {"seat": seat, "card": card}))
        return events

    # --- evolve: dull on purpose -----------------------------------------------------------

    def evolve(self, state: TinyState, event: Event) -> TinyState:
        p = event.payload
        match event.type:
            case "started":
                return replace(state, started=True, target=p["target"], pile=PILE)
            case "dealt":
                return replace(
                    state,
                    pile=_remove_one(state.pile, p["card"]),
                    hands=_replace_at(state.hands, p["seat"], state.hands[p["seat"]] + (p["card"],)),
                )
            case "drew":
                return replace(
                    state,
                    pile=_remove_one(state.pile, p["card"]),
                    hands=_replace_at(state.hands, p["seat"], state.hands[p["seat"]] + (p["card"],)),
                    turn=1 - p["seat"],
                )
            case "played":
                seat = p["seat"]
                return replace(
                    state,
                    hands=_replace_at(state.hands, seat, _remove_one(state.hands[seat], p["card"])),
                    scores=_replace_at(state.scores, seat, state.scores[seat] + p["card"]),
                    turn=1 - seat,
                )
            case "passed":
                return replace(state, turn=1 - p["seat"])
            case "ended":
                return replace(state, finished=True, winner=p["winner"])
        raise ValueError(f"tiny cannot fold event type {event.type!r}")

    # --- decide --------------------------------------------------------------------------

    def decide(self, state: TinyState, seat: int, cmd: dict[str, Any], rng: Rng) -> list[Event]:
        """:raises: game_over, not_your_turn, unknown_command, bad_command, illegal_move."""
        if state.finished:
            raise GameOver("the game is over")
        if seat != state.turn:
            raise NotYourTurn(f"it is seat {state.turn}'s turn, not seat {seat}'s")
        kind = cmd.get("type")
        args = cmd.get("args", {})
        if not isinstance(args, dict):
            raise BadCommand(f"args must be an object, not {args!r}")
        hand = state.hands[seat]
        if kind == "draw":
            if not state.pile:
                raise IllegalMove("the pile is empty")
            if len(hand) >= HAND_LIMIT:
                raise IllegalMove(f"a hand holds at most {HAND_LIMIT} cards")
            return [Event("drew", {"seat": seat, "card": _next_card(rng, state.pile)})]
        if kind == "play":
            card = args.get("card")
            if not isinstance(card, int) or isinstance(card, bool):
                raise BadCommand(f"play needs an int 'card', got {card!r}")
            if card not in hand:
                raise IllegalMove(f"card {card!r} is not in your hand")
            events = [Event("played", {"seat": seat, "card": card})]
            after = self.evolve(state, events[0])
            if after.scores[seat] >= state.target:
                events.append(Event("ended", {"winner": seat}))
            elif not after.pile and not any(after.hands):
                events.append(Event("ended", {"winner": _leader(after.scores)}))
            return events
        if kind == "pass":
            if self._can_act(state, seat):
                raise IllegalMove("you may pass only when you can neither draw nor play")
            return [Event("passed", {"seat": seat})]
        raise UnknownCommand(f"tiny has no command {kind!r}")

    def _can_act(self, state: TinyState, seat: int) -> bool:
        return bool(state.hands[seat]) or (bool(state.pile) and len(state.hands[seat]) < HAND_LIMIT)

    def waiting_for(self, state: TinyState) -> list[int]:
        return [] if not state.started or state.finished else [state.turn]

    def legal_moves(self, state: TinyState, seat: int | None) -> list[dict[str, Any]]:
        if seat is None or not state.started or state.finished or seat != state.turn:
            return []
        moves = []
        if state.pile and len(state.hands[seat]) < HAND_LIMIT:
            moves.append(command("draw"))
        moves.extend(command("play", card=card) for card in sorted(set(state.hands[seat])))
        return moves or [command("pass")]

    # --- what each viewer may see -------------------------------------------------------------

    def view(self, state: TinyState, viewer: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "turn": state.turn,
            "scores": list(state.scores),
            "pile_size": len(state.pile),
            "hand_sizes": [len(hand) for hand in state.hands],
            "finished": state.finished,
            "winner": state.winner,
            "legal": self.legal_moves(state, viewer),
        }
        if viewer is not SPECTATOR:
            out["hand"] = sorted(state.hands[viewer])
        return out

    def redact(self, event: Event, viewer: int | None) -> Event | None:
        if event.type in ("dealt", "drew") and viewer != event.payload["seat"]:
            return Event(event.type, {"seat": event.payload["seat"]})
        return event

    def is_terminal(self, state: TinyState) -> bool:
        return state.finished

    def reveals(self, state: TinyState, event: Event) -> bool:
        return event.type in ("started", "dealt", "drew")

    def clock_seat(self, state: TinyState) -> int | None:
        waiting = self.waiting_for(state)
        return waiting[0] if len(waiting) == 1 else None

    def timeout_answer(self, state: TinyState, seat: int) -> dict[str, Any] | None:
        return None

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        return False

    def summary(self, state: TinyState) -> dict[str, Any]:
        status = "finished" if state.finished else ("active" if state.started else "open")
        return {"status": status, "scores": list(state.scores), "winner": state.winner}


def _leader(scores: tuple[int, ...]) -> int | None:
    best = max(scores)
    leaders = [seat for seat, score in enumerate(scores) if score == best]
    return leaders[0] if len(leaders) == 1 else None


TINY = TinyEngine()
ENGINE = TINY

__all__ = ["TINY", "ENGINE", "BOTS", "RANDOM", "FIRST", "TinyBot", "TinyEngine", "TinyState", "PILE"]
