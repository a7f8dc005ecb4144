"""What a seat or a spectator sees of a Carcassonne game, and the summary.

Everything on the table is public; the one secret is a scripted ``tile_order`` (the future),
which ``game_started`` shows only as its salted commitment.
"""

from __future__ import annotations

from typing import Any

from games.base import SPECTATOR, Event, redact_secrets
from games.carcassonne.legal import legal_moves
from games.carcassonne.scoring import spot_name
from games.carcassonne.state import SECRET_OPTIONS, Phase, State

__all__ = ["private_view", "public_view", "redact", "summary", "view"]


def view(state: State, viewer: int | None) -> dict[str, Any]:
    """The game as ``viewer`` sees it: :func:`public_view` and :func:`private_view` together."""
    return {**public_view(state), **private_view(state, viewer)}


def private_view(state: State, viewer: int | None) -> dict[str, Any]:
    """The one field that differs between viewers: ``legal`` (empty but for the seat to play)."""
    return {"legal": [] if viewer is SPECTATOR or state.phase is Phase.NOT_STARTED else legal_moves(state, viewer)}


def public_view(state: State) -> dict[str, Any]:
    """Every field but ``legal``: the same for every seat and the spectators (the table is public)."""
    if state.phase is Phase.NOT_STARTED:
        return {"game": "carcassonne", "phase": state.phase.value}
    board = state.table
    on_cell: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for f in board.followers():
        on_cell.setdefault((f.x, f.y), []).append(
            {"seat": f.owner, "at": spot_name(board.cells[(f.x, f.y)], f.segment), "kind": f.kind})
    over = state.phase is Phase.OVER
    options = state.options.as_dict()
    return {
        "game": "carcassonne",
        "phase": state.phase.value,
        "seats": state.seats,
        "current": None if over else state.current,
        "tile": state.tile,
        "placed": None if state.placed is None or over else {"x": state.placed[0], "y": state.placed[1]},
        "board": [
            {"id": p.tile.id, "x": p.x, "y": p.y, "rotation": p.rotation, "followers": _sorted(on_cell.get((p.x, p.y)))}
            for p in board.cells.values()
        ],
        "remaining": state.remaining,
        "remaining_by_tile": state.remaining_by_tile(),
        "discarded": list(state.discarded),
        "scores": list(state.scores),
        "supply": [{"normal": n, "large": g} for n, g in state.supply],
        "options": {name: value for name, value in options.items() if name not in SECRET_OPTIONS},
        "winners": list(state.winners),
    }


def _sorted(followers: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A tile's followers by seat, then spot (most tiles have none: nothing to sort)."""
    if not followers:
        return []
    return sorted(followers, key=lambda d: (d["seat"], d["at"])) if len(followers) > 1 else followers


def redact(event: Event, viewer: int | None) -> Event | None:
    if event.type == "game_started":
        # A tile_order is the future; only its commitment is public.
        return redact_secrets(event, SECRET_OPTIONS)
    return event


def summary(state: State) -> dict[str, Any]:
    return {
        "status": state.phase.value,
        "scores": list(state.scores),
        "winners": list(state.winners),
        "turns": len(state.turns),
        "remaining": state.remaining if state.phase is not Phase.NOT_STARTED else None,
    }
