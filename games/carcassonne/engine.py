"""The Carcassonne engine (base game C2 with farmers, optional Inns & Cathedrals): a pure Decider.

Turn flow: the tile to place is always drawn already (``view["tile"]``). ``place_tile`` puts it
down; then ``place_follower`` or ``pass`` ends the turn: the features the tile completed are
scored, their followers go back, and the next seat's tile is drawn (tiles with no legal
placement anywhere are discarded and the same seat draws again). When the pile is empty the
final scoring follows as events and the game is over.

Commands::

    {"type": "place_tile", "args": {"x": 1, "y": 0, "rotation": 90}}
    {"type": "place_follower", "args": {"at": "E", "kind": "normal"}}   # or "large"
    {"type": "pass", "args": {}}

``at`` is a port name of the placed tile as it lies (``Nw N Ne En E Es Se S Sw Ws W Wn``; any
port of a segment names that segment), ``monastery`` or ``inner_field``.

Events (payloads): ``game_started {seats, options, start, pile, tile_order, tile_order_sha256,
secret_salt}`` (``tile_order`` is a secret option: see :func:`games.base.secret_fields`),
``tile_drawn {seat, tile, remaining}``, ``tile_discarded {seat, tile, remaining}``,
``tile_placed {seat, tile, x, y, rotation}``, ``follower_placed {seat, x, y, at, kind}``,
``follower_skipped {seat}``, ``feature_scored {...}`` (see :mod:`games.carcassonne.scoring`),
``game_ended {scores, winners}``.
"""

from __future__ import annotations

import random
from typing import Any, Mapping

from games.base import (
    SPECTATOR,
    BadCommand,
    EngineBase,
    Event,
    GameOver,
    IllegalMove,
    NotYourTurn,
    OptionSpec,
    UnknownCommand,
    int_arg,
    parse_command,
    redact_secrets,
    secret_fields,
)
from games.carcassonne.scoring import (
    INNER_FIELD,
    completed_scorings,
    final_scorings,
    segment_at,
    spot_name,
)
from games.carcassonne.state import (
    LARGE_FOLLOWERS,
    NORMAL_FOLLOWERS,
    FollowerKind,
    Options,
    Phase,
    State,
    Turn,
)
from games.carcassonne.assets import assets as tile_assets
from games.carcassonne.tiles import FIELD, MONASTERY, START_TILE, TileSet, tile_set
from games.tileboard import (
    PORT_NAMES,
    ROTATIONS,
    Board,
    BoardRules,
    Follower,
    check_draw_order,
    draw_sequence,
    draw_until_placeable,
    free_spots,
)

__all__ = ["CarcassonneEngine", "ENGINE"]

Command = dict[str, Any]


class CarcassonneBoardRules(BoardRules):
    """Unbounded board; facing sides must have the same type (the middle port's kind)."""

    def side_key(self, kinds: tuple[str | None, str | None, str | None]) -> str | None:
        return kinds[1]


_RULES: dict[int, CarcassonneBoardRules] = {
    id(tile_set(ic, junction)): CarcassonneBoardRules() for ic in (False, True) for junction in ("east", "east_west")
}
"""One rules instance (with its placement memo) per tile set, made once at import."""


def board_rules(tiles: TileSet) -> CarcassonneBoardRules:
    return _RULES[id(tiles)]


def start_board(tiles: TileSet) -> Board:
    return Board.empty(board_rules(tiles)).place(tiles.tiles[START_TILE], 0, 0, 0, check=False)


OPTIONS: dict[str, OptionSpec] = {
    "inns_cathedrals": OptionSpec("bool", False, "Inns & Cathedrals: 18 more tiles, inns, cathedrals, "
                                  "one large follower each, up to 6 players."),
    "farmers": OptionSpec("bool", True, "Followers may be placed on fields; fields score 3 per adjacent "
                          "completed city at the end."),
    "tiny_city_points": OptionSpec("choice", 4, "Points per completed 2-tile city without pennants: 4 (2nd "
                                   "edition) or 2 (1st edition: 1 per tile and pennant).", (4, 2)),
    "junction_inn": OptionSpec("choice", "east", "Which legs of the I&C junction tile IC-C its inn belongs to "
                               "(open question Q1): 'east' (recommended) or 'east_west'.", ("east", "east_west")),
    "tile_order": OptionSpec("list", None, "Tile ids drawn in this order after the start tile (tutorials, "
                             "puzzles, games played at a table); the game ends when the list is used up. "
                             "Secret: never shown to players or spectators.", items="tile ids"),
}


class CarcassonneEngine(EngineBase):
    """Implements :class:`games.base.Engine` for Carcassonne."""

    name = "carcassonne"
    title = "Carcassonne"
    min_seats = 2
    max_seats = 6
    options = OPTIONS
    secret_options = frozenset({"tile_order"})
    notes = ("2-5 players; 6 only with inns_cathedrals.",)

    # --- catalog and options ----------------------------------------------------------------

    def seat_range(self, options: Mapping[str, Any]) -> tuple[int, int]:
        return 2, 6 if options["inns_cathedrals"] else 5

    def check_options(self, options: dict[str, Any], seats: int) -> dict[str, Any]:
        if options["tile_order"] is not None:
            tiles = tile_set(options["inns_cathedrals"], options["junction_inn"])
            options["tile_order"] = list(check_draw_order(options["tile_order"], tiles.pile_counts()))
        return options

    def _options(self, options: Mapping[str, Any], seats: int) -> Options:
        o = self.normalize_options(options, seats)
        order = None if o["tile_order"] is None else tuple(o["tile_order"])
        return Options(o["inns_cathedrals"], o["farmers"], o["tiny_city_points"], o["junction_inn"], order)

    # --- setup and evolve -------------------------------------------------------------------

    def initial_state(self) -> State:
        return State()

    def setup(self, options: Mapping[str, Any], seats: int, rng: random.Random) -> list[Event]:
        opts = self._options(options, seats)
        started = Event("game_started", {
            "seats": seats,
            "options": self.public_options(opts.as_dict()),
            "start": {"tile": START_TILE, "x": 0, "y": 0, "rotation": 0},
            "pile": len(opts.tile_order) if opts.tile_order is not None else sum(opts.tiles.pile_counts().values()),
            **secret_fields(self.secret_options, opts.as_dict(), rng),
        })
        state = self.evolve(self.initial_state(), started)
        return [started, *self._draw(state, 0, rng)[0]]

    def evolve(self, state: State, event: Event) -> State:
        p = event.payload
        match event.type:
            case "game_started":
                opts = self._options({**p["options"], "tile_order": p["tile_order"]}, p["seats"])
                tiles = opts.tiles
                counts = tiles.pile_counts()
                large = LARGE_FOLLOWERS if opts.inns_cathedrals else 0
                return State(
                    phase=Phase.PLACE_TILE,
                    options=opts,
                    seats=p["seats"],
                    board=start_board(tiles),
                    pile=tuple(counts[tid] for tid in tiles.ids),
                    order=opts.tile_order,
                    supply=((NORMAL_FOLLOWERS, large),) * p["seats"],
                    scores=(0,) * p["seats"],
                )
            case "tile_drawn":
                return state.but(**self._take(state, p["tile"]), phase=Phase.PLACE_TILE, current=p["seat"],
                                 tile=p["tile"], placed=None)
            case "tile_discarded":
                return state.but(**self._take(state, p["tile"]), discarded=state.discarded + (p["tile"],))
            case "tile_placed":
                tile = state.options.tiles.tiles[p["tile"]]
                board = state.board.place(tile, p["x"], p["y"], p["rotation"], check=False)
                return state.but(board=board, phase=Phase.PLACE_FOLLOWER, tile=None, placed=(p["x"], p["y"]))
            case "follower_placed":
                placed = state.board.cells[(p["x"], p["y"])]
                follower = Follower(p["seat"], p["kind"], p["x"], p["y"], segment_at(placed, p["at"]))
                normal, large = state.supply[p["seat"]]
                if p["kind"] == FollowerKind.LARGE.value:
                    large -= 1
                else:
                    normal -= 1
                return state.but(
                    board=state.board.with_follower(follower),
                    supply=_set(state.supply, p["seat"], (normal, large)),
                    turns=state.turns + (self._turn(state, p["seat"], p["at"], p["kind"]),),
                    phase=Phase.SCORING,
                )
            case "follower_skipped":
                return state.but(turns=state.turns + (self._turn(state, p["seat"], None, None),),
                                 phase=Phase.SCORING)
            case "feature_scored":
                return self._apply_scoring(state, p)
            case "game_ended":
                return state.but(phase=Phase.OVER, tile=None, placed=None, winners=tuple(p["winners"]))
        raise ValueError(f"carcassonne: unknown event type {event.type!r}")

    @staticmethod
    def _take(state: State, tile_id: str) -> dict[str, Any]:
        """The pile change of drawing ``tile_id``."""
        if state.order is not None:
            return {"order": state.order[1:]}
        i = state.options.tiles.ids.index(tile_id)
        return {"pile": state.pile[:i] + (state.pile[i] - 1,) + state.pile[i + 1:]}

    @staticmethod
    def _turn(state: State, seat: int, at: str | None, kind: str | None) -> Turn:
        x, y = state.placed
        placed = state.board.cells[(x, y)]
        return Turn(seat, placed.tile.id, x, y, placed.rotation, at, kind)

    @staticmethod
    def _apply_scoring(state: State, p: dict[str, Any]) -> State:
        scores = list(state.scores)
        for seat in p["winners"]:
            scores[seat] += p["points"]
        supply = [list(s) for s in state.supply]
        board = state.board
        gone = set()
        for seat, x, y, at, kind in p["followers_returned"]:
            supply[seat][1 if kind == FollowerKind.LARGE.value else 0] += 1
            gone.add(board.seg_feature[(x, y, segment_at(board.cells[(x, y)], at))])
        return state.but(scores=tuple(scores), supply=tuple(tuple(s) for s in supply),
                       board=board.without_followers(gone))

    # --- decide -----------------------------------------------------------------------------

    def decide(self, state: State, seat: int, cmd: Command, rng: random.Random) -> list[Event]:
        """Events for ``cmd`` by ``seat``.

        :raises BadCommand: malformed command or arguments (``bad_command``).
        :raises UnknownCommand: a type other than place_tile, place_follower, pass.
        :raises GameOver: the game has ended.
        :raises NotYourTurn: another seat acts now, or this command is not the one owed.
        :raises IllegalMove: the placement or follower spot breaks the rules.
        """
        kind, args = parse_command(cmd)
        if kind not in ("place_tile", "place_follower", "pass"):
            raise UnknownCommand(f"carcassonne has no command {kind!r}; use place_tile, place_follower or pass")
        if state.phase is Phase.OVER:
            raise GameOver(f"the game is over; {kind!r} is not accepted")
        if state.phase is Phase.NOT_STARTED:
            raise IllegalMove("the game has not started")
        if seat != state.current:
            raise NotYourTurn(f"it is seat {state.current}'s turn, not seat {seat!r}'s")
        if kind == "place_tile":
            return self._decide_place_tile(state, seat, args)
        if state.phase is not Phase.PLACE_FOLLOWER:
            raise NotYourTurn(f"place the tile {state.tile} first; {kind!r} comes after place_tile")
        if kind == "pass":
            _expect(args, set(), kind)
            return self._end_turn(state, Event("follower_skipped", {"seat": seat}), rng)
        return self._decide_follower(state, seat, args, rng)

    def _decide_place_tile(self, state: State, seat: int, args: dict[str, Any]) -> list[Event]:
        if state.phase is not Phase.PLACE_TILE:
            raise NotYourTurn("the tile is already placed; send place_follower or pass")
        _expect(args, {"x", "y", "rotation"}, "place_tile")
        x, y, rotation = (int_arg(args, k, "place_tile") for k in ("x", "y", "rotation"))
        if rotation not in ROTATIONS:
            raise BadCommand(f"place_tile: rotation must be one of {list(ROTATIONS)}, got {rotation!r}")
        tile = state.options.tiles.tiles[state.tile]
        if (x, y) in state.board.cells:
            raise IllegalMove(f"place_tile: ({x}, {y}) already holds a tile")
        if not state.board.is_legal(tile, x, y, rotation):
            raise IllegalMove(f"place_tile: tile {state.tile} rotated {rotation} does not fit at ({x}, {y}): "
                              "it must touch a placed tile along an edge and every touching side must match")
        return [Event("tile_placed", {"seat": seat, "tile": state.tile, "x": x, "y": y, "rotation": rotation})]

    def _decide_follower(self, state: State, seat: int, args: dict[str, Any], rng: random.Random) -> list[Event]:
        if "kind" not in args:
            args = {**args, "kind": FollowerKind.NORMAL.value}
        _expect(args, {"at", "kind"}, "place_follower")
        at, kind = args["at"], args["kind"]
        if not isinstance(at, str):
            raise BadCommand(f"place_follower: at must be a port name, 'monastery' or 'inner_field', got {at!r}")
        if kind not in (FollowerKind.NORMAL.value, FollowerKind.LARGE.value):
            raise BadCommand(f"place_follower: kind must be 'normal' or 'large', got {kind!r}")
        if at not in PORT_NAMES and at not in (MONASTERY, INNER_FIELD):
            raise BadCommand(f"place_follower: unknown spot {at!r}; use a port name, 'monastery' or 'inner_field'")
        x, y = state.placed
        placed = state.board.cells[(x, y)]
        segment = segment_at(placed, at)
        if segment is None:
            raise IllegalMove(f"place_follower: tile {placed.tile.id} has no {at!r}")
        if not self._allowed_kind(state, seat, kind):
            raise IllegalMove(f"place_follower: seat {seat} has no {kind} follower to place")
        if placed.tile.segments[segment].kind == FIELD and not state.options.farmers:
            raise IllegalMove(f"place_follower: farmers are off in this game; {at!r} is a field")
        if state.board.feature_of(x, y, segment).followers:
            raise IllegalMove(f"place_follower: the feature at {at!r} already holds a follower")
        event = Event("follower_placed", {"seat": seat, "x": x, "y": y, "at": spot_name(placed, segment), "kind": kind})
        return self._end_turn(state, event, rng)

    @staticmethod
    def _allowed_kind(state: State, seat: int, kind: str) -> bool:
        normal, large = state.supply[seat]
        return normal > 0 if kind == FollowerKind.NORMAL.value else large > 0

    def _end_turn(self, state: State, first: Event, rng: random.Random) -> list[Event]:
        events = [first]
        state = self.evolve(state, first)
        x, y = state.placed
        for _, payload in completed_scorings(state.board, x, y, state.options):
            scored = Event("feature_scored", payload)
            events.append(scored)
            state = self.evolve(state, scored)
        more, _ = self._draw(state, (state.current + 1) % state.seats, rng)
        return events + more

    def _draw(self, state: State, seat: int, rng: random.Random) -> tuple[list[Event], State]:
        """Draw for ``seat`` until a placeable tile turns up, or score the end of the game."""
        events: list[Event] = []
        tiles = state.options.tiles
        drawn = draw_sequence(rng, tuple(zip(tiles.ids, state.pile)), state.order)
        discarded, tile_id = draw_until_placeable(state.board, tiles.tiles.__getitem__, drawn)
        for kind, tid in [*(("tile_discarded", t) for t in discarded), ("tile_drawn", tile_id)]:
            if tid is None:
                break
            event = Event(kind, {"seat": seat, "tile": tid, "remaining": state.remaining - 1})
            events.append(event)
            state = self.evolve(state, event)
        if tile_id is not None:
            return events, state
        for _, payload in final_scorings(state.board, state.options):
            event = Event("feature_scored", payload)
            events.append(event)
            state = self.evolve(state, event)
        best = max(state.scores)
        ended = Event("game_ended", {"scores": list(state.scores),
                                     "winners": [s for s, v in enumerate(state.scores) if v == best]})
        events.append(ended)
        return events, self.evolve(state, ended)

    # --- legal moves, views -----------------------------------------------------------------

    def waiting_for(self, state: State) -> list[int]:
        """Only the current seat ever owes a command: the tile, then the follower step."""
        return [state.current] if state.phase in (Phase.PLACE_TILE, Phase.PLACE_FOLLOWER) else []

    def legal_moves(self, state: State, seat: int) -> list[Command]:
        if seat != state.current:
            return []
        if state.phase is Phase.PLACE_TILE:
            tile = state.options.tiles.tiles[state.tile]
            return [{"type": "place_tile", "args": {"x": x, "y": y, "rotation": r}}
                    for x, y, r in state.board.legal_placements(tile)]
        if state.phase is Phase.PLACE_FOLLOWER:
            return [*self.follower_moves(state, seat), {"type": "pass", "args": {}}]
        return []

    def follower_moves(self, state: State, seat: int) -> list[Command]:
        """One place_follower per free segment of the placed tile and allowed kind."""
        kinds = [k.value for k in FollowerKind if self._allowed_kind(state, seat, k.value)]
        if not kinds:
            return []
        x, y = state.placed
        farmers = state.options.farmers
        out = []
        for spot in free_spots(state.board, x, y, middle_first=True):
            if not farmers and spot.feature.kind == FIELD:
                continue
            out.extend({"type": "place_follower", "args": {"at": spot.at, "kind": k}} for k in kinds)
        return out

    def view(self, state: State, viewer: int | None) -> dict[str, Any]:
        if state.phase is Phase.NOT_STARTED:
            return {"game": self.name, "phase": state.phase.value, "legal": []}
        board = state.board
        on_cell: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for f in board.followers():
            on_cell.setdefault((f.x, f.y), []).append(
                {"seat": f.owner, "at": spot_name(board.cells[(f.x, f.y)], f.segment), "kind": f.kind})
        over = state.phase is Phase.OVER
        return {
            "game": self.name,
            "phase": state.phase.value,
            "seats": state.seats,
            "current": None if over else state.current,
            "tile": state.tile,
            "placed": None if state.placed is None or over else {"x": state.placed[0], "y": state.placed[1]},
            "board": [
                {"id": p.tile.id, "x": p.x, "y": p.y, "rotation": p.rotation,
                 "followers": sorted(on_cell.get((p.x, p.y), []), key=lambda d: (d["seat"], d["at"]))}
                for p in board.cells.values()
            ],
            "remaining": state.remaining,
            "remaining_by_tile": state.remaining_by_tile(),
            "discarded": list(state.discarded),
            "scores": list(state.scores),
            "supply": [{"normal": n, "large": g} for n, g in state.supply],
            "options": self.public_options(state.options.as_dict()),
            "winners": list(state.winners),
            "legal": [] if viewer is SPECTATOR else self.legal_moves(state, viewer),
        }

    def assets(self) -> dict[str, Any]:
        """The tile designs clients draw (``GET /games/catalog/carcassonne/assets``)."""
        return tile_assets()

    def redact(self, event: Event, viewer: int | None) -> Event | None:
        if event.type == "game_started":
            # A tile_order is the future; only its commitment is public.
            return redact_secrets(event, self.secret_options)
        return event

    def is_terminal(self, state: State) -> bool:
        return state.phase is Phase.OVER

    def summary(self, state: State) -> dict[str, Any]:
        return {
            "status": state.phase.value,
            "scores": list(state.scores),
            "winners": list(state.winners),
            "turns": len(state.turns),
            "remaining": state.remaining if state.phase is not Phase.NOT_STARTED else None,
        }


# --- small helpers ------------------------------------------------------------------------


def _set(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


def _expect(args: dict[str, Any], keys: set[str], kind: str) -> None:
    missing = sorted(keys - set(args))
    extra = sorted(set(args) - keys)
    if missing or extra:
        raise BadCommand(f"{kind}: expected args {sorted(keys)}, got {sorted(args)}"
                         + (f" (missing {missing})" if missing else "") + (f" (unknown {extra})" if extra else ""))


ENGINE = CarcassonneEngine()
