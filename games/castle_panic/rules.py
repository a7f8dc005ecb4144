"""Castle Panic rules: setup, ``decide`` and ``legal_moves``.

``decide`` checks a command, then runs the game forward through every automatic step (drawing
up, moving monsters, drawing and resolving monster tokens, passing the turn) until some seat owes
a command again, and returns all the events of that run. It works on a scratch copy: a
:class:`_Run` folds each event into its own state as soon as it is emitted, so each later step
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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from games.base import (
    Arg,
    BadCommand,
    Event,
    IllegalMove,
    NotYourTurn,
    Rng,
    UnknownCommand,
    check_accepting,
    check_args,
    command,
    int_arg,
    parse_command,
    str_arg,
)
from games.castle_panic.data import (
    ARC_COLOUR,
    ARCS,
    CARD_KIND,
    CLOCKWISE,
    EASIER_BATTLES_REMOVED,
    FORTIFY_TOKENS,
    HAND_SIZES,
    MIDDLE_RINGS,
    OVERLORD_HAND,
    OVERLORD_PLAYS,
    SETUP_MONSTERS,
    TOKEN_KIND,
    TOKEN_KINDS,
    CardCategory,
    CardKind,
    Colour,
    Ring,
    Soldier,
    opposite,
    step,
)
from games.castle_panic.evolve import evolve
from games.castle_panic.scoring import master_slayers, seat_scores
from games.castle_panic.state import Monster, Options, Phase, State, Tokens
from games.draw import dealt_rest

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
]

MAX_TURNS = 500
"""Safety net: a game still running after this many turns ends as a loss (``turn_limit``)."""
MAX_PROPOSALS = 3
"""Trade proposals that may be declined or cancelled in one turn."""
MAX_PLAYS = 100
"""Card plays in one turn (far above any real turn; bounds Scavenge / Draw 2 chains)."""

_PLAGUES: dict[str, Soldier] = {
    "plague_archers": Soldier.ARCHER,
    "plague_knights": Soldier.KNIGHT,
    "plague_swordsmen": Soldier.SWORDSMAN,
}
_COLOUR_MOVES: dict[str, Colour] = {"move_red": Colour.RED, "move_green": Colour.GREEN, "move_blue": Colour.BLUE}
_EXTRA_DRAWS: dict[str, int] = {"draw_3": 3, "draw_4": 4, "goblin_king": 3}
_PLAY_PHASES = (Phase.DISCARD, Phase.TRADE, Phase.PLAY)

CARDS = "cards"
"""The castle deck's deals (``<game id>:deal:cards``, numbered by the reshuffles before)."""
TOKENS = "tokens"
"""The monster pile's deal (``<game id>:deal:tokens``): monsters, bosses and effects."""
SETUP_ARCS = "setup_arcs"
"""The arcs 1-6 dealt to the six setup monsters (``<game id>:deal:setup_arcs``)."""
DIE = "die"
"""Every d6 roll: the stream ``<game id>:die`` numbered by the rolls before it."""


class _Run:
    """The scratch state of one ``decide``/``setup`` and the events emitted so far."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, type_: str, payload: dict[str, Any]) -> None:
        event = Event(type_, payload)
        self.state = evolve(self.state, event)
        self.events.append(event)


# --- small readings of the state ---------------------------------------------------------------


def acting_seat(state: State) -> int:
    """The seat whose turn step it is: the Overlord during its turn, else the turn's player."""
    if state.turn.phase in (Phase.OVERLORD, Phase.OVERLORD_DRAW) and state.config is not None:
        assert state.config.overlord is not None
        return state.config.overlord
    return state.turn.seat


def living_castle_seats(state: State) -> tuple[int, ...]:
    """Castle players still in the game (My Home Is My Castle can put a player out)."""
    assert state.config is not None
    out = state.house.eliminated
    return tuple(seat for seat in state.config.castle_seats if seat not in out)


def waiting_for(state: State) -> list[int]:
    """The seats that owe a command now (several only when all owe a discard)."""
    if state.config is None or state.result is not None:
        return []
    pending = state.pending
    if pending.damage:
        return [pending.damage[0].seat]
    if pending.discards:
        return sorted(pending.discards)
    if state.turn.trade is not None:
        return [state.turn.trade.to]
    if state.turn.phase in _PLAY_PHASES or state.turn.phase is Phase.OVERLORD:
        return [acting_seat(state)]
    return []


def _find(state: State, monster: str) -> Monster | None:
    for m in state.board.monsters:
        if m.id == monster:
            return m
    return None


def _reaches(kind: CardKind, monster: Monster, options: Options) -> bool:
    """Whether hit card ``kind`` can hit ``monster``: ring and colour must both match."""
    if kind.colour is not None and ARC_COLOUR[monster.arc] is not kind.colour:
        return False
    if monster.ring in kind.rings:
        return True
    return options.heroic_powers and kind.soldier is Soldier.HERO and monster.ring == Ring.CASTLE


def _trade_partners(state: State, seat: int) -> list[int]:
    """Seats ``seat`` may propose a trade to now (they must hold a card; so must ``seat``)."""
    assert state.config is not None
    if not state.cards.hands[seat]:
        return []
    hands = state.cards.hands
    return [other for other in living_castle_seats(state) if other != seat and hands[other]]


def _can_propose(state: State, seat: int) -> bool:
    assert state.config is not None
    turn = state.turn
    return (
        turn.trade is None
        and turn.trades < state.config.trades_per_turn
        and turn.proposals < MAX_PROPOSALS
        and bool(_trade_partners(state, seat))
    )


def _overlord_must_play(state: State) -> bool:
    """Termination guard: with the board empty the Overlord may not pass a turn unplayed."""
    turn = state.turn
    return (
        not state.board.monsters
        and bool(state.tokens.overlord_hand)
        and turn.overlord_plays > 0
        and not turn.overlord_played
    )


def _hidden(state: State) -> bool:
    """Hidden-hands rule: events that move cards into hands carry this so ``redact`` can tell."""
    assert state.config is not None
    return state.config.options.hidden_hands


def _can_draw_2(state: State) -> bool:
    return bool(state.cards.deck or state.cards.discard)


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
    run = _Run(State())
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
        _draw_cards(run, seat, HAND_SIZES[players], rng, "deal")
    if overlord is not None:
        _overlord_draw(run, OVERLORD_HAND, 0, rng)
    _start_turn(run, castle_seats[0], 1, rng)
    _advance(run, rng)
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


# --- drawing ----------------------------------------------------------------------------------


def _draw_cards(run: _Run, seat: int, count: int, rng: Rng, reason: str) -> None:
    """Draw ``count`` castle cards, reshuffling the discards into the deck when it runs out."""
    while count > 0:
        cards = run.state.cards
        if not cards.deck:
            if not cards.discard:
                return
            run.emit("deck_reshuffled", {"removed": _dwindled(run.state)})
            continue
        take = min(count, len(cards.deck))
        rest = dealt_rest(rng, CARDS, cards.deals, cards.dealt, len(cards.deck))
        drawn = list(rest[:take]) if rest is not None else rng.sample(cards.deck, take)
        run.emit("cards_drawn", {"seat": seat, "cards": drawn, "reason": reason, "hidden": _hidden(run.state)})
        count -= len(drawn)


def _dwindled(state: State) -> list[str]:
    """Dwindling Resources: each reshuffle takes 1 Brick and 1 Mortar (if discarded) out of play."""
    assert state.config is not None
    if not state.config.options.dwindling_resources:
        return []
    gone = []
    for category in (CardCategory.BRICK, CardCategory.MORTAR):
        found = sorted(card for card in state.cards.discard if CARD_KIND[card].category is category)
        if found:
            gone.append(found[0])
    return gone


def _next_tokens(tokens: Tokens, count: int, rng: Rng) -> list[str] | None:
    """The next ``count`` tokens of the monster pile's deal; ``None`` under a scheme that draws
    per decision."""
    rest = dealt_rest(rng, TOKENS, 0, tokens.dealt, len(tokens.pile))
    return None if rest is None else list(rest[:count])


def _pile_token(state: State, rng: Rng) -> str:
    """The token drawn from the pile in phase 6."""
    dealt = _next_tokens(state.tokens, 1, rng)
    return dealt[0] if dealt is not None else rng.choice(state.tokens.pile)


def _roll(state: State, rng: Rng) -> int:
    """A d6: the stream of the roll numbered by the rolls before it (``donjon-draw-2``)."""
    return rng.stream(DIE, state.house.rolls).randint(1, 6)


def _overlord_draw(run: _Run, count: int, plays: int, rng: Rng) -> None:
    pile = run.state.tokens.pile
    take = min(count, len(pile))
    drawn: list[str] = []
    if take > 0:
        dealt = _next_tokens(run.state.tokens, take, rng)
        drawn = dealt if dealt is not None else rng.sample(pile, take)
    assert run.state.config is not None
    run.emit("overlord_drew", {"seat": run.state.config.overlord, "tokens": drawn, "plays": plays})


# --- turn flow --------------------------------------------------------------------------------


def _start_turn(run: _Run, seat: int, number: int, rng: Rng) -> None:
    run.emit("turn_started", {"seat": seat, "turn": number})
    missing = run.state.house.hand_size - len(run.state.cards.hands[seat])
    if missing > 0:
        _draw_cards(run, seat, missing, rng, "draw_up")


def _end_turn(run: _Run, rng: Rng) -> None:
    state = run.state
    living = living_castle_seats(state)
    if not living:
        return
    number = state.turn.number + 1
    if number > MAX_TURNS:
        _finish(run, "loss", "turn_limit")
        return
    later = [seat for seat in living if seat > state.turn.seat]
    _start_turn(run, later[0] if later else living[0], number, rng)


def _advance(run: _Run, rng: Rng) -> None:
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
            opened = _open_phase(state, phase)
            if opened is phase:
                return
            run.emit("phase_changed", {"phase": opened.value})
        elif phase is Phase.PLAY:
            return
        elif phase is Phase.DRAW:
            if state.turn.draws_left > 0 and state.tokens.pile:
                token = _pile_token(state, rng)
                _resolve_token(run, token, "pile", rng, {"draws_left": state.turn.draws_left - 1})
            else:
                _end_turn(run, rng)
        elif phase is Phase.OVERLORD_DRAW:
            _overlord_draw(run, OVERLORD_HAND - len(state.tokens.overlord_hand), 0, rng)
            plays = 0 if state.turn.missing else OVERLORD_PLAYS
            run.emit("phase_changed", {"phase": Phase.OVERLORD.value, "plays": plays})
        elif phase is Phase.OVERLORD:
            if state.turn.overlord_plays > 0 and state.tokens.overlord_hand:
                return
            _end_turn(run, rng)
        else:  # pragma: no cover - SETUP and OVER never reach here
            return


def _open_phase(state: State, phase: Phase) -> Phase:
    """The first phase from ``phase`` on (discard, trade, play) where the player can do
    something; phases with nothing to do are skipped in one step."""
    assert state.config is not None
    seat = state.turn.seat
    if phase is Phase.DISCARD:
        if state.cards.hands[seat] and state.turn.discards < state.config.discard_limit:
            return phase
        phase = Phase.TRADE
    if phase is Phase.TRADE and (state.turn.trade is not None or _can_propose(state, seat)):
        return phase
    return Phase.PLAY


def _monster_phases(run: _Run) -> None:
    """Phase 5 (every monster moves), then phase 6 or the Overlord's turn, which the advance
    loop runs; movement comes after the phase change so any damage choice it raises belongs to
    the new phase and the draws resume once it is answered."""
    state = run.state
    assert state.config is not None
    if state.config.overlord is not None:
        run.emit("phase_changed", {"phase": Phase.OVERLORD_DRAW.value})
    else:
        run.emit("phase_changed", {"phase": Phase.DRAW.value, "draws": 0 if state.turn.missing else 2})
    _move(run, _everyone, 0, "move_phase")


def _check_end(run: _Run) -> bool:
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


def _finish(run: _Run, outcome: str, reason: str) -> None:
    state = run.state
    assert state.config is not None
    scores = seat_scores(state)
    slayers: list[int] = []
    if outcome == "win" and state.config.options.master_slayer:
        slayers = master_slayers(scores, living_castle_seats(state))
    rows = [list(row) for row in scores]
    run.emit("game_ended", {"outcome": outcome, "reason": reason, "scores": rows, "master_slayers": slayers})


# --- monsters: damage, movement, tokens ----------------------------------------------------


def _hurt(run: _Run, monster: str, cause: str, slayer: int | None = None) -> None:
    """1 damage; at 0 the monster is slain (a trophy when a player's card did it)."""
    m = _find(run.state, monster)
    if m is None:
        return
    if m.hp <= 1:
        _slay(run, monster, cause, slayer)
    else:
        run.emit("monster_damaged", {"monster": monster, "hp": m.hp - 1, "cause": cause})


def _slay(run: _Run, monster: str, cause: str, slayer: int | None = None) -> None:
    assert run.state.config is not None
    trophy = slayer is not None and run.state.config.options.master_slayer
    run.emit("monster_slain", {"monster": monster, "by": slayer, "cause": cause, "trophy": trophy})


def _everyone(monster: Monster) -> bool:
    return True


def _move(run: _Run, chosen: Callable[[Monster], bool], delta: int, cause: str) -> None:
    """Move the chosen monsters one step at once: inward (``delta`` 0; the castle ring goes
    clockwise) or ``delta`` arcs sideways within their ring. Rules file §7.1-7.5 and §7.8."""
    board = run.state.board
    walls, towers = board.walls, board.towers
    moves: list[list[Any]] = []
    wall_hits: dict[int, list[str]] = {}
    tower_hits: dict[int, list[str]] = {}
    for m in board.monsters:
        if m.id == board.tar or not chosen(m):
            continue
        ring: int  # Monster.ring is a plain int: a Ring, or one ring further in
        if delta == 0:
            if m.ring == Ring.CASTLE:
                ring, arc = Ring.CASTLE, step(m.arc, CLOCKWISE)
            elif m.ring == Ring.SWORDSMAN and m.arc in walls:
                wall_hits.setdefault(m.arc, []).append(m.id)
                continue
            else:
                ring, arc = m.ring - 1, m.arc
        else:
            ring, arc = m.ring, step(m.arc, delta)
        moves.append([m.id, int(ring), arc])
        if ring == Ring.CASTLE and arc in towers:
            tower_hits.setdefault(arc, []).append(m.id)
    if moves:
        run.emit("monsters_moved", {"moves": moves, "cause": cause})
    for arc in sorted(wall_hits):
        if arc in run.state.board.fortified:
            run.emit("fortify_removed", {"arc": arc})
            _damage_one(run, wall_hits[arc], arc, "fortify")
        else:
            run.emit("wall_destroyed", {"arc": arc})
            _damage_one(run, wall_hits[arc], arc, "wall")
    for arc in sorted(tower_hits):
        _destroy_tower(run, arc)
        if not run.state.board.towers:
            return
        _damage_one(run, tower_hits[arc], arc, "tower")


def _damage_one(run: _Run, group: list[str], arc: int, structure: str) -> None:
    """One monster of ``group`` takes the structure's damage; the acting seat picks it unless
    the candidates are interchangeable (same kind, same hit points)."""
    state = run.state
    monsters = [m for m in state.board.monsters if m.id in group]
    if len({(m.kind, m.hp) for m in monsters}) <= 1:
        _hurt(run, monsters[0].id, structure)
        return
    run.emit(
        "damage_pending",
        {"seat": acting_seat(state), "arc": arc, "structure": structure, "candidates": [m.id for m in monsters]},
    )


def _destroy_tower(run: _Run, arc: int) -> None:
    run.emit("tower_destroyed", {"arc": arc})
    state = run.state
    assert state.config is not None
    if not state.config.options.my_home_is_my_castle or not state.board.towers:
        return
    house = state.house
    if arc == house.kings_tower:
        run.emit("hand_size_changed", {"hand_size": max(1, house.hand_size - 1)})
        owing = [seat for seat in living_castle_seats(state) if state.cards.hands[seat]]
        if owing:
            run.emit("discards_owed", {"seats": owing, "reason": "kings_tower"})
        return
    owner = dict(house.claims).get(arc)
    if owner is None or owner in house.eliminated:
        return
    claimed = {a for a, _ in house.claims}
    spares = [a for a in sorted(state.board.towers) if a not in claimed and a != house.kings_tower]
    if spares:
        run.emit("tower_claimed", {"seat": owner, "arc": spares[0]})
    else:
        run.emit("player_eliminated", {"seat": owner})


def _resolve_token(
    run: _Run, token: str, source: str, rng: Rng, extra: dict[str, Any], arc: int | None = None
) -> None:
    """Reveal one monster token and resolve it (rules file §7.6, §9, boss effects §6)."""
    kind = TOKEN_KIND[token]
    if kind.is_monster:
        roll = None
        if arc is None:
            roll = arc = _roll(run.state, rng)
        placed = {"monster": token, "ring": int(Ring.FOREST), "arc": arc, "roll": roll, "source": source}
        run.emit("monster_placed", {**placed, **extra})
        _boss_effect(run, token, arc, rng)
        return
    name = kind.name
    if name == "giant_boulder":
        roll = _roll(run.state, rng)
        run.emit("token_revealed", {"token": token, "source": source, "roll": roll, **extra})
        _roll_boulder(run, roll)
        return
    run.emit("token_revealed", {"token": token, "source": source, **extra})
    if name in _COLOUR_MOVES:
        colour = _COLOUR_MOVES[name]
        _move(run, lambda m: ARC_COLOUR[m.arc] is colour, 0, name)
    elif name == "move_clockwise":
        _move(run, _everyone, CLOCKWISE, name)
    elif name == "move_counterclockwise":
        _move(run, _everyone, -CLOCKWISE, name)
    elif name in _PLAGUES:
        soldier = _PLAGUES[name]
        for seat in living_castle_seats(run.state):
            lost = [c for c in run.state.cards.hands[seat] if CARD_KIND[c].soldier is soldier]
            if lost:
                run.emit("cards_discarded", {"seat": seat, "cards": lost, "reason": name})
    elif name == "all_discard_1":
        owing = [seat for seat in living_castle_seats(run.state) if run.state.cards.hands[seat]]
        if owing:
            run.emit("discards_owed", {"seats": owing, "reason": name})
    elif name in _EXTRA_DRAWS:
        _extra_draws(run, _EXTRA_DRAWS[name], rng)


def _extra_draws(run: _Run, count: int, rng: Rng) -> None:
    """Draw 3 / Draw 4 / Goblin King: queue more draws, or, for the Overlord, draw that many
    tokens into the hidden hand and allow that many more plays."""
    assert run.state.config is not None
    if run.state.config.overlord is not None:
        _overlord_draw(run, count, count, rng)
    else:
        run.emit("draws_queued", {"count": count})


def _boss_effect(run: _Run, boss: str, arc: int, rng: Rng) -> None:
    name = TOKEN_KIND[boss].name
    if name not in ("goblin_king", "orc_warlord", "troll_mage", "healer"):
        return
    assert run.state.config is not None
    moves_self = run.state.config.options.boss_moves_self
    if name == "goblin_king":
        _extra_draws(run, 3, rng)
    elif name == "orc_warlord":
        colour = ARC_COLOUR[arc]
        _move(run, lambda m: ARC_COLOUR[m.arc] is colour and (moves_self or m.id != boss), 0, name)
    elif name == "troll_mage":
        _move(run, lambda m: moves_self or m.id != boss, 0, name)
    else:
        healed = [[m.id, m.hp + 1] for m in run.state.board.monsters if m.hp < m.max_hp]
        if healed:
            run.emit("monsters_healed", {"monsters": healed})


def _boulder_path(arc: int) -> list[tuple[str, int, int]]:
    """Rules file §9: in from the Forest of ``arc``, across the castle, out through the opposite arc."""
    far = opposite(arc)
    inward = [("space", ring, arc) for ring in (Ring.FOREST, Ring.ARCHER, Ring.KNIGHT, Ring.SWORDSMAN)]
    outward = [("space", ring, far) for ring in (Ring.SWORDSMAN, Ring.KNIGHT, Ring.ARCHER, Ring.FOREST)]
    return [*inward, ("wall", 0, arc), ("castle", 0, arc), ("castle", 0, far), ("wall", 0, far), *outward]


def _roll_boulder(run: _Run, arc: int) -> None:
    for what, ring, at in _boulder_path(arc):
        board = run.state.board
        if what == "wall":
            if at in board.fortified:
                run.emit("fortify_removed", {"arc": at})
                return
            if at in board.walls:
                run.emit("wall_destroyed", {"arc": at})
                return
            continue
        if what == "castle":
            if at in board.towers:
                _destroy_tower(run, at)
                return
            ring = Ring.CASTLE
        for m in board.monsters:
            if m.ring == ring and m.arc == at:
                _slay(run, m.id, "giant_boulder")


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
    if seat not in _may_act(state):
        raise NotYourTurn(f"seat {seat} cannot {kind} now: waiting for seat(s) {waiting_for(state)}")
    check_args(kind, args, ARGS[kind])
    run = _Run(state)
    handler(run, seat, args, rng)
    _advance(run, rng)
    return run.events


def _may_act(state: State) -> list[int]:
    """The seats that may send a command now: those the game waits on, and the proposer of an
    open trade offer (it may cancel it)."""
    trade = state.turn.trade
    return [*waiting_for(state), *([trade.proposer] if trade is not None else [])]


def _owes(state: State, seat: int, what: str) -> None:
    """Raise unless ``seat`` may act at all now; ``what`` names the command for the message."""
    if seat not in waiting_for(state):
        owed = waiting_for(state)
        raise NotYourTurn(f"seat {seat} cannot {what} now: waiting for seat(s) {owed}")


def _turn_step(state: State, seat: int, what: str, phases: Iterable[Phase]) -> None:
    """The command is a step of the active player's turn in one of ``phases``."""
    _owes(state, seat, what)
    if state.pending.damage or state.pending.discards or state.turn.trade is not None:
        raise IllegalMove(f"{what} must wait: a choice is pending")
    phases = tuple(phases)
    if state.turn.phase not in phases or seat != acting_seat(state):
        names = [p.value for p in phases]
        raise IllegalMove(f"{what} is allowed in phase {names}, not {state.turn.phase.value!r}")


def _in_hand(state: State, seat: int, card: str) -> None:
    if card not in state.cards.hands[seat]:
        raise IllegalMove(f"card {card!r} is not in seat {seat}'s hand")


def _cmd_discard_and_draw(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    assert state.config is not None
    _turn_step(state, seat, "discard_and_draw", (Phase.DISCARD,))
    card = str_arg(args, "card", "discard_and_draw")
    _in_hand(state, seat, card)
    if state.turn.discards >= state.config.discard_limit:
        raise IllegalMove(f"only {state.config.discard_limit} discard-and-draw per turn")
    run.emit("cards_discarded", {"seat": seat, "cards": [card], "reason": "discard_and_draw"})
    _draw_cards(run, seat, 1, rng, "discard_and_draw")


def _cmd_end_phase(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    _turn_step(state, seat, "end_phase", (*_PLAY_PHASES, Phase.OVERLORD))
    phase = state.turn.phase
    if phase is Phase.DISCARD:
        run.emit("phase_changed", {"phase": _open_phase(state, Phase.TRADE).value})
    elif phase is Phase.TRADE:
        run.emit("phase_changed", {"phase": Phase.PLAY.value})
    elif phase is Phase.PLAY:
        _monster_phases(run)
    else:
        if _overlord_must_play(state):
            raise IllegalMove("the board is empty: the Overlord must play a token this turn")
        _end_turn(run, rng)


def _cmd_propose_trade(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    assert state.config is not None
    _turn_step(state, seat, "propose_trade", (Phase.TRADE,))
    to = int_arg(args, "to", "propose_trade")
    give = str_arg(args, "give", "propose_trade")
    hidden = state.config.options.hidden_hands
    take = None if hidden else str_arg(args, "take", "propose_trade")
    if hidden and args.get("take") is not None:
        raise BadCommand("with hidden hands a proposal names only 'give'; the other seat picks its card")
    if not _can_propose(state, seat):
        raise IllegalMove("no more trade proposals this turn")
    if to not in _trade_partners(state, seat):
        raise IllegalMove(f"cannot trade with seat {to!r}: it must be another castle player holding a card")
    _in_hand(state, seat, give)
    if take is not None:
        _in_hand(state, to, take)
    run.emit("trade_proposed", {"from": seat, "to": to, "give": give, "take": take, "hidden": hidden})


def _cmd_accept_trade(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    trade = state.turn.trade
    if trade is None or seat != trade.to:
        raise NotYourTurn(f"seat {seat} has no trade proposal to answer")
    if trade.take is None:
        got = str_arg(args, "card", "accept_trade")
        _in_hand(state, seat, got)
    else:
        got = trade.take
        if args.get("card") not in (None, got):
            raise IllegalMove(f"the proposal asks for {got!r}, not {args.get('card')!r}")
    traded = {"from": trade.proposer, "to": seat, "gave": trade.give, "got": got, "hidden": _hidden(state)}
    run.emit("cards_traded", traded)


def _cmd_decline_trade(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    trade = run.state.turn.trade
    if trade is None or seat != trade.to:
        raise NotYourTurn(f"seat {seat} has no trade proposal to answer")
    run.emit("trade_declined", {"by": seat})


def _cmd_cancel_trade(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    trade = run.state.turn.trade
    if trade is None or seat != trade.proposer:
        raise IllegalMove(f"seat {seat} has no open trade proposal to cancel")
    run.emit("trade_cancelled", {"by": seat})


def _cmd_discard(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    if seat not in state.pending.discards:
        raise NotYourTurn(f"seat {seat} owes no discard")
    if state.pending.damage:
        raise IllegalMove("discards wait until the pending damage is assigned")
    card = str_arg(args, "card", "discard")
    _in_hand(state, seat, card)
    run.emit("cards_discarded", {"seat": seat, "cards": [card], "reason": "owed"})


def _cmd_assign_damage(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    if not state.pending.damage or state.pending.damage[0].seat != seat:
        raise NotYourTurn(f"seat {seat} has no damage to assign")
    choice = state.pending.damage[0]
    monster = str_arg(args, "monster", "assign_damage")
    if monster not in choice.candidates:
        raise IllegalMove(f"monster {monster!r} is not one of {list(choice.candidates)}")
    run.emit("damage_assigned", {"seat": seat, "monster": monster})
    _hurt(run, monster, choice.structure)


def _cmd_place_monster(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    _turn_step(state, seat, "place_monster", (Phase.OVERLORD,))
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
    _resolve_token(run, token, "overlord", rng, {}, arc=arc)


def _cmd_play_token(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    _turn_step(state, seat, "play_token", (Phase.OVERLORD,))
    token = str_arg(args, "token", "play_token")
    if token not in state.tokens.overlord_hand:
        raise IllegalMove(f"token {token!r} is not in the Overlord's hand")
    if state.turn.overlord_plays <= 0:
        raise IllegalMove("the Overlord has no token plays left this turn")
    run.emit("overlord_played", {"token": token, "mode": "rolled"})
    _resolve_token(run, token, "overlord", rng, {})


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


def _all_for_one_colour(cards: Iterable[str]) -> Colour | Literal[False] | None:
    """The colour three All For One cards agree on (None: all any-colour; False: no agreement)."""
    colours = {CARD_KIND[c].colour for c in cards} - {None}
    if len(colours) > 1:
        return False
    return next(iter(colours)) if colours else None


def _all_for_one_reaches(colour: Colour | None, monster: Monster) -> bool:
    return monster.ring in MIDDLE_RINGS and (colour is None or ARC_COLOUR[monster.arc] is colour)


def _cmd_play_card(run: _Run, seat: int, args: Mapping[str, Any], rng: Rng) -> None:
    state = run.state
    assert state.config is not None
    options = state.config.options
    _turn_step(state, seat, "play_card", (Phase.PLAY,))
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
        _in_hand(state, seat, c)
    if state.turn.plays >= MAX_PLAYS:
        raise IllegalMove(f"at most {MAX_PLAYS} card plays per turn")
    play, by_category = _classify(cards)
    target = args.get("target")
    played = {"seat": seat, "card": card, "with": list(extra), "target": target}

    def monster_target(check: Callable[[Monster], bool], what: str) -> Monster:
        if not isinstance(target, str):
            raise BadCommand(f"{what} needs a monster id 'target', got {target!r}")
        m = _find(state, target)
        if m is None:
            raise IllegalMove(f"there is no monster {target!r} on the board")
        if not check(m):
            raise IllegalMove(f"{what} cannot target {target!r} (ring {Ring(m.ring).name.lower()}, arc {m.arc})")
        return m

    def arc_target(check: Callable[[int], bool], what: str) -> int:
        if not isinstance(target, int) or isinstance(target, bool) or target not in ARCS:
            raise BadCommand(f"{what} needs an arc 1-6 as 'target', got {target!r}")
        if not check(target):
            raise IllegalMove(f"{what} cannot target arc {target}")
        return target

    def no_target(what: str) -> None:
        if target is not None:
            raise BadCommand(f"{what} takes no target, got {target!r}")

    if play == "nice_shot":
        hit = by_category[CardCategory.HIT][0]
        m = monster_target(lambda m: _reaches(CARD_KIND[hit], m, options), f"{hit} with nice shot")
        run.emit("card_played", played)
        _slay(run, m.id, "nice_shot", seat)
        return
    if play == "brick_mortar":
        arc = arc_target(lambda a: a not in state.board.walls, "brick and mortar")
        run.emit("card_played", played)
        run.emit("wall_built", {"arc": arc})
        return
    if play == "all_for_one":
        if not options.all_for_one:
            raise IllegalMove("All For One is not in play (option 'all_for_one')")
        colour = _all_for_one_colour(cards)
        if colour is False:
            raise IllegalMove(f"All For One needs three cards of one colour, got {cards!r}")
        m = monster_target(lambda m: _all_for_one_reaches(colour, m), "All For One")
        run.emit("card_played", played)
        _slay(run, m.id, "all_for_one", seat)
        return
    kind = CARD_KIND[card]
    category = kind.category
    board = state.board
    if category is CardCategory.HIT:
        m = monster_target(lambda m: _reaches(kind, m, options), card)
        run.emit("card_played", played)
        _hurt(run, m.id, kind.name, seat)
    elif category is CardCategory.BARBARIAN:
        m = monster_target(lambda m: m.ring != Ring.FOREST, "barbarian")
        run.emit("card_played", played)
        _slay(run, m.id, "barbarian", seat)
    elif category is CardCategory.TAR:
        if board.tar is not None:
            raise IllegalMove(f"the tar token is already on {board.tar!r}")
        m = monster_target(lambda m: True, "tar")
        run.emit("card_played", played)
        run.emit("tar_placed", {"monster": m.id})
    elif category is CardCategory.FORTIFY_WALL:
        if len(board.fortified) >= FORTIFY_TOKENS:
            raise IllegalMove("both fortify tokens are in use")
        arc = arc_target(lambda a: a in board.walls and a not in board.fortified, "fortify wall")
        run.emit("card_played", played)
        run.emit("wall_fortified", {"arc": arc})
    elif category is CardCategory.DRIVE_HIM_BACK:
        m = monster_target(lambda m: m.ring != Ring.FOREST, "drive him back")
        run.emit("card_played", played)
        run.emit("monsters_moved", {"moves": [[m.id, int(Ring.FOREST), m.arc]], "cause": "drive_him_back"})
    elif category is CardCategory.MISSING:
        no_target("missing")
        if state.turn.missing:
            raise IllegalMove("Missing has already been played this turn")
        run.emit("card_played", played)
    elif category is CardCategory.SCAVENGE:
        if not isinstance(target, str):
            raise BadCommand(f"scavenge needs a card id 'target' from the discard pile, got {target!r}")
        if target not in state.cards.discard:
            raise IllegalMove(f"card {target!r} is not in the discard pile")
        run.emit("card_played", played)
        run.emit("card_scavenged", {"seat": seat, "card": target})
    elif category is CardCategory.DRAW_2:
        no_target("draw 2 cards")
        if not _can_draw_2(state):
            raise IllegalMove("the deck and the discard pile are empty: nothing to draw")
        run.emit("card_played", played)
        _draw_cards(run, seat, 2, rng, "draw_2")
    else:
        raise IllegalMove(f"{card!r} cannot be played alone (nice shot needs a hit card, brick a mortar)")


_COMMANDS: dict[str, Callable[[_Run, int, Mapping[str, Any], Rng], None]] = {
    "discard_and_draw": _cmd_discard_and_draw,
    "end_phase": _cmd_end_phase,
    "propose_trade": _cmd_propose_trade,
    "accept_trade": _cmd_accept_trade,
    "decline_trade": _cmd_decline_trade,
    "cancel_trade": _cmd_cancel_trade,
    "play_card": _cmd_play_card,
    "discard": _cmd_discard,
    "assign_damage": _cmd_assign_damage,
    "place_monster": _cmd_place_monster,
    "play_token": _cmd_play_token,
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
        if _overlord_must_play(state):
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
    if not _can_propose(state, seat):
        return []
    hands = state.cards.hands
    moves = []
    for to in _trade_partners(state, seat):
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
            targets = [m.id for m in monsters if _reaches(kind, m, options)]
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
        elif category is CardCategory.DRAW_2 and _can_draw_2(state):  # the chain's last branch
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
                colour = _all_for_one_colour((archer, knight, swordsman))
                if colour is False:
                    continue
                for m in monsters:
                    if _all_for_one_reaches(colour, m):
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

