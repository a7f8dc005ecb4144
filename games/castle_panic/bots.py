"""Castle Panic bots: a random legal-move player and a simple heuristic one.

``BOTS`` names them (``{"random": RANDOM, "heuristic": HEURISTIC}``), each a
:class:`games.base.Bot`. Both only ever return a command from ``legal_moves(state, seat)``, so
they need no rule of their own to stay legal. ``choose(state, seat, rng)`` is called for a seat
that owes a command (see ``rules.waiting_for``); the service uses these to fill empty seats and
``donjon bench`` to play whole games.

The heuristic castle player protects the most threatened tower first: every monster gets a threat
score (hit points times how close it is to a standing tower, more where the wall is down), and the
bot plays the card that removes the most threat, building walls in front of threatened towers and
keeping special cards for monsters that ordinary hits cannot finish. As the Overlord it sends its
strongest monster at the weakest arc.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import Bot, Rng
from games.castle_panic.data import ARC_COLOUR, CARD_KIND, CLOCKWISE, TOKEN_KIND, CardCategory, Ring, step
from games.castle_panic.legal import legal_moves
from games.castle_panic.state import Monster, State

__all__ = [
    "RandomBot",
    "HeuristicBot",
    "RANDOM",
    "HEURISTIC",
    "BOTS",
    "choose",
    "random_choose",
    "heuristic_choose",
    "threat",
]

Command = dict[str, Any]

_RING_WEIGHT = {Ring.CASTLE: 10.0, Ring.SWORDSMAN: 6.0, Ring.KNIGHT: 3.0, Ring.ARCHER: 1.5, Ring.FOREST: 0.7}


def _owed_moves(state: State, seat: int) -> list[Command]:
    """The legal commands of a seat a bot is asked to move; ``ValueError`` when it owes none."""
    moves = legal_moves(state, seat)
    if not moves:
        raise ValueError(f"seat {seat} has no legal move")
    return moves


class RandomBot:
    """Uniformly random among the legal commands."""

    name = "random"

    def choose(self, state: State, seat: int, rng: Rng) -> Command:
        moves = _owed_moves(state, seat)
        return rng.choice(moves)


def threat(state: State, m: Monster) -> float:
    """How dangerous ``m`` is to the castle now: hit points times closeness to a standing tower."""
    board = state.board
    weight = _RING_WEIGHT[Ring(m.ring)]
    if m.ring == Ring.CASTLE:
        target_arc = step(m.arc, CLOCKWISE)
        if target_arc not in board.towers:
            weight *= 0.6
    else:
        if m.arc not in board.walls and m.ring <= Ring.KNIGHT:
            weight *= 1.6
        if m.arc not in board.towers:
            weight *= 0.8
    return weight * m.hp


def _monster(state: State, monster_id: Any) -> Monster | None:
    for m in state.board.monsters:
        if m.id == monster_id:
            return m
    return None


def _usefulness(state: State, card: str) -> float:
    """How much keeping ``card`` is worth in the next turn or two (0 = dead weight)."""
    kind = CARD_KIND[card]
    board = state.board
    category = kind.category
    if category is CardCategory.HIT:
        best = 0.0
        for m in board.monsters:
            colour_ok = kind.colour is None or ARC_COLOUR[m.arc] is kind.colour
            if not colour_ok:
                continue
            if m.ring in kind.rings:
                best = max(best, 1.0 + threat(state, m) / 10)
            elif m.ring - 1 in kind.rings or m.ring + 1 in kind.rings:
                best = max(best, 0.5)
        return best + (0.3 if kind.colour is None or (kind.soldier and kind.soldier.value == "hero") else 0.0)
    if category in (CardCategory.BRICK, CardCategory.MORTAR):
        return 1.5 if len(board.walls) < 6 else 0.2
    if category is CardCategory.NICE_SHOT:
        return 1.2
    return 2.0


class HeuristicBot:
    """Protects the most threatened tower first; see the module docstring."""

    name = "heuristic"

    def choose(self, state: State, seat: int, rng: Rng) -> Command:
        moves = _owed_moves(state, seat)
        kinds = {move["type"] for move in moves}
        config = state.config
        assert config is not None
        if "assign_damage" in kinds:
            return self._assign_damage(state, seat, moves)
        if "discard" in kinds:
            return min(moves, key=lambda mv: (_usefulness(state, mv["args"]["card"]), mv["args"]["card"]))
        if "accept_trade" in kinds:
            accepts = [mv for mv in moves if mv["type"] == "accept_trade"]
            return min(accepts, key=lambda mv: _usefulness(state, mv["args"].get("card", "")) if mv["args"] else 0)
        if "cancel_trade" in kinds:
            return moves[0]
        if seat == config.overlord:
            return self._overlord(state, moves)
        phase = state.turn.phase.value
        if phase == "discard":
            return self._discard(state, moves)
        if phase == "trade":
            return self._trade(state, seat, moves)
        return self._play(state, moves)

    # castle player ----------------------------------------------------------------------------

    def _assign_damage(self, state: State, seat: int, moves: list[Command]) -> Command:
        monsters = [(_monster(state, mv["args"]["monster"]), mv) for mv in moves]
        if state.config is not None and seat == state.config.overlord:
            return max(monsters, key=lambda pair: pair[0].hp if pair[0] else 0)[1]
        return min(monsters, key=lambda pair: (pair[0].hp if pair[0] else 99, -(pair[0].max_hp if pair[0] else 0)))[1]

    def _discard(self, state: State, moves: list[Command]) -> Command:
        discards = [mv for mv in moves if mv["type"] == "discard_and_draw"]
        if discards:
            worst = min(discards, key=lambda mv: (_usefulness(state, mv["args"]["card"]), mv["args"]["card"]))
            if _usefulness(state, worst["args"]["card"]) < 0.5:
                return worst
        return {"type": "end_phase", "args": {}}

    def _trade(self, state: State, seat: int, moves: list[Command]) -> Command:
        if state.turn.proposals > 0:
            return {"type": "end_phase", "args": {}}
        best, best_gain = None, 0.5
        for mv in moves:
            if mv["type"] != "propose_trade" or "take" not in mv["args"]:
                continue
            gain = _usefulness(state, mv["args"]["take"]) - _usefulness(state, mv["args"]["give"])
            if gain > best_gain:
                best, best_gain = mv, gain
        return best or {"type": "end_phase", "args": {}}

    def _play(self, state: State, moves: list[Command]) -> Command:
        best, best_value = None, 0.0
        for mv in moves:
            if mv["type"] != "play_card":
                continue
            value = self._value(state, mv["args"])
            if value > best_value:
                best, best_value = mv, value
        return best or {"type": "end_phase", "args": {}}

    def _value(self, state: State, args: Mapping[str, Any]) -> float:
        card = args["card"]
        kind = CARD_KIND[card]
        category = kind.category
        extra = args.get("with", [])
        target = args.get("target")
        board = state.board
        m = _monster(state, target) if isinstance(target, str) else None
        if category is CardCategory.HIT and m is not None:
            t = threat(state, m)
            if extra:  # nice shot or all for one: worth it on a tough monster only
                return t * 0.9 - 2.0 if m.hp >= 2 else -1.0
            generic = 0.3 if kind.colour is None or (kind.soldier and kind.soldier.value == "hero") else 0.0
            return (t if m.hp == 1 else t / m.hp * 0.8) + 1.0 - generic
        if category is CardCategory.BARBARIAN and m is not None:
            return threat(state, m) - (4.0 if m.hp == 1 and m.ring > Ring.CASTLE else 1.0)
        if category is CardCategory.DRIVE_HIM_BACK and m is not None:
            return threat(state, m) * 0.8 - 2.0 if m.ring <= Ring.SWORDSMAN else -1.0
        if category is CardCategory.TAR and m is not None:
            return threat(state, m) * 0.4 - 1.0 if m.ring <= Ring.SWORDSMAN else -1.0
        if category is CardCategory.BRICK:
            return 6.0 + (3.0 if target in board.towers else -5.0) + self._arc_threat(state, target)
        if category is CardCategory.FORTIFY_WALL:
            return self._arc_threat(state, target) * 0.5
        if category is CardCategory.DRAW_2:
            return 5.0
        if category is CardCategory.MISSING:
            return 3.0 if len(board.monsters) >= 4 else 0.5
        if category is CardCategory.SCAVENGE and isinstance(target, str):
            return 1.0 + _usefulness(state, target)
        return 0.0

    def _arc_threat(self, state: State, arc: Any) -> float:
        return sum(threat(state, m) for m in state.board.monsters if m.arc == arc and m.ring >= Ring.SWORDSMAN)

    # overlord ---------------------------------------------------------------------------------

    def _overlord(self, state: State, moves: list[Command]) -> Command:
        board = state.board

        def weakness(arc: int) -> float:
            return (2.0 if arc not in board.walls else 0.0) + (1.0 if arc in board.towers else -3.0)

        places = [mv for mv in moves if mv["type"] == "place_monster"]
        if places:
            strongest = max(TOKEN_KIND[mv["args"]["token"]].hp for mv in places)
            if strongest >= 3:
                return max(
                    (mv for mv in places if TOKEN_KIND[mv["args"]["token"]].hp == strongest),
                    key=lambda mv: (weakness(mv["args"]["arc"]), -mv["args"]["arc"]),
                )
        plays = [mv for mv in moves if mv["type"] == "play_token"]
        if plays:
            return max(plays, key=lambda mv: (TOKEN_KIND[mv["args"]["token"]].hp, mv["args"]["token"]))
        return moves[-1]


RANDOM = RandomBot()
HEURISTIC = HeuristicBot()
BOTS: Mapping[str, Bot] = {"random": RANDOM, "heuristic": HEURISTIC}
"""The named bots the service seats (each a :class:`games.base.Bot`)."""


def random_choose(state: State, seat: int, rng: Rng) -> Command:
    """A uniformly random legal command for ``seat``."""
    return RANDOM.choose(state, seat, rng)


def heuristic_choose(state: State, seat: int, rng: Rng) -> Command:
    """The heuristic bot's command for ``seat``."""
    return HEURISTIC.choose(state, seat, rng)


def choose(state: State, seat: int, rng: Rng) -> Command:
    """The default bot: heuristic."""
    return HEURISTIC.choose(state, seat, rng)
