"""``donjon replay``: re-fold a game from the store and check everything that can be checked.

Checks, each reported as a problem (and a non-zero exit) when it fails:

1. the hash chain of the stream (``store.verify_chain``);
2. every event decodes, its sealed part (if any) opens with the seed's hiding key and its stored
   clear part is exactly what a spectator may see (:func:`service.fairness.sealing.open_log`), and every
   event folds: service events by the projection, engine events by ``engine.evolve``, with no
   gap in versions;
3. when the seed is known (revealed by ``game.finished`` with the secret options, or, for a game
   still running, read from the meta by an operator with store access): the commitment in
   ``game.created`` matches them (:func:`service.fairness.seeds.commitment`); every seat's contribution
   to the game seed is its ``client_seed`` or the value the server seed fixes; and every batch
   re-runs to the same events: the functions of :mod:`service.play.decisions` that built it are
   called again on the state before it (``seat_batch``: ``game.seat_taken`` with its seed
   contribution plus, for the last seat, ``engine.setup`` with ``decision_rng`` on the version
   before; ``command_batch``: ``engine.decide`` with the same rng rule, plus ``game.finished``
   when the game ended there; ``creation_batch``, for a game with bots (its command is
   ``create_game``): a ``game.seat_taken`` per bot seat, plus the setup when bots fill every seat);
4. the service's own batches the same way: ``resign`` and ``undo`` (``command_batch``), a
   timeout (``clock_timeout``: ``timeout_batch`` with the recorded bot move, chosen with
   ``bot_rng(before, seed, seat, version=version_before + 1)``), a ``rematch`` link;
5. every move of a bot seat is the one its bot chooses with ``bot_rng(before, seed, seat)``
   (:mod:`service.bots`), under the command id ``bot:<seat>:<version_before>``.

:func:`check_log` runs checks 2-5 on decoded envelopes, which is what ``donjon verify`` runs on an
export (:mod:`service.fairness.verify`).

A batch begins at an envelope that carries its ``command`` (the store keeps it on the first
event of each append); ``game.created`` begins a batch of its own (alone, or with the bot seats).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgpack

from events.errors import ChainBroken, StoreError
from events.protocol import Store
from games.base import Engine, Event, RuleError
from projections.game import CREATED, FINISHED, SEAT_TAKEN, GameProjection, ProjectionError
from service.bots import bot_command_id, bot_rng, bots_for
from service.fairness import seeds
from service.fairness.sealing import open_log
from service.fairness.seed_vault import SealedSeedError, SeedVault, opened_meta
from service.play import decisions

__all__ = ["ReplayReport", "check_log", "replay_game"]


@dataclass(slots=True)
class ReplayReport:
    """What replay found. ``ok`` when ``problems`` is empty."""

    game_id: str
    game: str = ""
    version: int = 0
    status: str = ""
    summary: dict[str, Any] | None = None
    batches_checked: int = 0
    seed_source: str = "none"
    """``revealed`` (from game.finished), ``meta`` (operator read of a running game) or ``none``."""
    fold_seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    found: bool = True
    """``False`` when the store holds no game of that id: nothing was checked, nothing mismatched."""

    @property
    def ok(self) -> bool:
        return self.found and not self.problems

    @property
    def outcome(self) -> str:
        """``ok``, ``mismatch`` or ``not_found``: what ``donjon replay`` tells apart by its exit code."""
        if not self.found:
            return "not_found"
        return "ok" if self.ok else "mismatch"

    @property
    def message(self) -> str | None:
        """Why nothing was checked (``not_found``); ``None`` otherwise."""
        return None if self.found else f"no game {self.game_id!r} in the store"

    @property
    def events_per_second(self) -> float:
        return self.version / self.fold_seconds if self.fold_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "game": self.game,
            "version": self.version,
            "status": self.status,
            "summary": self.summary,
            "batches_checked": self.batches_checked,
            "seed_source": self.seed_source,
            "fold_events_per_second": round(self.events_per_second),
            "found": self.found,
            "outcome": self.outcome,
            "message": self.message,
            "ok": self.ok,
            "problems": self.problems,
        }


def _canonical(events: list[tuple[str, Any]]) -> bytes:
    """Byte-exact comparison form: the msgpack round trip turns tuples into lists, as the store does."""
    packed: bytes = msgpack.packb([[kind, payload] for kind, payload in events], use_bin_type=True)
    return packed


def _batches(envelopes: list[Any]) -> list[list[Any]]:
    batches: list[list[Any]] = []
    for envelope in envelopes:
        if not batches or envelope.command is not None or envelope.type == CREATED:
            batches.append([envelope])
        else:
            batches[-1].append(envelope)
    return batches


async def replay_game(
    store: Store, game_id: str, engines: Mapping[str, Engine[Any]], vault: SeedVault | None = None
) -> ReplayReport:
    report = ReplayReport(game_id)
    meta = await store.get_meta(game_id)
    if meta is None:
        report.found = False
        return report
    report.game = str(meta.get("game", ""))
    engine = engines.get(report.game)
    if engine is None:
        report.problems.append(f"game {game_id!r} is a {report.game!r}, which no registered engine plays")
        return report
    try:
        await store.verify_chain(game_id)
    except ChainBroken as exc:
        report.problems.append(str(exc))
    try:
        envelopes = await store.read(game_id)
    except StoreError as exc:
        report.problems.append(f"events do not decode: {exc}")
        return report
    check_log(report, engine, envelopes, meta, vault)
    return report


def _fold_uncollected(game_id: str, engine: Engine[Any], envelopes: list[Any]) -> GameProjection:
    """The fold of ``envelopes`` with the cyclic garbage collector paused: a fold allocates
    many small immutable records and makes no reference cycles, so the collector's passes
    over a large heap (the bench's, a verify of many games) are pure cost. Anything cyclic
    made meanwhile (a refusal's traceback) is collected after, once the collector runs again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return GameProjection.fold(game_id, engine, envelopes)
    finally:
        if was_enabled:
            gc.enable()


def check_log(
    report: ReplayReport,
    engine: Engine[Any],
    envelopes: list[Any],
    meta: dict[str, Any],
    vault: SeedVault | None = None,
) -> None:
    """Every check after the chain, on a game's decoded ``envelopes`` (see the module docstring),
    each problem added to ``report``: the sealed parts (opened with the seed's hiding key, and
    each stored clear part exactly what a spectator may see: :func:`service.fairness.sealing.open_log`),
    the fold, the seed commitment, every seat's contribution, every batch and bot move re-run.
    ``meta`` is the store's (``{}`` for an export: the seed is then only the one
    ``game.finished`` reveals)."""
    game_id = report.game_id
    finished = next((envelope for envelope in reversed(envelopes) if envelope.type == FINISHED), None)
    revealed = None if finished is None else finished.payload.get("seed")
    kept = _kept_meta(report, meta, vault, revealed is None)
    seed = _seed(report, revealed, kept)
    if seed is not None and not _check_commitment(report, engine, seed, envelopes, finished, kept):
        return
    opened, problems = open_log(engine, game_id, seed, envelopes)
    report.problems.extend(problems)
    if opened is None:
        return
    started = time.perf_counter()
    try:
        final: GameProjection | None = _fold_uncollected(game_id, engine, opened)
    except ProjectionError as exc:
        report.problems.append(f"fold failed: {exc}")
        final = None
    report.fold_seconds = time.perf_counter() - started
    if final is None:
        return
    report.version, report.status, report.summary = final.version, final.status.value, final.summary
    if final.status.value != "open" and final.engine_events:
        report.summary = final.summary or engine.summary(final.state)
    if seed is None:
        return
    if not _check_contributions(report, seed, opened):
        return
    _rerun(report, engine, game_id, seed, _full_options(envelopes, finished, kept), opened)


def _check_commitment(
    report: ReplayReport, engine: Engine[Any], seed: bytes, envelopes: list[Any], finished: Any, meta: dict[str, Any]
) -> bool:
    """``game.created``'s seed commitment is that of ``seed`` and the secret options (checked
    before any sealed part is opened with the seed: a wrong seed says so first); ``False`` and a
    problem when it is not. A log that does not open with ``game.created`` is the fold's to refuse."""
    created = envelopes[0] if envelopes and envelopes[0].type == CREATED else None
    if created is None:
        return True
    _public, secret = seeds.split_options(engine, _full_options(envelopes, finished, meta))
    if seeds.commitment(seed, secret) != created.payload.get("seed_commitment"):
        report.problems.append("the seed (and secret options) do not match game.created's seed_commitment")
        return False
    return True


def _check_contributions(report: ReplayReport, seed: bytes, envelopes: list[Any]) -> bool:
    """Each seat's contribution to the game seed is the ``client_seed`` its seat request sent, or
    the value the server seed fixes for a seat that sent none; ``False`` at the first that is not."""
    for batch in _batches(envelopes):
        sent = (batch[0].command or {}).get("args", {}).get("client_seed") if batch[0].command else None
        for envelope in batch:
            if envelope.type != SEAT_TAKEN or "seed_contribution" not in envelope.payload:
                continue
            seat, value = envelope.payload.get("seat"), envelope.payload["seed_contribution"]
            made_by = envelope.payload.get("seed_contribution_from")
            expected = seeds.server_contribution(seed, seat) if made_by == "server" else sent
            if made_by not in ("server", "seat") or value != expected:
                source = "the one the server seed fixes" if made_by == "server" else "the client_seed its seat sent"
                report.problems.append(
                    f"version {envelope.version}: seat {seat}'s seed contribution {value!r} is not {source}"
                )
                return False
    return True


def _full_options(envelopes: list[Any], finished: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """The options setup ran with: public ones from game.created plus the secret ones
    ``game.finished`` reveals; for a running game, the service's meta (an operator with store
    access), opened."""
    public = dict(envelopes[0].payload.get("options") or {}) if envelopes else {}
    if finished is not None and finished.payload.get("seed") is not None:
        return {**public, **(finished.payload.get("secret_options") or {})}
    options = meta.get("options")
    return dict(options) if isinstance(options, dict) else public


def _kept_meta(report: ReplayReport, meta: dict[str, Any], vault: SeedVault | None, needed: bool) -> dict[str, Any]:
    """The store's meta with its sealed secrets open; ``{}`` when the vault cannot open them (a
    problem when they are ``needed``: a running game reveals nothing, a finished one is checked
    with what it reveals)."""
    try:
        return opened_meta(report.game_id, meta, vault)
    except SealedSeedError as exc:
        if needed:
            report.problems.append(str(exc))
        return {}


def _seed(report: ReplayReport, revealed: Any, meta: dict[str, Any]) -> bytes | None:
    """The server seed: the one ``game.finished`` reveals (checked against the one the service
    kept, if any), else, for a running game, the one the opened ``meta`` keeps."""
    clear = meta.get("seed")
    kept = bytes.fromhex(clear) if isinstance(clear, str) else None
    if revealed is not None:
        report.seed_source = "revealed"
        try:
            seed = bytes.fromhex(revealed)
        except (TypeError, ValueError):
            report.problems.append(f"game.finished reveals a seed that is not hex: {revealed!r}")
            return None
        if kept not in (None, seed):
            report.problems.append("the revealed seed differs from the one the service kept")
        return seed
    if kept is not None:
        report.seed_source = "meta"
    return kept


def _rerun(
    report: ReplayReport, engine: Engine[Any], game_id: str, seed: bytes, options: dict[str, Any], envelopes: list[Any]
) -> None:
    projection = GameProjection.empty(game_id, engine)
    bots = bots_for(engine)
    for batch in _batches(envelopes):
        first = batch[0]
        before = projection
        projection = projection.apply_all(batch)
        if first.type == CREATED and first.command is None:
            if len(batch) > 1:
                report.problems.append(f"versions 2-{batch[-1].version}: events after game.created without a command")
            continue
        if before.bots and first.actor is not None and before.bots[first.actor] is not None:
            _check_bot_move(report, bots, game_id, seed, before, first)
        try:
            expected = _expected_events(engine, game_id, seed, options, before, first)
        except RuleError as exc:
            report.problems.append(f"version {first.version}: decide refuses the recorded command: {exc.message}")
            continue
        except decisions.EngineFault as exc:
            report.problems.append(f"version {first.version}: re-running the recorded command: {exc}")
            continue
        except Exception as exc:  # an engine failing on a log that is not its own is a finding, not a crash
            report.problems.append(f"version {first.version}: re-running the recorded command fails: {exc!r}")
            continue
        if expected is None:
            report.problems.append(f"version {first.version}: a batch without a recorded command")
            continue
        recorded = [(envelope.type, envelope.payload) for envelope in batch]
        if _canonical(expected) != _canonical(recorded):
            report.problems.append(
                f"versions {first.version}-{batch[-1].version}: re-running the batch gives other events "
                f"({[kind for kind, _ in expected]} vs {[kind for kind, _ in recorded]})"
            )
        report.batches_checked += 1


def _expected_events(
    engine: Engine[Any], game_id: str, seed: bytes, options: dict[str, Any], before: GameProjection, first: Any
) -> list[tuple[str, Any]] | None:
    """What the service decides for the batch that begins at ``first`` (:mod:`service.play.decisions`),
    or ``None`` when the batch records no command that says which decision it was."""
    command = first.command
    if command is None:
        return None
    if first.type == CREATED:
        bots = decisions.creation_bots(command)
        if bots is None:
            return None
        created = Event(CREATED, first.payload)
        events = decisions.creation_batch(engine, created, bots, seed=seed, game_id=game_id, options=options)
    elif command.get("type") == decisions.TAKE_SEAT and first.type == SEAT_TAKEN:
        name, client_seed = command["args"]["name"], command["args"].get("client_seed")
        events = decisions.seat_batch(
            before, first.payload.get("seat"), name, seed=seed, options=options, client_seed=client_seed
        )
    elif command.get("type") == decisions.REMATCH_COMMAND and first.actor is None:
        events = decisions.rematch_batch(command)
    elif command.get("type") == decisions.CLOCK_TIMEOUT and first.actor is None:
        args = command.get("args") or {}
        seat = args.get("seat")
        if not isinstance(seat, int) or decisions.expired_seat(before, first.ts) != seat:
            raise decisions.EngineFault(f"a timeout of seat {seat!r} whose time had not run out at {first.ts}")
        move = args.get("move")
        takeover = _takeover(engine)

        def bot_choice() -> Any:
            assert takeover is not None
            rng = bot_rng(before, seed, seat, version=before.version + 1)
            return bots_for(engine)[takeover].choose(before.state, seat, rng)

        chosen = decisions.timeout_move(before, seat, None if takeover is None else bot_choice)
        if _canonical([("", chosen)]) != _canonical([("", move)]):
            raise decisions.EngineFault(f"the timeout's move {move!r} is not the one its rules choose, {chosen!r}")
        events = decisions.timeout_batch(before, seat, seed=seed, options=options, move=move, takeover=takeover)
    else:
        events = decisions.command_batch(
            before, first.actor, command, seed=seed, options=options, takeover=_takeover(engine)
        )
    return [(event.type, event.payload) for event in events]


def _takeover(engine: Engine[Any]) -> str | None:
    """The bot that takes a seat that leaves (as the service picks it)."""
    return decisions.takeover_bot(list(bots_for(engine)))


def _check_bot_move(
    report: ReplayReport, bots: Mapping[str, Any], game_id: str, seed: bytes, before: GameProjection, first: Any
) -> None:
    """The recorded move of a bot seat is the one its bot chooses with its rng, under its id."""
    seat, name = first.actor, before.bots[first.actor]
    if first.command_id != bot_command_id(seat, before.version):
        report.problems.append(
            f"version {first.version}: bot seat {seat} moved under command id {first.command_id!r}, "
            f"not {bot_command_id(seat, before.version)!r}"
        )
    bot = bots.get(name)
    if bot is None:
        report.problems.append(f"version {first.version}: seat {seat} is bot {name!r}, which this build lacks")
        return
    try:
        chosen = bot.choose(before.state, seat, bot_rng(before, seed, seat))
    except Exception as exc:  # a bot that cannot choose here is a finding, not a crash of replay
        report.problems.append(f"version {first.version}: bot {name!r} of seat {seat} fails to choose: {exc!r}")
        return
    if _canonical([("", chosen)]) != _canonical([("", first.command)]):
        report.problems.append(
            f"version {first.version}: bot {name!r} of seat {seat} chooses {chosen!r}, the log has {first.command!r}"
        )
