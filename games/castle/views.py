"""What a seat or a spectator sees of a Castle game: everything on the table, nothing hidden.

Hidden in the physical game are the order of the castle-tile stack and the face-down wall tiles
on the towers. Neither exists in the state: the next tile and a tower's wall tile are drawn at
the moment they are needed. So a view shows how many castle tiles remain and which towers still
hold a (face-down) wall tile, never which tiles those are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import Event, Viewer, public_options, redact_secrets
from games.castle.legal import ROLES, legal_moves, scoring_choices, usable_wall_tiles
from games.castle.scoring import completed_feature, scorers
from games.castle.state import CastleState, Phase
from games.castle.tables import CastleTables
from games.tileboard import Board, Follower, segment_name

__all__ = ["LABELS", "private_view", "public_view", "redact", "summary", "view"]

LABELS: Mapping[str, Mapping[str, str]] = {
    "path": {"original": "path", "zamek": "road", "pl": "droga", "role": "herald", "role_zamek": "herald",
             "role_pl": "herold"},
    "house": {"original": "house", "zamek": "house", "pl": "dom", "role": "squire", "role_zamek": "squire",
              "role_pl": "giermek"},
    "tower": {"original": "tower", "zamek": "pigsty", "pl": "chlew", "role": "knight", "role_zamek": "farmer",
              "role_pl": "rolnik"},
    "court": {"original": "court", "zamek": "meadow", "pl": "łąka", "role": "merchant", "role_zamek": "monk",
              "role_pl": "mnich"},
    "chapel": {"original": "chapel", "zamek": "chapel", "pl": "kaplica", "role": "preacher",
               "role_zamek": "preacher", "role_pl": "kaznodzieja"},
    "market": {"original": "market", "zamek": "shrine", "pl": "kapliczka"},
    "square": {"original": "square", "zamek": "fountain", "pl": "fontanna"},
    "fountain": {"original": "fountain", "zamek": "stocks", "pl": "dyby"},
    "keep": {"original": "keep", "zamek": "family house", "pl": "siedziba rodu"},
    "prince": {"original": "king", "zamek": "prince", "pl": "książę"},
    "falconer": {"original": "falconer", "zamek": "falconer", "pl": "sokolnik"},
    "aerie": {"original": "falcon aerie", "zamek": "falcon nest", "pl": "gniazdo sokoła"},
    "wall_tile": {"original": "wall tile", "zamek": "special token", "pl": "żeton specjalny"},
}
"""Display names: the original (RGG) English, the Zamek edition's English and its Polish words."""


def view(engine: CastleTables, state: CastleState, viewer: Viewer) -> dict[str, Any]:
    """The game as ``viewer`` sees it: :func:`public_view` and :func:`private_view` together."""
    return {**public_view(engine, state), **private_view(engine, state, viewer)}


def private_view(engine: CastleTables, state: CastleState, viewer: Viewer) -> dict[str, Any]:
    """The one field that differs between viewers: ``legal`` (empty but for the seat to play)."""
    started = state.phase is not Phase.NOT_STARTED and state.board is not None
    return {"legal": legal_moves(engine, state, viewer) if started and isinstance(viewer, int) else []}


def public_view(engine: CastleTables, state: CastleState) -> dict[str, Any]:
    """Every field but ``legal``: the same for both seats and the spectators (nothing is hidden)."""
    if state.phase is Phase.NOT_STARTED or state.board is None:
        return {"game": engine.name, "phase": state.phase.value}
    falcon = state.options.falcon
    interior, start_spaces = engine.outline(falcon)
    out: dict[str, Any] = {
        "game": engine.name,
        "dataset": state.dataset,
        "options": public_options(state.options.as_dict(), engine.secret_options),
        "phase": state.phase.value,
        "active": None if state.phase is Phase.OVER else state.active,
        "turn": state.turn,
        "tile": state.tile,
        "placed": None if state.placed is None else list(state.placed),
        "remaining": state.remaining,
        "set_aside": list(state.set_aside),
        "interior": list(interior),
        "start_spaces": [dict(space) for space in start_spaces],
        "board": _tiles(state.board),
        "scores": [s.marker.score for s in state.seats],
        "seats": _seats(engine, state),
        "towers": [
            {"spaces": list(t.spaces), "wall_tile": state.towers[t.index]} for t in engine.dataset.track.towers
        ],
        "wall_tiles_on_towers": sum(state.towers),
        "gates": [list(g) for g in engine.dataset.track.gates] if falcon else [],
        "pending": _pending(engine, state),
        "extra_turns": state.extra_turns,
    }
    if falcon:
        out["aerie_supply"] = state.aerie_supply
    if state.phase is Phase.OVER:
        out["final"] = [dict(item) for item in state.final]
        out["winners"] = list(state.winners)
    return out


def _tiles(board: Board) -> list[dict[str, Any]]:
    """The placed tiles (the start spaces aside), each with the followers standing on it, in the
    order of the segments they stand on."""
    standing = _standing(board)
    tiles = []
    for (x, y), placed in board.cells.items():
        if placed.fixed:
            continue
        followers = [
            {"at": segment_name(placed, segment), "seat": follower.owner, "kind": follower.kind,
             "role": ROLES[kind], "role_pl": LABELS[kind]["role_pl"]}
            for segment, follower, kind in sorted(standing.get((x, y), ()), key=_segment)
        ]  # sorted is stable: the followers on one segment keep their feature's order
        tiles.append({"x": x, "y": y, "tile": placed.tile.id, "rotation": placed.rotation, "followers": followers})
    return tiles


def _standing(board: Board) -> dict[tuple[int, int], list[tuple[int, Follower, str]]]:
    """Each cell's followers as (segment, follower, the kind of feature it stands on): found
    from the few features that hold any rather than by asking every segment of every tile."""
    standing: dict[tuple[int, int], list[tuple[int, Follower, str]]] = {}
    for feature in board.features.values():
        for follower in feature.followers:
            standing.setdefault((follower.x, follower.y), []).append((follower.segment, follower, feature.kind))
    return standing


def _segment(standing: tuple[int, Follower, str]) -> int:
    return standing[0]


def _seats(engine: CastleTables, state: CastleState) -> list[dict[str, Any]]:
    """Each seat's marker on the wall, supply, wall tiles (which are usable now), keep and aeries."""
    falcon = state.options.falcon
    wall = engine.wall(state)
    seats = []
    for seat, s in enumerate(state.seats):
        gate = s.marker.gate
        usable = set(usable_wall_tiles(state, seat)) if seat == state.active else set()
        seats.append({
            "seat": seat,
            "score": s.marker.score,
            "space": s.marker.space(wall.length),
            "lap": s.marker.lap(wall.length),
            "at_gate": None if gate is None else [gate, (gate + 1) % wall.length],
            "supply": {"normal": s.followers, "prince": s.prince, "falconer": s.falconer}
            if falcon else {"normal": s.followers},
            "wall_tiles": [
                {**engine.wall_tile_info(h.kind), "taken_turn": h.taken_turn,
                 "usable_now": h.kind in usable and h.taken_turn < state.turn}
                for h in s.wall_tiles
            ],
            "keep": None if s.keep is None else {"size": s.keep.size, "tiles": [list(c) for c in s.keep.cells]},
            **({"aeries": s.aeries} if falcon else {}),
        })
    return seats


def _pending(engine: CastleTables, state: CastleState) -> list[dict[str, Any]]:
    """The completed features still to score, and which of them may be scored next."""
    pending = []
    if state.phase is Phase.SCORE:
        choices = scoring_choices(engine, state)
        for ref in state.pending:
            x, y, at = ref
            feature = completed_feature(state, ref)
            pending.append({"feature": at, "x": x, "y": y, "kind": feature.kind, "tiles": feature.tile_count,
                            "scorers": list(scorers(state, feature)), "next": ref in choices,
                            "doubled": ref in state.doubled})
    return pending


def redact(engine: CastleTables, event: Event, viewer: Viewer) -> Event | None:
    """Events are public: draws are recorded when they happen (the log holds no future), the
    drawn castle tile is shown to both players, and a wall tile is turned face up when
    taken. The one exception is a scripted ``tile_order``, the future by definition: the
    ``game_started`` event shows only its salted commitment (:func:`games.base.secret_fields`)."""
    if event.type == "game_started":
        return redact_secrets(event, engine.secret_options)
    return event


def summary(state: CastleState) -> dict[str, Any]:
    status = {Phase.NOT_STARTED: "not_started", Phase.OVER: "over"}.get(state.phase, "playing")
    return {
        "status": status,
        "scores": [s.marker.score for s in state.seats],
        "winners": list(state.winners),
        "turn": state.turn,
        "active": None if state.phase in (Phase.NOT_STARTED, Phase.OVER) else state.active,
        "remaining": state.remaining,
    }
