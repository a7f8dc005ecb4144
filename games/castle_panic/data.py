"""Castle Panic components as data: the board, the 49 castle cards and the 49 monster tokens.

Everything countable lives in the tables below (``CARD_TABLE``, ``TOKEN_TABLE``, the hand sizes,
the Easier Battles removals), so a different print run or an errata changes a number here and no
rule code. Sources and confidence tags are in the rules reference (§1, §5, §6 of the rules file);
the token split 6/11/10 goblins/orcs/trolls and one "All Players Discard 1" follow 3 of 4 sources.

Every physical card and token gets a stable id ``"<kind>#<n>"`` (``"archer_red#2"``,
``"troll#7"``) so a command can name one instance; a monster on the board keeps its token id.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum

__all__ = [
    "Ring",
    "Colour",
    "Soldier",
    "CardCategory",
    "TokenCategory",
    "CardKind",
    "TokenKind",
    "ARCS",
    "CLOCKWISE",
    "ARC_COLOUR",
    "COLOUR_ARCS",
    "MIDDLE_RINGS",
    "CARD_TABLE",
    "TOKEN_TABLE",
    "CARD_KINDS",
    "TOKEN_KINDS",
    "ALL_CARDS",
    "ALL_TOKENS",
    "CARD_KIND",
    "TOKEN_KIND",
    "SETUP_MONSTERS",
    "EASIER_BATTLES_REMOVED",
    "HAND_SIZES",
    "FORTIFY_TOKENS",
    "OVERLORD_HAND",
    "OVERLORD_PLAYS",
    "opposite",
    "step",
    "kind_of",
]


class Ring(IntEnum):
    """The five concentric rings, numbered from the centre (rules file §2)."""

    CASTLE = 0
    """The six tower spaces; monsters here circle clockwise."""
    SWORDSMAN = 1
    """Innermost fighting ring; the wall line lies between it and the castle."""
    KNIGHT = 2
    ARCHER = 3
    """Where the six setup monsters start."""
    FOREST = 4
    """Where new monsters enter; nothing but a giant boulder hurts them here."""


class Colour(str, Enum):
    """Arc colours: arcs 1-2 red, 3-4 green, 5-6 blue (rules file §2, [C])."""

    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Soldier(str, Enum):
    """Which soldier a hit card shows; plagues discard by soldier (rules file §9)."""

    ARCHER = "archer"
    KNIGHT = "knight"
    SWORDSMAN = "swordsman"
    HERO = "hero"
    """Heroes reach all three middle rings and are never plagued ([L])."""


class CardCategory(str, Enum):
    """What a castle card does when played (rules file §5)."""

    HIT = "hit"
    BARBARIAN = "barbarian"
    NICE_SHOT = "nice_shot"
    TAR = "tar"
    FORTIFY_WALL = "fortify_wall"
    DRIVE_HIM_BACK = "drive_him_back"
    MISSING = "missing"
    SCAVENGE = "scavenge"
    DRAW_2 = "draw_2"
    BRICK = "brick"
    MORTAR = "mortar"


class TokenCategory(str, Enum):
    """Monster token families (rules file §6)."""

    MONSTER = "monster"
    """Goblin, orc, troll: placed in the Forest, no effect."""
    BOSS = "boss"
    """Placed like a monster, then its effect resolves."""
    EFFECT = "effect"
    """Never placed: resolves, then goes to the monster discard pile."""


ARCS: tuple[int, ...] = (1, 2, 3, 4, 5, 6)

CLOCKWISE = 1
"""Arc step of one clockwise move. Rules file §2 [L]: implementations treat clockwise as
increasing arc number; kept as one constant so a printed board that disagrees changes one line."""

ARC_COLOUR: dict[int, Colour] = {
    1: Colour.RED,
    2: Colour.RED,
    3: Colour.GREEN,
    4: Colour.GREEN,
    5: Colour.BLUE,
    6: Colour.BLUE,
}
COLOUR_ARCS: dict[Colour, tuple[int, ...]] = {
    colour: tuple(arc for arc in ARCS if ARC_COLOUR[arc] is colour)
    for colour in Colour
}
MIDDLE_RINGS = frozenset({Ring.ARCHER, Ring.KNIGHT, Ring.SWORDSMAN})

_SOLDIER_RINGS: dict[Soldier, frozenset[Ring]] = {
    Soldier.ARCHER: frozenset({Ring.ARCHER}),
    Soldier.KNIGHT: frozenset({Ring.KNIGHT}),
    Soldier.SWORDSMAN: frozenset({Ring.SWORDSMAN}),
    Soldier.HERO: MIDDLE_RINGS,
}


def opposite(arc: int) -> int:
    """The arc across the castle (1<->4, 2<->5, 3<->6), where a giant boulder rolls on to."""
    return (arc + 2) % 6 + 1


def step(arc: int, delta: int) -> int:
    """The arc ``delta`` steps around the ring (positive = clockwise)."""
    return (arc - 1 + delta) % 6 + 1


@dataclass(frozen=True, slots=True)
class CardKind:
    """One kind of castle card. ``colour`` None on a hit card means "any colour"."""

    name: str
    category: CardCategory
    count: int
    colour: Colour | None = None
    soldier: Soldier | None = None

    @property
    def rings(self) -> frozenset[Ring]:
        """The rings this card can hit in the base game (empty for non-hit cards)."""
        return _SOLDIER_RINGS[self.soldier] if self.soldier else frozenset()


@dataclass(frozen=True, slots=True)
class TokenKind:
    """One kind of monster token; ``hp`` is the starting (highest printed) value."""

    name: str
    category: TokenCategory
    count: int
    hp: int = 0
    vp: int = 0

    @property
    def is_monster(self) -> bool:
        """Goblins, orcs, trolls and bosses: tokens that go on the board."""
        return self.category is not TokenCategory.EFFECT


def _hit_cards() -> list[CardKind]:
    cards = []
    for soldier in (Soldier.ARCHER, Soldier.KNIGHT, Soldier.SWORDSMAN):
        for colour in Colour:
            cards.append(CardKind(f"{soldier.value}_{colour.value}", CardCategory.HIT, 3, colour, soldier))
        cards.append(CardKind(f"{soldier.value}_any", CardCategory.HIT, 1, None, soldier))
    for colour in Colour:
        cards.append(CardKind(f"hero_{colour.value}", CardCategory.HIT, 1, colour, Soldier.HERO))
    return cards


CARD_TABLE: tuple[CardKind, ...] = (
    *_hit_cards(),
    CardKind("barbarian", CardCategory.BARBARIAN, 1),
    CardKind("nice_shot", CardCategory.NICE_SHOT, 1),
    CardKind("tar", CardCategory.TAR, 1),
    CardKind("fortify_wall", CardCategory.FORTIFY_WALL, 1),
    CardKind("drive_him_back", CardCategory.DRIVE_HIM_BACK, 1),
    CardKind("missing", CardCategory.MISSING, 1),
    CardKind("scavenge", CardCategory.SCAVENGE, 1),
    CardKind("draw_2", CardCategory.DRAW_2, 1),
    CardKind("brick", CardCategory.BRICK, 4),
    CardKind("mortar", CardCategory.MORTAR, 4),
)
"""The 49 castle cards: 27 coloured hits, 3 any-colour, 3 heroes, 8 singles, 4 brick + 4 mortar."""

_M, _B, _E = TokenCategory.MONSTER, TokenCategory.BOSS, TokenCategory.EFFECT
TOKEN_TABLE: tuple[TokenKind, ...] = (
    TokenKind("goblin", _M, 6, hp=1, vp=1),
    TokenKind("orc", _M, 11, hp=2, vp=2),
    TokenKind("troll", _M, 10, hp=3, vp=3),
    TokenKind("goblin_king", _B, 1, hp=2, vp=4),
    TokenKind("orc_warlord", _B, 1, hp=3, vp=4),
    TokenKind("troll_mage", _B, 1, hp=3, vp=4),
    TokenKind("healer", _B, 1, hp=2, vp=4),
    TokenKind("giant_boulder", _E, 4),
    TokenKind("move_red", _E, 2),
    TokenKind("move_green", _E, 2),
    TokenKind("move_blue", _E, 2),
    TokenKind("move_clockwise", _E, 1),
    TokenKind("move_counterclockwise", _E, 1),
    TokenKind("plague_archers", _E, 1),
    TokenKind("plague_knights", _E, 1),
    TokenKind("plague_swordsmen", _E, 1),
    TokenKind("all_discard_1", _E, 1),
    TokenKind("draw_3", _E, 1),
    TokenKind("draw_4", _E, 1),
)
"""The 49 monster tokens: 27 monsters, 4 bosses, 18 effects."""

CARD_KINDS: dict[str, CardKind] = {kind.name: kind for kind in CARD_TABLE}
TOKEN_KINDS: dict[str, TokenKind] = {kind.name: kind for kind in TOKEN_TABLE}

ALL_CARDS: tuple[str, ...] = tuple(
    sorted(f"{kind.name}#{n}" for kind in CARD_TABLE for n in range(1, kind.count + 1))
)
ALL_TOKENS: tuple[str, ...] = tuple(
    sorted(f"{kind.name}#{n}" for kind in TOKEN_TABLE for n in range(1, kind.count + 1))
)
CARD_KIND: dict[str, CardKind] = {card: CARD_KINDS[card.split("#")[0]] for card in ALL_CARDS}
TOKEN_KIND: dict[str, TokenKind] = {token: TOKEN_KINDS[token.split("#")[0]] for token in ALL_TOKENS}

SETUP_MONSTERS: tuple[str, ...] = ("goblin#1", "goblin#2", "goblin#3", "orc#1", "orc#2", "troll#1")
"""3 goblins, 2 orcs, 1 troll start in the Archer ring, one per arc (rules file §3)."""

EASIER_BATTLES_REMOVED: tuple[tuple[str, int], ...] = (
    ("draw_4", 1),
    ("orc_warlord", 1),
    ("troll_mage", 1),
    ("plague_swordsmen", 1),
    ("plague_knights", 1),
    ("move_red", 1),
    ("move_green", 1),
    ("move_blue", 1),
    ("giant_boulder", 3),
)
"""Tokens the Easier Battles optional rule takes out of the game (highest-numbered copies)."""

HAND_SIZES: dict[int, int] = {1: 6, 2: 6, 3: 5, 4: 5, 5: 5, 6: 4}
"""Castle players -> hand size (rules file §3)."""

FORTIFY_TOKENS = 2
OVERLORD_HAND = 3
"""The Overlord draws up to this many hidden monster tokens."""
OVERLORD_PLAYS = 2
"""Tokens the Overlord may play by die roll in one turn (option (b) of the Overlord turn)."""


def kind_of(item: str) -> str:
    """The kind part of a card or token id: ``"archer_red#2"`` -> ``"archer_red"``."""
    return item.split("#", 1)[0]
