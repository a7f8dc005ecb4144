"""The Castle's legal moves and the queries behind them, which ``decide`` checks with too (so that
each command listed is one it accepts): who owes a command, where the drawn tile goes, the free
features of the placed tile, the features to score and the wall tiles that may be played now."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import (
    command,
)
from games.castle.data import WallEffect
from games.castle.scoring import SCORED_KINDS, completed_feature, doubling, scorers
from games.castle.state import CastleState, FeatureRef, Phase
from games.castle.tables import CastleTables
from games.tileboard import (
    Feature,
    Placed,
    free_spots,
)

__all__ = [
    "COMMANDS",
    "FOLLOWER_KINDS",
    "ROLES",
    "doubling_options",
    "extra_turn_tiles",
    "follower_spots",
    "legal_moves",
    "naming_args",
    "owing_seat",
    "placed_tile",
    "ref_text",
    "scoring_choices",
    "tile_placements",
    "usable_wall_tiles",
    "waiting_for",
]

Command = dict[str, Any]

ROLES: Mapping[str, str] = {
    "path": "herald",
    "house": "squire",
    "tower": "knight",
    "court": "merchant",
    "chapel": "preacher",
}
"""A follower's role follows the feature it stands on (original names)."""

FOLLOWER_KINDS = ("normal", "prince", "falconer")

COMMANDS = ("place_tile", "place_follower", "pass", "score", "use_wall_tile", "end_turn")


# --- legal moves and the queries behind them ---------------------------------------------------------


def owing_seat(state: CastleState) -> int | None:
    """The seat that owes a command: only ever the active one (wall tiles too are used on
    one's own turn); ``None`` before the start and after the end."""
    return None if state.phase in (Phase.NOT_STARTED, Phase.OVER) else state.active


def waiting_for(state: CastleState) -> list[int]:
    seat = owing_seat(state)
    return [] if seat is None else [seat]


def legal_moves(engine: CastleTables, state: CastleState, seat: int | None) -> list[Command]:
    """Every command ``decide`` accepts from ``seat`` now; empty when it owes nothing."""
    if seat != state.active or state.phase in (Phase.NOT_STARTED, Phase.OVER):
        return []
    if state.phase is Phase.PLACE_TILE:
        return tile_placements(engine, state)
    if state.phase is Phase.PLACE_FOLLOWER:
        spots = [
            command("place_follower", at=at, kind=kind, role=role)
            for at, kind, role, _ in follower_spots(engine, state, seat)
        ]
        return [*spots, command("pass")]
    if state.phase is Phase.SCORE:
        moves = [command("score", **naming_args(state, ref)) for ref in scoring_choices(engine, state)]
        moves += [
            command("use_wall_tile", tile=kind, **naming_args(state, ref, "target"))
            for kind, ref in doubling_options(engine, state)
        ]
        return moves
    moves = [command("use_wall_tile", tile=kind) for kind in extra_turn_tiles(engine, state)]
    return [*moves, command("end_turn")]


def tile_placements(engine: CastleTables, state: CastleState) -> list[Command]:
    """``place_tile`` commands for the drawn tile (every rotation a client may send)."""
    if state.tile is None or state.board is None:
        return []
    tile = engine.dataset.tile(state.tile)
    return [command("place_tile", x=x, y=y, rotation=r) for x, y, r in state.board.legal_placements(tile)]


def placed_tile(state: CastleState) -> Placed:
    """The tile placed this turn."""
    assert state.board is not None and state.placed is not None
    return state.board.cells[state.placed]


def follower_spots(engine: CastleTables, state: CastleState, seat: int) -> list[tuple[str, str, str, Feature]]:
    """(at, follower kind, role, feature) for every follower ``seat`` may place now."""
    if state.phase is not Phase.PLACE_FOLLOWER or state.board is None:
        return []
    supply = state.seats[seat]
    kinds = []
    if supply.followers > 0:
        kinds.append("normal")
    if state.options.falcon:
        if supply.prince:
            kinds.append("prince")
        if supply.falconer:
            kinds.append("falconer")
    if not kinds:
        return []
    placed = placed_tile(state)
    out = []
    for spot in free_spots(state.board, placed.x, placed.y, one_per_feature=True):
        feature = spot.feature
        scored_now = feature.complete and feature.kind in SCORED_KINDS
        for kind in kinds:
            # Neither special follower may go where its own tile scores at once (Falcon).
            if kind != "normal" and scored_now:
                continue
            out.append((spot.at, kind, ROLES[feature.kind], feature))
    return out


def scoring_choices(engine: CastleTables, state: CastleState) -> list[FeatureRef]:
    """Features the active seat may score next: its own first, then the opponent's."""
    if state.phase is not Phase.SCORE:
        return []
    own: list[FeatureRef] = []
    other: list[FeatureRef] = []
    for ref in state.pending:
        winners = scorers(state, completed_feature(state, ref))
        if not winners:
            return [ref]
        (own if state.active in winners else other).append(ref)
    return own or other


def doubling_options(engine: CastleTables, state: CastleState) -> list[tuple[str, FeatureRef]]:
    """(wall tile kind, feature) pairs: a doubling tile the active seat may play now."""
    if state.phase is not Phase.SCORE:
        return []
    seat = state.active
    kinds = [k for k in usable_wall_tiles(state, seat) if engine.wall_tile_kind(k).effect is WallEffect.DOUBLE]
    if not kinds:
        return []
    out = []
    for ref in scoring_choices(engine, state):
        if ref in state.doubled:
            continue
        feature = completed_feature(state, ref)
        if seat not in scorers(state, feature):
            continue
        if doubling(feature, seat) is not None:
            continue  # a feature is doubled at most once; the prince already does it
        for kind in kinds:
            if engine.wall_tile_kind(kind).feature == feature.kind:
                out.append((kind, ref))
    return out


def extra_turn_tiles(engine: CastleTables, state: CastleState) -> list[str]:
    if state.phase is not Phase.END_TURN or state.remaining == 0:
        return []
    usable = usable_wall_tiles(state, state.active)
    return [k for k in usable if engine.wall_tile_kind(k).effect is WallEffect.EXTRA_TURN]


def usable_wall_tiles(state: CastleState, seat: int) -> list[str]:
    """Distinct kinds of wall tiles ``seat`` holds that were taken before this turn."""
    out: list[str] = []
    for held in state.seats[seat].wall_tiles:
        if held.taken_turn < state.turn and held.kind not in out:
            out.append(held.kind)
    return out


def naming_args(state: CastleState, ref: FeatureRef, key: str = "feature") -> dict[str, Any]:
    """Command args naming a completed feature: ``{key: at}``, plus ``x`` and ``y`` when it is
    named on a tile other than the one just placed (a building that tile closed)."""
    x, y, at = ref
    return {key: at} if (x, y) == state.placed else {key: at, "x": x, "y": y}


def ref_text(state: CastleState, ref: FeatureRef) -> str:
    x, y, at = ref
    return at if (x, y) == state.placed else f"{at} at ({x}, {y})"
