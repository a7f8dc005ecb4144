"""The Castle's rules engine: setup, decide, evolve and legal moves over a loaded dataset.

A turn (seat 0 starts; seats alternate; an extra-turn wall tile repeats a seat):

1. ``place_tile {"x", "y", "rotation"}``: the drawn tile goes on an empty interior space touching
   a placed tile or a start space along a full edge; only paths must match.
2. ``place_follower {"at", "kind"}`` on a free feature of that tile, or ``pass``.
3. Every path, house, tower and chapel the tile completed is scored, the placing player's own
   features first, in the order that player picks with ``score {"feature"}`` when there is a
   choice; a doubling wall tile is played with ``use_wall_tile {"tile", "target"}`` before the
   feature is scored. Scores move markers on the wall; a marker ending exactly on a corner tower
   that still holds a wall tile takes it (drawn at that moment, face up).
4. ``use_wall_tile {"tile": "extra_turn"}`` or ``end_turn`` when an extra turn is possible.
5. Followers on the features completed this turn return; the next tile is drawn (unplaceable
   draws are set aside). Whatever leaves no choice happens at once, in the same command.

The game ends when no tile is left to draw; then the keep, courts, end-game wall tiles and (with
the Falcon) the aerie bonus are scored. Every random outcome (the next castle tile, the wall tile
found on a tower) is drawn with the service's rng when it happens and written into an event.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

from games.base import (
    BadCommand,
    BadOptions,
    EngineBase,
    Event,
    GameOver,
    IllegalMove,
    NotYourTurn,
    OptionSpec,
    UnknownCommand,
    Viewer,
    command,
    int_arg,
    parse_command,
    redact_secrets,
    secret_fields,
    str_arg,
)
from games.castle.assets import assets as dataset_assets
from games.castle.board import CastleRules, initial_board
from games.castle.data import Dataset, WallEffect, WallTileKind
from games.castle.scoring import MARKET_POINTS, controllers, feature_points, largest_empty_area
from games.castle.state import CastleState, HeldWallTile, Keep, Options, Phase, SeatState, with_seat
from games.castle.track import Marker, Wall
from games.tileboard import (
    ROTATIONS,
    Board,
    Feature,
    Follower,
    Placed,
    check_draw_order,
    draw,
    draw_sequence,
    draw_until_placeable,
    feature_at,
    find_segment,
    follower_record,
    free_spots,
    segment_name,
    take,
)

__all__ = ["CastleEngine", "ROLES", "LABELS", "FOLLOWER_KINDS"]

Command = dict[str, Any]

ROLES: Mapping[str, str] = {
    "path": "herald",
    "house": "squire",
    "tower": "knight",
    "court": "merchant",
    "chapel": "preacher",
}
"""A follower's role follows the feature it stands on (original names)."""

LABELS: Mapping[str, Mapping[str, str]] = {
    "path": {"original": "path", "zamek": "road", "pl": "droga", "role": "herald", "role_zamek": "herald", "role_pl": "herold"},
    "house": {"original": "house", "zamek": "house", "pl": "dom", "role": "squire", "role_zamek": "squire", "role_pl": "giermek"},
    "tower": {"original": "tower", "zamek": "pigsty", "pl": "chlew", "role": "knight", "role_zamek": "farmer", "role_pl": "rolnik"},
    "court": {"original": "court", "zamek": "meadow", "pl": "łąka", "role": "merchant", "role_zamek": "monk", "role_pl": "mnich"},
    "chapel": {"original": "chapel", "zamek": "chapel", "pl": "kaplica", "role": "preacher", "role_zamek": "preacher", "role_pl": "kaznodzieja"},
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

FOLLOWER_KINDS = ("normal", "prince", "falconer")

SCORED_KINDS = frozenset({"path", "house", "tower", "chapel"})
"""Kinds scored when completed during the game (courts only at the end)."""


class _Emit:
    """Collects a command's events and folds them into the running state, so later decisions
    in the same command see their effect (a tower taken by the first scoring). Folding waits
    until the state is read: a command whose last event is never looked at (``place_tile``)
    does not pay for it twice."""

    __slots__ = ("engine", "_state", "_unfolded", "events", "rng")

    def __init__(self, engine: "CastleEngine", state: CastleState, rng: random.Random) -> None:
        self.engine, self._state, self._unfolded, self.events, self.rng = engine, state, 0, [], rng

    def __call__(self, type_: str, **payload: Any) -> None:
        self.events.append(Event(type_, payload))
        self._unfolded += 1

    @property
    def state(self) -> CastleState:
        if self._unfolded:
            evolve = self.engine.evolve
            for event in self.events[len(self.events) - self._unfolded :]:
                self._state = evolve(self._state, event)
            self._unfolded = 0
        return self._state


class CastleEngine(EngineBase):
    """Carcassonne: The Castle (game id ``castle``) over one :class:`Dataset`."""

    name = "castle"
    title = "Carcassonne: The Castle"
    min_seats = 2
    max_seats = 2
    options: Mapping[str, OptionSpec] = {
        "falcon": OptionSpec("bool", False, "The Falcon expansion: 18 chapel/aerie tiles, gates, prince and falconer"),
        "ties": OptionSpec(
            "choice",
            "nobody",
            "A tie for a path, house, tower or chapel: 'nobody' scores (proposed default) or 'both' score in full",
            ("nobody", "both"),
        ),
        "halt_at_gates": OptionSpec(
            "bool", False, "Falcon variant 'Halt! Who goes there?': a marker reaching a gate stops there and loses the rest"
        ),
        "tile_order": OptionSpec(
            "list",
            None,
            "Castle tile ids drawn in this order instead of at random (tutorials, puzzles, a game from the table); "
            "the game ends when the list is used up. Secret: never shown to players or spectators",
            items="tile ids",
        ),
    }
    secret_options = frozenset({"tile_order"})

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._rules = {key: CastleRules(shape) for key, shape in dataset.boards.items()}
        self._start = {key: initial_board(rules) for key, rules in self._rules.items()}
        self._walls = {flag: Wall.from_track(dataset.track, with_gates=flag) for flag in (False, True)}
        self._kinds: dict[str, WallTileKind] = {k.name: k for k in dataset.wall_tiles}
        self._evolvers: dict[str, Callable[[CastleState, dict[str, Any]], CastleState]] = {
            name[3:]: getattr(self, name) for name in dir(self) if name.startswith("_e_")
        }
        self._commands: dict[str, Callable[[_Emit, int, dict[str, Any]], None]] = {
            "place_tile": self._c_place_tile,
            "place_follower": self._c_place_follower,
            "pass": self._c_pass,
            "score": self._c_score,
            "use_wall_tile": self._c_use_wall_tile,
            "end_turn": self._c_end_turn,
        }

    # --- catalog and options --------------------------------------------------------------------

    def catalog_extras(self) -> dict[str, Any]:
        provisional = dict(self.dataset.provisional)
        return {
            "dataset": self.dataset.name,
            "provisional": (
                f"The rules are implemented in full, but the physical data of dataset {self.dataset.name!r} is "
                f"partly provisional: {', '.join(provisional)}. An operator can load a corrected dataset file."
                if provisional else ""
            ),
            "provisional_parts": provisional,
            "labels": {k: dict(v) for k, v in LABELS.items()},
            "wall_tiles": [self.wall_tile_info(k.name) for k in self.dataset.wall_tiles],
            "commands": ["place_tile", "place_follower", "pass", "score", "use_wall_tile", "end_turn"],
        }

    def assets(self) -> dict[str, Any]:
        """The tile designs and start spaces clients draw (``GET /games/catalog/castle/assets``)."""
        return dataset_assets(self.dataset)

    def check_options(self, options: dict[str, Any], seats: int) -> dict[str, Any]:
        if options["halt_at_gates"] and not options["falcon"]:
            raise BadOptions("option 'halt_at_gates' needs the Falcon gates (falcon: true)")
        if options["tile_order"] is not None:
            available = {t.id: self.dataset.counts[t.id] for t in self._tile_set(options["falcon"])}
            options["tile_order"] = list(check_draw_order(
                options["tile_order"], available, allow_empty=False, noun="castle tile of this game"))
        return options

    # --- the decider --------------------------------------------------------------------------

    def initial_state(self) -> CastleState:
        return CastleState()

    def setup(self, options: Mapping[str, Any], seats: int, rng: random.Random) -> list[Event]:
        opts = self.normalize_options(options, seats)
        em = _Emit(self, self.initial_state(), rng)
        total = len(opts["tile_order"]) if opts["tile_order"] else sum(self.dataset.counts[t.id] for t in self._tile_set(opts["falcon"]))
        em("game_started", seats=2, options=self.public_options(opts), dataset=self.dataset.name, tiles=total,
           **secret_fields(self.secret_options, opts, rng))
        self._draw_next(em, 0)
        return em.events

    def decide(self, state: CastleState, seat: int, cmd: Command, rng: random.Random) -> list[Event]:
        """Events for ``cmd`` by ``seat``.

        :raises RuleError: ``bad_command`` (malformed args), ``unknown_command``,
            ``not_your_turn``, ``illegal_move`` (not possible now, or not allowed), ``game_over``.
        """
        kind, args = parse_command(cmd)
        handler = self._commands.get(kind)
        if handler is None:
            raise UnknownCommand(f"castle has no command {kind!r} (commands: {', '.join(self._commands)})")
        if state.phase is Phase.OVER:
            raise GameOver(f"the game is over; {kind!r} is not accepted")
        if state.phase is Phase.NOT_STARTED:
            raise IllegalMove("the game has not started")
        if seat != state.active:
            raise NotYourTurn(f"it is seat {state.active}'s turn, not seat {seat!r}'s")
        em = _Emit(self, state, rng)
        handler(em, seat, args)
        return em.events

    def is_legal(self, state: CastleState, seat: int, cmd: Command) -> bool:
        """Would ``decide`` accept ``cmd``? (Draws nothing: uses a throwaway rng.)"""
        try:
            self.decide(state, seat, cmd, random.Random(0))
        except ValueError:
            return False
        return True

    def waiting_for(self, state: CastleState) -> list[int]:
        """Only the active seat ever owes a command (wall tiles too are used on one's own turn)."""
        return [] if state.phase in (Phase.NOT_STARTED, Phase.OVER) else [state.active]

    def legal_moves(self, state: CastleState, seat: int) -> list[Command]:
        """Every command ``decide`` accepts from ``seat`` now; empty when it owes nothing."""
        if seat != state.active or state.phase in (Phase.NOT_STARTED, Phase.OVER):
            return []
        if state.phase is Phase.PLACE_TILE:
            return self.tile_placements(state)
        if state.phase is Phase.PLACE_FOLLOWER:
            spots = [
                command("place_follower", at=at, kind=kind, role=role) for at, kind, role, _ in self.follower_spots(state, seat)
            ]
            return spots + [command("pass")]
        if state.phase is Phase.SCORE:
            moves = [command("score", feature=at) for at in self.scoring_choices(state)]
            moves += [command("use_wall_tile", tile=kind, target=at) for kind, at in self.doubling_options(state)]
            return moves
        moves = [command("use_wall_tile", tile=kind) for kind in self.extra_turn_tiles(state)]
        return moves + [command("end_turn")]

    def tile_placements(self, state: CastleState) -> list[Command]:
        """``place_tile`` commands for the drawn tile (every rotation a client may send)."""
        if state.tile is None or state.board is None:
            return []
        tile = self.dataset.tile(state.tile)
        return [command("place_tile", x=x, y=y, rotation=r) for x, y, r in state.board.legal_placements(tile)]

    def is_terminal(self, state: CastleState) -> bool:
        return state.phase is Phase.OVER

    def summary(self, state: CastleState) -> dict[str, Any]:
        status = {Phase.NOT_STARTED: "not_started", Phase.OVER: "over"}.get(state.phase, "playing")
        return {
            "status": status,
            "scores": [s.marker.score for s in state.seats],
            "winners": list(state.winners),
            "turn": state.turn,
            "active": None if state.phase in (Phase.NOT_STARTED, Phase.OVER) else state.active,
            "remaining": state.remaining,
        }

    def view(self, state: CastleState, viewer: Viewer) -> dict[str, Any]:
        from games.castle.view import build_view

        return build_view(self, state, viewer)

    def redact(self, event: Event, viewer: Viewer) -> Event | None:
        """Events are public: draws are recorded when they happen (the log holds no future), the
        drawn castle tile is shown to both players, and a wall tile is turned face up when
        taken. The one exception is a scripted ``tile_order``, the future by definition: the
        ``game_started`` event shows only its salted commitment (:func:`games.base.secret_fields`)."""
        if event.type == "game_started":
            return redact_secrets(event, self.secret_options)
        return event

    # --- queries used by legal moves, views and bots ------------------------------------------------

    def board_rules(self, falcon: bool) -> CastleRules:
        return self._rules["falcon" if falcon else "base"]

    def wall(self, state: CastleState) -> Wall:
        return self._walls[state.options.falcon]

    def placed(self, state: CastleState) -> Placed:
        assert state.board is not None and state.placed is not None
        return state.board.cells[state.placed]

    def follower_spots(self, state: CastleState, seat: int) -> list[tuple[str, str, str, Feature]]:
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
        placed = self.placed(state)
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

    def scorers(self, state: CastleState, feature: Feature) -> tuple[int, ...]:
        """Seats scoring a completed feature, the active seat first."""
        winners = controllers(feature.followers, ties_score=state.options.ties_score)
        return tuple(sorted(winners, key=lambda s: s != state.active))

    def scoring_choices(self, state: CastleState) -> list[str]:
        """Features the active seat may score next: its own first, then the opponent's."""
        if state.phase is not Phase.SCORE:
            return []
        assert state.board is not None
        placed = self.placed(state)
        own, other = [], []
        for at in state.pending:
            winners = self.scorers(state, self.feature_named(state, placed, at))
            if not winners:
                return [at]
            (own if state.active in winners else other).append(at)
        return own or other

    def doubling_options(self, state: CastleState) -> list[tuple[str, str]]:
        """(wall tile kind, feature) pairs: a doubling tile the active seat may play now."""
        if state.phase is not Phase.SCORE:
            return []
        seat = state.active
        kinds = [k for k in self.usable_wall_tiles(state, seat) if self._kinds[k].effect is WallEffect.DOUBLE]
        if not kinds:
            return []
        placed = self.placed(state)
        out = []
        for at in self.scoring_choices(state):
            if at in state.doubled:
                continue
            feature = self.feature_named(state, placed, at)
            if seat not in self.scorers(state, feature):
                continue
            if any(f.owner == seat and f.kind == "prince" for f in feature.followers):
                continue  # a feature is doubled at most once; the prince already does it
            for kind in kinds:
                if self._kinds[kind].feature == feature.kind:
                    out.append((kind, at))
        return out

    def extra_turn_tiles(self, state: CastleState) -> list[str]:
        if state.phase is not Phase.END_TURN or state.remaining == 0:
            return []
        return [k for k in self.usable_wall_tiles(state, state.active) if self._kinds[k].effect is WallEffect.EXTRA_TURN]

    def usable_wall_tiles(self, state: CastleState, seat: int) -> list[str]:
        """Distinct kinds of wall tiles ``seat`` holds that were taken before this turn."""
        out: list[str] = []
        for held in state.seats[seat].wall_tiles:
            if held.taken_turn < state.turn and held.kind not in out:
                out.append(held.kind)
        return out

    def feature_named(self, state: CastleState, placed: Placed, at: str) -> Feature:
        """The feature ``at`` names on the placed tile (a name the engine itself wrote)."""
        feature = feature_at(state.board, placed.x, placed.y, at)  # type: ignore[arg-type]
        assert feature is not None
        return feature

    def _tile_set(self, falcon: bool):
        return self.dataset.tiles + (self.dataset.falcon_tiles if falcon else ())

    def wall_tile_info(self, kind: str) -> dict[str, Any]:
        k = self._kinds[kind]
        info: dict[str, Any] = {"tile": k.name, "effect": k.effect.value, "original": k.original, "polish": k.polish}
        if k.feature is not None:
            info["feature"] = k.feature.value
        if k.points is not None:
            info["points"] = k.points
        return info

    # --- commands --------------------------------------------------------------------------------

    @staticmethod
    def _need_phase(em: _Emit, phase: Phase, command: str) -> None:
        if em.state.phase is not phase:
            raise IllegalMove(f"{command} is not possible now: the game waits for {em.state.phase.value}")

    def _c_place_tile(self, em: _Emit, seat: int, args: dict[str, Any]) -> None:
        self._need_phase(em, Phase.PLACE_TILE, "place_tile")
        x = int_arg(args, "x", "place_tile")
        y = int_arg(args, "y", "place_tile")
        rotation = int_arg(args, "rotation", "place_tile")
        if rotation not in ROTATIONS:
            raise BadCommand(f"place_tile rotation must be one of {list(ROTATIONS)}, got {rotation!r}")
        state = em.state
        assert state.board is not None and state.tile is not None
        tile = self.dataset.tile(state.tile)
        board = state.board
        if not board.is_legal(tile, x, y, rotation):
            raise IllegalMove(f"tile {tile.id} rotated {rotation} cannot go at ({x}, {y}): {self._why_not(board, x, y)}")
        em("tile_placed", seat=seat, tile=tile.id, x=x, y=y, rotation=rotation)

    @staticmethod
    def _why_not(board: Board, x: int, y: int) -> str:
        if (x, y) in board.cells:
            return "the space is taken"
        if not board.rules.is_playable(x, y):
            return "it is not a space inside the castle wall"
        if (x, y) not in board.frontier:
            return "it touches no tile and no start space along a full edge"
        return "a path would be interrupted (paths must continue across every edge)"

    def _c_place_follower(self, em: _Emit, seat: int, args: dict[str, Any]) -> None:
        self._need_phase(em, Phase.PLACE_FOLLOWER, "place_follower")
        at = str_arg(args, "at", "place_follower")
        kind = str_arg(args, "kind", "place_follower", "normal")
        if kind not in FOLLOWER_KINDS:
            raise BadCommand(f"place_follower kind must be one of {', '.join(FOLLOWER_KINDS)}, got {kind!r}")
        if kind != "normal" and not em.state.options.falcon:
            raise BadCommand(f"place_follower kind {kind!r} exists only with the Falcon")
        state = em.state
        placed = self.placed(state)
        seg = find_segment(placed, at)
        if seg is None:
            names = sorted({segment_name(placed, i) for i in range(len(placed.tile.segments))})
            raise BadCommand(f"place_follower at {at!r} names no part of tile {placed.tile.id} (try {', '.join(names)})")
        feature = state.board.feature_of(placed.x, placed.y, seg)  # type: ignore[union-attr]
        role = args.get("role")
        if role is not None and role != ROLES[feature.kind]:
            raise BadCommand(f"a follower at {at!r} is a {ROLES[feature.kind]}, not a {role!r}")
        for spot_at, spot_kind, spot_role, spot_feature in self.follower_spots(state, seat):
            if spot_feature.id == feature.id and spot_kind == kind:
                em("follower_placed", seat=seat, x=placed.x, y=placed.y, at=segment_name(placed, seg), kind=kind, role=spot_role)
                self._continue(em)
                return
        raise IllegalMove(f"no {kind} follower may go at {at!r}: {self._why_no_follower(state, seat, feature, kind)}")

    def _why_no_follower(self, state: CastleState, seat: int, feature: Feature, kind: str) -> str:
        supply = state.seats[seat]
        if kind == "normal" and supply.followers == 0:
            return "no follower left in the supply"
        if kind == "prince" and not supply.prince:
            return "the prince is not in the supply"
        if kind == "falconer" and not supply.falconer:
            return "the falconer is not in the supply"
        if feature.followers:
            return f"that {feature.kind} already holds a follower"
        return f"the {kind} may not go on a {feature.kind} this tile completes (it would score at once)"

    def _c_pass(self, em: _Emit, seat: int, args: dict[str, Any]) -> None:
        self._need_phase(em, Phase.PLACE_FOLLOWER, "pass")
        em("follower_passed", seat=seat)
        self._continue(em)

    def _c_score(self, em: _Emit, seat: int, args: dict[str, Any]) -> None:
        self._need_phase(em, Phase.SCORE, "score")
        at = str_arg(args, "feature", "score")
        choices = self.scoring_choices(em.state)
        target = self._completed_named(em.state, at, "score")
        if target not in choices:
            raise IllegalMove(f"feature {at!r} cannot be scored now: the placing player's own features come first (next: {', '.join(choices)})")
        self._score_feature(em, target)
        self._continue(em)

    def _completed_named(self, state: CastleState, at: str, command: str) -> str:
        """The canonical name of the completed feature a client names with ``at``."""
        placed = self.placed(state)
        seg = find_segment(placed, at)
        if seg is not None:
            fid = state.board.feature_of(placed.x, placed.y, seg).id  # type: ignore[union-attr]
            for name in state.pending:
                if self.feature_named(state, placed, name).id == fid:
                    return name
        raise IllegalMove(f"{command}: {at!r} is not a feature completed this turn and waiting to be scored (waiting: {', '.join(state.pending) or 'none'})")

    def _c_use_wall_tile(self, em: _Emit, seat: int, args: dict[str, Any]) -> None:
        kind_name = str_arg(args, "tile", "use_wall_tile")
        kind = self._kinds.get(kind_name)
        if kind is None:
            raise BadCommand(f"use_wall_tile: no wall tile {kind_name!r} (tiles: {', '.join(self._kinds)})")
        state = em.state
        if kind_name not in [h.kind for h in state.seats[seat].wall_tiles]:
            raise IllegalMove(f"use_wall_tile: seat {seat} holds no {kind_name!r} wall tile")
        if kind_name not in self.usable_wall_tiles(state, seat):
            raise IllegalMove(f"use_wall_tile: a wall tile taken this turn can be used from the next turn on ({kind_name!r})")
        if kind.effect is WallEffect.DOUBLE:
            if state.phase is not Phase.SCORE:
                raise IllegalMove(f"use_wall_tile: {kind_name!r} doubles a {kind.feature} being scored on your turn; none is now")
            target_arg = str_arg(args, "target", "use_wall_tile")
            target = self._completed_named(state, target_arg, "use_wall_tile")
            if (kind_name, target) not in self.doubling_options(state):
                raise IllegalMove(
                    f"use_wall_tile: {kind_name!r} cannot double {target_arg!r} (it must be a {kind.feature} you score next, "
                    "not already doubled, without your prince)"
                )
            em("wall_tile_used", seat=seat, tile=kind_name, target=target)
            self._continue(em)
            return
        if kind.effect is WallEffect.EXTRA_TURN:
            if kind_name not in self.extra_turn_tiles(state):
                why = "no castle tile is left" if state.remaining == 0 else "it is used at the end of your turn"
                raise IllegalMove(f"use_wall_tile: {kind_name!r} cannot be used now: {why}")
            em("wall_tile_used", seat=seat, tile=kind_name)
            self._continue(em)
            return
        raise IllegalMove(f"use_wall_tile: {kind_name!r} ({kind.effect.value}) is applied automatically at the end of the game")

    def _c_end_turn(self, em: _Emit, seat: int, args: dict[str, Any]) -> None:
        self._need_phase(em, Phase.END_TURN, "end_turn")
        self._end_turn(em)

    # --- automatic steps ---------------------------------------------------------------------------

    def _continue(self, em: _Emit) -> None:
        """Carry on while nothing is left to choose: score, end the turn, draw."""
        while True:
            state = em.state
            if state.phase is Phase.SCORE:
                choices = self.scoring_choices(state)
                if len(choices) == 1 and not self.doubling_options(state):
                    self._score_feature(em, choices[0])
                    continue
                return
            if state.phase is Phase.END_TURN:
                if self.extra_turn_tiles(state):
                    return
                self._end_turn(em)
            return

    def _score_feature(self, em: _Emit, at: str) -> None:
        state = em.state
        placed = self.placed(state)
        feature = self.feature_named(state, placed, at)
        winners = self.scorers(state, feature)
        base = feature_points(feature.kind, tiles=feature.tile_count, fountains=feature.count("fountain"))
        points, doubled, aeries = [0, 0], [None, None], [0, 0]
        for seat in winners:
            factor = 1
            if any(f.owner == seat and f.kind == "prince" for f in feature.followers):
                doubled[seat], factor = "prince", 2
            elif seat == state.active and at in state.doubled:
                doubled[seat], factor = "wall_tile", 2
            points[seat] = base * factor
            if state.options.falcon:
                aeries[seat] = feature.count("aeries") + sum(
                    1 for f in feature.followers if f.owner == seat and f.kind == "falconer"
                )
        em(
            "feature_scored",
            seat=state.active,
            feature=at,
            x=placed.x,
            y=placed.y,
            kind=feature.kind,
            tiles=[list(c) for c in sorted(feature.cells)],
            base=base,
            winners=list(winners),
            points=points,
            doubled=doubled,
            aeries=aeries,
        )
        for seat in winners:
            self._move(em, seat, points[seat])
            if aeries[seat]:
                self._take_aeries(em, seat, aeries[seat])
            keep = em.state.seats[seat].keep
            if feature.kind == "house" and (keep is None or feature.tile_count > keep.size):
                em("keep_moved", seat=seat, size=feature.tile_count, tiles=[list(c) for c in sorted(feature.cells)])

    def _move(self, em: _Emit, seat: int, points: int, *, final: bool = False) -> None:
        if points <= 0:
            return
        state = em.state
        wall = self.wall(state)
        marker = state.seats[seat].marker
        step = wall.advance(marker, points, halt_at_gates=state.options.halt_at_gates and not final)
        em(
            "marker_moved",
            seat=seat,
            points=points,
            **{"from": marker.score},
            to=step.end.score,
            gate=step.end.gate,
            lost=step.lost,
        )
        if final or step.tower is None or not em.state.towers[step.tower]:
            return
        kind = draw(em.rng, em.state.wall_pool)
        info = self.wall_tile_info(kind)
        em("wall_tile_taken", seat=seat, tower=step.tower, spaces=list(self.dataset.track.towers[step.tower].spaces), **info)

    def _take_aeries(self, em: _Emit, seat: int, count: int) -> None:
        state = em.state
        if count > state.aerie_supply:
            # Only the difference matters: both hand back the same number (Falcon rules).
            least = min(s.aeries for s in state.seats)
            each = min(least, -(-(count - state.aerie_supply) // 2))
            if each:
                em("aeries_returned", each=each)
        count = min(count, em.state.aerie_supply)
        if count:
            em("aeries_taken", seat=seat, count=count)

    def _end_turn(self, em: _Emit) -> None:
        state = em.state
        placed = self.placed(state)
        back = []
        for at in state.completed:
            feature = self.feature_named(state, placed, at)
            back.extend(follower_record(state.board, f) for f in feature.followers)  # type: ignore[arg-type]
        if back:
            em("followers_returned", followers=back)
        extra = em.state.extra_turns > 0 and em.state.remaining > 0
        following = state.active if extra else 1 - state.active
        em("turn_ended", seat=state.active, next=following, extra_turn=extra)
        self._draw_next(em, following)

    def _draw_next(self, em: _Emit, seat: int) -> None:
        state = em.state
        order = state.options.tile_order
        rest = None if order is None else order[len(order) - state.remaining :]
        drawn = draw_sequence(em.rng, state.stack, rest)
        set_aside, tile_id = draw_until_placeable(state.board, self.dataset.tile, drawn)  # type: ignore[arg-type]
        for unplaceable in set_aside:
            em("tile_set_aside", tile=unplaceable)
        if tile_id is not None:
            em("tile_drawn", seat=seat, tile=tile_id)
        else:
            self._finish(em)

    # --- final scoring -----------------------------------------------------------------------------

    def _held(self, state: CastleState, seat: int, effect: WallEffect) -> list[WallTileKind]:
        return [self._kinds[h.kind] for h in state.seats[seat].wall_tiles if self._kinds[h.kind].effect is effect]

    def _finish(self, em: _Emit) -> None:
        state = em.state
        board = state.board
        assert board is not None
        rules = self.board_rules(state.options.falcon)
        area = largest_empty_area(rules.interior, board.cells)
        features = sorted(board.all_features(), key=lambda f: min(f.segments))

        # 1. The keep: the larger keep (wall tiles add to it) scores the largest empty area.
        values: list[int | None] = []
        for seat in (0, 1):
            keep = state.seats[seat].keep
            bonus = sum(k.points or 0 for k in self._held(state, seat, WallEffect.KEEP_VALUE))
            values.append(None if keep is None else keep.size + bonus)
        keep_winner = _strictly_larger(values)
        if keep_winner is not None:
            em("final_scored", item="keep", seat=keep_winner, points=area, values=values, empty_area=area)
            self._move(em, keep_winner, area, final=True)

        # 2. Courts: 3 per market for the merchant majority (ties score nothing); a market wall
        #    tile lifts one court's markets, the prince doubles its owner's court.
        courts = []
        for f in features:
            if f.kind != "court" or not f.followers:
                continue
            winners = controllers(f.followers, ties_score=False)
            if winners:
                courts.append((f, winners[0]))
        for seat in (0, 1):
            own = [(f, self._prince_factor(f, seat)) for f, w in courts if w == seat]
            lifts = sorted((k.points or MARKET_POINTS for k in self._held(state, seat, WallEffect.MARKET_VALUE)), reverse=True)
            own.sort(key=lambda fp: fp[0].count("markets") * fp[1], reverse=True)
            for i, (f, factor) in enumerate(own):
                per_market = max(MARKET_POINTS, lifts[i]) if i < len(lifts) else MARKET_POINTS
                points = f.count("markets") * per_market * factor
                em(
                    "final_scored", item="court", seat=seat, points=points, markets=f.count("markets"),
                    per_market=per_market, doubled="prince" if factor == 2 else None,
                    tiles=[list(c) for c in sorted(f.cells)],
                )
                self._move(em, seat, points, final=True)

        # 3. Wall tiles that score one incomplete feature of one's own (best one each).
        for seat in (0, 1):
            used: set[int] = set()
            for kind in self._held(state, seat, WallEffect.INCOMPLETE):
                best = None
                for f in features:
                    if f.kind != kind.feature or f.complete or f.id in used:
                        continue
                    if seat not in controllers(f.followers, ties_score=state.options.ties_score):
                        continue
                    points = feature_points(f.kind, tiles=f.tile_count, fountains=f.count("fountain")) * self._prince_factor(f, seat)
                    if best is None or points > best[0]:
                        best = (points, f)
                if best is None:
                    continue
                points, f = best
                used.add(f.id)
                em("final_scored", item="incomplete", seat=seat, points=points, tile=kind.name, kind=f.kind,
                   tiles=[list(c) for c in sorted(f.cells)])
                self._move(em, seat, points, final=True)

        # 4. Flat points.
        for seat in (0, 1):
            for kind in self._held(state, seat, WallEffect.FLAT_POINTS):
                em("final_scored", item="flat_points", seat=seat, points=kind.points, tile=kind.name)
                self._move(em, seat, kind.points or 0, final=True)

        # 5. Falcon: more aerie tokens score the largest empty area; a tie scores nothing.
        if state.options.falcon:
            counts = [em.state.seats[s].aeries for s in (0, 1)]
            aerie_winner = _strictly_larger(counts)
            if aerie_winner is not None:
                em("final_scored", item="aeries", seat=aerie_winner, points=area, values=counts, empty_area=area)
                self._move(em, aerie_winner, area, final=True)

        scores = [em.state.seats[s].marker.score for s in (0, 1)]
        best = max(scores)
        em("game_ended", scores=scores, winners=[s for s in (0, 1) if scores[s] == best])

    @staticmethod
    def _prince_factor(feature: Feature, seat: int) -> int:
        return 2 if any(f.owner == seat and f.kind == "prince" for f in feature.followers) else 1

    # --- evolve ------------------------------------------------------------------------------------

    def evolve(self, state: CastleState, event: Event) -> CastleState:
        """Apply one event; never mutates ``state``. Unknown event types leave it unchanged."""
        handler = self._evolvers.get(event.type)
        return state if handler is None else handler(state, event.payload)

    def _e_game_started(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        o = p["options"]
        order = p.get("tile_order")
        opts = Options(o["falcon"], o["ties"], o["halt_at_gates"], None if order is None else tuple(order))
        board = self._start["falcon" if opts.falcon else "base"]
        seat = SeatState(followers=self.dataset.followers_in_supply, prince=opts.falcon, falconer=opts.falcon)
        if order:
            stack = tuple(sorted((t, order.count(t)) for t in set(order)))
        else:
            stack = tuple(sorted((t.id, self.dataset.counts[t.id]) for t in self._tile_set(opts.falcon)))
        return state.but(
            phase=Phase.PLACE_TILE,
            options=opts,
            dataset=p["dataset"],
            board=board,
            seats=(seat, seat),
            active=0,
            turn=1,
            stack=stack,
            remaining=sum(n for _, n in stack),
            towers=tuple(t.token for t in self.dataset.track.towers),
            wall_pool=tuple((k.name, self.dataset.wall_tile_copies) for k in self.dataset.wall_tiles),
            aerie_supply=self.dataset.aerie_tokens if opts.falcon else 0,
        )

    def _e_tile_drawn(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return state.but(
            tile=p["tile"], stack=take(state.stack, p["tile"]), remaining=state.remaining - 1,
            active=p["seat"], phase=Phase.PLACE_TILE,
        )

    def _e_tile_set_aside(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return state.but(
            stack=take(state.stack, p["tile"]), remaining=state.remaining - 1, set_aside=state.set_aside + (p["tile"],)
        )

    def _e_tile_placed(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        board = state.board.place(self.dataset.tile(p["tile"]), p["x"], p["y"], p["rotation"], check=False)  # type: ignore[union-attr]
        return state.but(board=board, placed=(p["x"], p["y"]), tile=None, phase=Phase.PLACE_FOLLOWER)

    def _e_follower_placed(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        seg = find_segment(state.board.cells[(p["x"], p["y"])], p["at"])  # type: ignore[union-attr]
        board = state.board.with_follower(Follower(p["seat"], p["kind"], p["x"], p["y"], seg))  # type: ignore[union-attr, arg-type]
        supply = state.seats[p["seat"]]
        if p["kind"] == "prince":
            state = with_seat(state, p["seat"], prince=False)
        elif p["kind"] == "falconer":
            state = with_seat(state, p["seat"], falconer=False)
        else:
            state = with_seat(state, p["seat"], followers=supply.followers - 1)
        return self._enter_scoring(state.but(board=board))

    def _e_follower_passed(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return self._enter_scoring(state)

    def _enter_scoring(self, state: CastleState) -> CastleState:
        board = state.board
        placed = self.placed(state)
        completed: list[str] = []
        seen: set[int] = set()
        for seg in range(len(placed.tile.segments)):
            feature = board.feature_of(placed.x, placed.y, seg)  # type: ignore[union-attr]
            if feature.id in seen:
                continue
            seen.add(feature.id)
            if feature.complete and feature.kind in SCORED_KINDS:
                completed.append(segment_name(placed, seg))
        phase = Phase.SCORE if completed else Phase.END_TURN
        return state.but(completed=tuple(completed), scored=(), doubled=(), phase=phase)

    def _e_feature_scored(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        state = state.but(scored=state.scored + (p["feature"],))
        if not state.pending:
            state = state.but(phase=Phase.END_TURN)
        return state

    def _e_marker_moved(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return with_seat(state, p["seat"], marker=Marker(p["to"], p["gate"]))

    def _e_wall_tile_taken(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        towers = list(state.towers)
        towers[p["tower"]] = False
        held = state.seats[p["seat"]].wall_tiles + (HeldWallTile(p["tile"], state.turn),)
        state = with_seat(state, p["seat"], wall_tiles=held)
        return state.but(towers=tuple(towers), wall_pool=take(state.wall_pool, p["tile"]))

    def _e_wall_tile_used(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        held = list(state.seats[p["seat"]].wall_tiles)
        for i, h in enumerate(held):
            if h.kind == p["tile"] and h.taken_turn < state.turn:
                del held[i]
                break
        state = with_seat(state, p["seat"], wall_tiles=tuple(held))
        if self._kinds[p["tile"]].effect is WallEffect.EXTRA_TURN:
            return state.but(extra_turns=state.extra_turns + 1)
        return state.but(doubled=state.doubled + (p["target"],))

    def _e_aeries_returned(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        for seat in (0, 1):
            state = with_seat(state, seat, aeries=state.seats[seat].aeries - p["each"])
        return state.but(aerie_supply=state.aerie_supply + 2 * p["each"])

    def _e_aeries_taken(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        state = with_seat(state, p["seat"], aeries=state.seats[p["seat"]].aeries + p["count"])
        return state.but(aerie_supply=state.aerie_supply - p["count"])

    def _e_keep_moved(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return with_seat(state, p["seat"], keep=Keep(p["size"], tuple(tuple(c) for c in p["tiles"])))  # type: ignore[misc]

    def _e_followers_returned(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        board = state.board
        fids = set()
        for owner, x, y, at, kind in p["followers"]:
            fids.add(feature_at(board, x, y, at).id)  # type: ignore[arg-type, union-attr]
            if kind == "prince":
                state = with_seat(state, owner, prince=True)
            elif kind == "falconer":
                state = with_seat(state, owner, falconer=True)
            else:
                state = with_seat(state, owner, followers=state.seats[owner].followers + 1)
        return state.but(board=board.without_followers(fids))  # type: ignore[union-attr]

    def _e_turn_ended(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return state.but(
            active=p["next"],
            turn=state.turn + 1,
            phase=Phase.PLACE_TILE,
            tile=None,
            placed=None,
            completed=(),
            scored=(),
            doubled=(),
            extra_turns=state.extra_turns - 1 if p["extra_turn"] else 0,
        )

    def _e_final_scored(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return state.but(final=state.final + (dict(p),))

    def _e_game_ended(self, state: CastleState, p: dict[str, Any]) -> CastleState:
        return state.but(phase=Phase.OVER, tile=None, winners=tuple(p["winners"]))


def _strictly_larger(values: list[int | None]) -> int | None:
    """The seat with the strictly larger value; ``None`` on a tie or when neither has one."""
    a, b = values
    if a is None and b is None:
        return None
    if b is None or (a is not None and a > b):
        return 0
    if a is None or b > a:
        return 1
    return None
