"""Castle Panic rules: setup, ``decide`` and ``legal_moves``.

``decide`` checks a command, then runs the game forward through every automatic step (drawing
up, moving monsters, drawing and resolving monster tokens, passing the turn) until some seat owes
a command again, and returns all the events of that run. It works on a scratch copy: a
:class:`~games.castle_panic.run.Run` folds each event into its own state as soon as it is emitted, so each later step
reads the consequences of the earlier ones, and the events it returns fold to exactly that state.

Random outcomes (a card drawn, a token drawn, a die roll, where the setup monsters stand) are
written into the events at the moment they happen; the deck and the monster pile have no stored
order. Under ``donjon-draw-2`` the castle deck (:data:`CARDS`, again at each reshuffle), the
monster pile (:data:`TOKENS`) and the setup monsters' arcs (:data:`SETUP_ARCS`) are each dealt
once by ``rng.deal``, and a draw is the deal's next item; each die roll has a stream of its own,
numbered by the rolls before it (:data:`DIE`). Under the older schemes each comes from the rng of
the decision (``sample``, ``choice``, ``shuffle``, ``randint``), as those games drew.

Legal moves and ``decide`` share the same predicates (``_reaches``, ``_trade_partners``,
``_overlord_must_play`` ...), so each command in ``legal_moves`` is one ``decide`` accepts.

Decisions on the open questions of the rules file (see docs/games/castle_panic.md):

* several monsters hitting one wall or tower at once: the wall (or fortify token) is removed or
  the tower destroyed once, all of them stop, and exactly one takes 1 damage, chosen by the
  acting seat with ``assign_damage`` (skipped when the candidates are interchangeable);
* a boss does not move itself with its own effect (option ``boss_moves_self``);
* the Orc Warlord moves the monsters of his colour (both arcs);
* Missing in the Overlord version: the Overlord plays no tokens in the turn that follows;
* at most one fortify token per wall; a Master Slayer tie after the slain-count tie-break is
  shared.

Guards that make every game finite (house rules, documented): Missing may be played once per
turn and Drive Him Back! needs a monster outside the Forest (both would otherwise be no-ops that
a Scavenge/Draw 2 loop could repeat); Draw 2 Cards needs a card to draw; at most
``MAX_PROPOSALS`` refused trade proposals and ``MAX_PLAYS`` card plays per turn; the Overlord
must play a token when the board is empty; the game ends as a loss after ``MAX_TURNS`` turns.

Where each step lives, each module importing only those before it: :mod:`.run` (the scratch run,
the limits, the readings of the state), :mod:`.drawing` (cards, tokens, dice), :mod:`.monsters`
(monsters move, monsters come), :mod:`.turns` (the turn flow), :mod:`.phases` (draw, discard,
trade, damage and the Overlord's commands), :mod:`.cards` (playing castle cards), :mod:`.legal`
(legal moves), and here setup, ``decide`` and the table of commands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from games.base import (
    Arg,
    Event,
    NotYourTurn,
    Rng,
    UnknownCommand,
    check_accepting,
    check_args,
    parse_command,
)
from games.castle_panic.cards import cmd_play_card
from games.castle_panic.data import (
    ARCS,
    EASIER_BATTLES_REMOVED,
    HAND_SIZES,
    OVERLORD_HAND,
    SETUP_MONSTERS,
    TOKEN_KINDS,
    Ring,
)
from games.castle_panic.drawing import draw_cards, overlord_draw
from games.castle_panic.legal import legal_moves, timeout_answer
from games.castle_panic.phases import (
    cmd_accept_trade,
    cmd_assign_damage,
    cmd_cancel_trade,
    cmd_decline_trade,
    cmd_discard,
    cmd_discard_and_draw,
    cmd_end_phase,
    cmd_place_monster,
    cmd_play_token,
    cmd_propose_trade,
)
from games.castle_panic.run import (
    CARDS,
    DIE,
    MAX_PLAYS,
    MAX_PROPOSALS,
    MAX_TURNS,
    SETUP_ARCS,
    TOKENS,
    Run,
    acting_seat,
    living_castle_seats,
    may_act,
    waiting_for,
)
from games.castle_panic.state import Options, State
from games.castle_panic.turns import advance, start_turn

__all__ = [
    "CARDS",
    "DIE",
    "SETUP_ARCS",
    "TOKENS",
    "setup",
    "decide",
    "legal_moves",
    "waiting_for",
    "timeout_answer",
    "acting_seat",
    "living_castle_seats",
    "MAX_TURNS",
    "MAX_PROPOSALS",
    "MAX_PLAYS",
    "COMMAND_TYPES",
    "ARGS",
]

# --- setup ------------------------------------------------------------------------------------


def setup(options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
    """The opening events: board, setup monsters (arcs at random), hands, first turn."""
    opts = Options.from_dict(options)
    overlord = seats - 1 if opts.overlord else None
    castle_seats = tuple(range(seats - 1 if overlord is not None else seats))
    players = len(castle_seats)
    claims, kings_tower = _tower_claims(castle_seats) if opts.my_home_is_my_castle else ([], None)
    removed: list[str] = []
    if opts.easier_battles:
        for kind, count in EASIER_BATTLES_REMOVED:
            total = TOKEN_KINDS[kind].count
            removed += [f"{kind}#{n}" for n in range(total - count + 1, total + 1)]
    run = Run(State())
    run.emit(
        "game_started",
        {
            "options": opts.as_dict(),
            "seats": seats,
            "castle_seats": list(castle_seats),
            "overlord": overlord,
            "hand_size": HAND_SIZES[players],
            "discard_limit": 2 if players == 1 else 1,
            "trades_per_turn": 0 if players == 1 else (2 if players == 6 else 1),
            "walls": [] if opts.under_construction else list(ARCS),
            "towers": list(ARCS),
            "claims": [[arc, seat] for arc, seat in claims],
            "kings_tower": kings_tower,
            "removed_tokens": removed,
        },
    )
    for token, arc in zip(SETUP_MONSTERS, _setup_arcs(rng)):
        run.emit(
            "monster_placed",
            {"monster": token, "ring": int(Ring.ARCHER), "arc": arc, "roll": None, "source": "setup"},
        )
    for seat in castle_seats:
        draw_cards(run, seat, HAND_SIZES[players], rng, "deal")
    if overlord is not None:
        overlord_draw(run, OVERLORD_HAND, 0, rng)
    start_turn(run, castle_seats[0], 1, rng)
    advance(run, rng)
    return run.events


def _setup_arcs(rng: Rng) -> list[int]:
    """The arcs of the setup monsters, in :data:`SETUP_MONSTERS` order."""
    dealt = rng.deal(SETUP_ARCS, 0, ARCS)
    if dealt is not None:
        return list(dealt)
    arcs = list(ARCS)
    rng.shuffle(arcs)
    return arcs


def _tower_claims(castle_seats: tuple[int, ...]) -> tuple[list[tuple[int, int]], int | None]:
    """My Home Is My Castle: spread the players' towers round the castle; the first unclaimed
    tower is the King's Tower, any others are spares a player can move to."""
    n = len(castle_seats)
    claims = [(1 + (index * 6) // n, seat) for index, seat in enumerate(castle_seats)]
    claimed = {arc for arc, _ in claims}
    unclaimed = [arc for arc in ARCS if arc not in claimed]
    return claims, (unclaimed[0] if unclaimed else None)


# --- commands ---------------------------------------------------------------------------------


def decide(state: State, seat: int, cmd: Mapping[str, Any], rng: Rng) -> list[Event]:
    """The events for ``cmd`` by ``seat``, up to the next command some seat owes.

    :raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move.
    """
    why_over = "" if state.result is None else f" ({state.result.outcome}: {state.result.reason})"
    check_accepting(started=state.config is not None, over=state.result is not None, why_over=why_over)
    kind, args = parse_command(cmd)
    handler = _COMMANDS.get(kind)
    if handler is None:
        raise UnknownCommand(f"castle_panic has no command {kind!r}; known: {sorted(_COMMANDS)}")
    assert state.config is not None  # check_accepting refused a game that has not started
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.config.seats:
        raise NotYourTurn(f"seat {seat!r} is not a seat of this game")
    if seat not in may_act(state):
        raise NotYourTurn(f"seat {seat} cannot {kind} now: waiting for seat(s) {waiting_for(state)}")
    check_args(kind, args, ARGS[kind])
    run = Run(state)
    handler(run, seat, args, rng)
    advance(run, rng)
    return run.events


_COMMANDS: dict[str, Callable[[Run, int, Mapping[str, Any], Rng], None]] = {
    "discard_and_draw": cmd_discard_and_draw,
    "end_phase": cmd_end_phase,
    "propose_trade": cmd_propose_trade,
    "accept_trade": cmd_accept_trade,
    "decline_trade": cmd_decline_trade,
    "cancel_trade": cmd_cancel_trade,
    "play_card": cmd_play_card,
    "discard": cmd_discard,
    "assign_damage": cmd_assign_damage,
    "place_monster": cmd_place_monster,
    "play_token": cmd_play_token,
}

COMMAND_TYPES: frozenset[str] = frozenset(_COMMANDS)

ARGS: dict[str, dict[str, Arg]] = {
    "discard_and_draw": {"card": Arg("str")},
    "end_phase": {},
    "propose_trade": {"to": Arg("int"), "give": Arg("str"), "take": Arg("str", required=False)},
    "accept_trade": {"card": Arg("str", required=False)},
    "decline_trade": {},
    "cancel_trade": {},
    "play_card": {"card": Arg("str"), "with": Arg("strs", required=False), "target": Arg("str|int", required=False)},
    "discard": {"card": Arg("str")},
    "assign_damage": {"monster": Arg("str")},
    "place_monster": {"token": Arg("str"), "arc": Arg("int")},
    "play_token": {"token": Arg("str")},
}
"""The args each command takes (:func:`games.base.check_args`): ``take`` is left out under hidden
hands, ``card`` of ``accept_trade`` given only there; ``target`` is a monster id, an arc or a card
of the discard pile, as the card played needs."""
assert set(ARGS) == COMMAND_TYPES
