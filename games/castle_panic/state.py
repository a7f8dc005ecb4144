"""Castle Panic game state: frozen values that ``evolve`` rebuilds and ``decide`` only reads.

The state holds everything, secrets included (the Overlord's hand, hands under the hidden-hands
rule); :mod:`games.castle_panic.views` decides what leaves the server. Neither draw pile has an
order: the castle deck and the monster pile are sorted tuples (multisets), so no state and no event
ever holds the future. Under ``donjon-draw-2`` each is dealt once (the deck again at each
reshuffle): the state keeps what the deal held (``dealt``, public: it is what the pile held when it
came into play) and which deal it is, and a draw is the deal's next item, read from the rng; under
the older schemes a draw is made from the rng of the decision. Either way it is written into an
event when it happens.

The state is split in a few small records (cards, tokens, board, turn, pending, house) so that
one event rebuilds only the record it touches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from games.records import Record, copyable

__all__ = [
    "Phase",
    "Options",
    "Monster",
    "Trade",
    "DamageChoice",
    "Config",
    "Cards",
    "Tokens",
    "Board",
    "Turn",
    "Pending",
    "House",
    "Result",
    "State",
    "OPTION_NAMES",
]


class Phase(str, Enum):
    """Where the turn stands. Automatic phases never wait for a command."""

    SETUP = "setup"
    """Before ``game_started``."""
    DISCARD = "discard"
    """Phase 2: optional discard-and-draw (1 card, 2 in solitaire)."""
    TRADE = "trade"
    """Phase 3: optional 1-for-1 trades, both seats agreeing."""
    PLAY = "play"
    """Phase 4: the active player plays cards."""
    DRAW = "draw"
    """Phase 6: monster tokens are drawn and resolved one at a time (waits only on choices).
    Phase 5, every monster moving one step, happens as this phase begins."""
    OVERLORD_DRAW = "overlord_draw"
    """Overlord version: the monsters have moved (phase 5); the Overlord draws back up to 3
    tokens. Waits only on a damage choice raised by that movement."""
    OVERLORD = "overlord"
    """Overlord version: the Overlord plays tokens from the hidden hand."""
    OVER = "over"
    """The game has ended."""


@copyable
@dataclass(frozen=True, slots=True)
class Options(Record):
    """The normalized game options (all bools; see ``CastlePanicEngine.options``)."""

    master_slayer: bool = True
    overlord: bool = False
    easier_battles: bool = False
    all_for_one: bool = False
    heroic_powers: bool = False
    my_home_is_my_castle: bool = False
    dwindling_resources: bool = False
    under_construction: bool = False
    hidden_hands: bool = False
    boss_moves_self: bool = False

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> Options:
        return cls(**{name: bool(options.get(name, getattr(cls(), name))) for name in OPTION_NAMES})

    def as_dict(self) -> dict[str, bool]:
        return {name: getattr(self, name) for name in OPTION_NAMES}


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Options))
"""The option names in catalog order (the engine's option table is checked against them)."""


_RING_LETTERS = "CSKAF"
"""Ring letters of the monster notation, indexed by ring number (Castle=0 ... Forest=4)."""


@copyable
@dataclass(frozen=True, slots=True)
class Monster(Record):
    """A monster token on the board: its token id, position and remaining hit points.

    Notation ``"<token id>@<ring letter><arc>:<hp>"``, ring letters C S K A F (Castle,
    Swordsman, Knight, Archer, Forest)::

        >>> Monster.parse("troll#2@K3:2")
        Monster.parse('troll#2@K3:2')
        >>> Monster.parse("orc#1@F6").hp
        2
    """

    id: str
    kind: str
    ring: int
    arc: int
    hp: int
    max_hp: int

    @classmethod
    def parse(cls, text: str) -> Monster:
        """Read the notation; ``:<hp>`` may be left out for full hit points."""
        from games.castle_panic.data import TOKEN_KIND

        try:
            token, where = text.split("@")
            kind = TOKEN_KIND[token]
            place, _, hp = where.partition(":")
            ring = _RING_LETTERS.index(place[0].upper())
            arc = int(place[1:])
        except (ValueError, KeyError, IndexError):
            raise ValueError(f"not a monster notation: {text!r} (expected e.g. 'troll#2@K3:2')") from None
        if not kind.is_monster or not 1 <= arc <= 6:
            raise ValueError(f"not a monster on the board: {text!r}")
        return cls(token, kind.name, ring, arc, int(hp) if hp else kind.hp, kind.hp)

    def notation(self) -> str:
        return f"{self.id}@{_RING_LETTERS[self.ring]}{self.arc}:{self.hp}"

    def __repr__(self) -> str:
        return f"Monster.parse({self.notation()!r})"


@copyable
@dataclass(frozen=True, slots=True)
class Trade(Record):
    """A trade the active player proposed and the other seat has not answered yet.

    ``take`` is None under the hidden-hands rule: the other seat picks its card when accepting.
    """

    proposer: int
    to: int
    give: str
    take: str | None


@copyable
@dataclass(frozen=True, slots=True)
class DamageChoice(Record):
    """Several monsters hit one wall or tower at once: ``seat`` picks the one that takes 1 damage."""

    seat: int
    arc: int
    structure: str
    candidates: tuple[str, ...]


@copyable
@dataclass(frozen=True, slots=True)
class Config(Record):
    """Facts fixed at setup."""

    options: Options
    seats: int
    castle_seats: tuple[int, ...]
    overlord: int | None
    discard_limit: int
    trades_per_turn: int


@copyable
@dataclass(frozen=True, slots=True)
class Cards(Record):
    """Castle cards by zone. ``deck`` is sorted: it has no order, only contents. ``dealt`` is the
    deck as its current deal began (sorted), ``deals`` how many reshuffles came before it."""

    deck: tuple[str, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    discard: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    dealt: tuple[str, ...] = ()
    deals: int = 0


@copyable
@dataclass(frozen=True, slots=True)
class Tokens(Record):
    """Monster tokens by zone (those on the board are in :attr:`Board.monsters`)."""

    pile: tuple[str, ...] = ()
    overlord_hand: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    trophies: tuple[tuple[str, ...], ...] = ()
    removed: tuple[str, ...] = ()
    dealt: tuple[str, ...] = ()
    """The pile as it is dealt, once the setup monsters stand (sorted): it is never reshuffled."""


@copyable
@dataclass(frozen=True, slots=True)
class Board(Record):
    """Monsters, walls (arcs with a wall), fortify tokens (arcs), towers (arcs) and the tar."""

    monsters: tuple[Monster, ...] = ()
    walls: frozenset[int] = frozenset()
    fortified: frozenset[int] = frozenset()
    towers: frozenset[int] = frozenset()
    tar: str | None = None


@copyable
@dataclass(frozen=True, slots=True)
class Turn(Record):
    """The current turn: whose, which phase, and the per-turn allowances used so far."""

    number: int = 0
    seat: int = 0
    phase: Phase = Phase.SETUP
    discards: int = 0
    trades: int = 0
    proposals: int = 0
    trade: Trade | None = None
    plays: int = 0
    missing: bool = False
    draws_left: int = 0
    overlord_plays: int = 0
    overlord_mode: str | None = None
    overlord_played: bool = False


@copyable
@dataclass(frozen=True, slots=True)
class Pending(Record):
    """Choices the game waits on before anything else happens."""

    damage: tuple[DamageChoice, ...] = ()
    discards: frozenset[int] = frozenset()
    discard_reason: str | None = None


@copyable
@dataclass(frozen=True, slots=True)
class House(Record):
    """Table-wide facts that change during play: hand size, tower claims, eliminations, dice rolled."""

    hand_size: int = 0
    claims: tuple[tuple[int, int], ...] = ()
    """(arc, seat) pairs under My Home Is My Castle."""
    kings_tower: int | None = None
    eliminated: frozenset[int] = frozenset()
    rolls: int = 0
    """Dice rolled so far: the number of the next roll's stream (``donjon-draw-2``)."""


@copyable
@dataclass(frozen=True, slots=True)
class Result(Record):
    """How the game ended."""

    outcome: str
    """``"win"`` (the castle stands) or ``"loss"`` (it fell)."""
    reason: str
    scores: tuple[tuple[int, int, int], ...] = ()
    """(seat, victory points, monsters slain) per castle seat."""
    master_slayers: tuple[int, ...] = ()


@copyable
@dataclass(frozen=True, slots=True)
class State(Record):
    """The whole game. ``config`` is None until ``game_started``."""

    config: Config | None = None
    cards: Cards = field(default_factory=Cards)
    tokens: Tokens = field(default_factory=Tokens)
    board: Board = field(default_factory=Board)
    turn: Turn = field(default_factory=Turn)
    pending: Pending = field(default_factory=Pending)
    house: House = field(default_factory=House)
    result: Result | None = None
