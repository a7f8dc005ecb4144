"""``donjon verify FILE``: check a signed game export with no store and no network.

The checks, in this order; the first that fails is the one reported first (``docs/fairness.md``):

0. the file is JSON with no key twice in one object (:func:`parse_export`: a parser that keeps
   the last of two values would check a file another parser reads otherwise);
1. **format**: a ``donjon.export/1`` file whose ``events`` are a list, every ``body`` strict base64
   (:func:`strict_base64`: the standard alphabet, ``=`` padding, nothing else, canonical);
2. **chain**: every event's ``hash`` is ``H(prev_hash || body)`` of its stored body with the
   game's algorithm (named by ``game.created``), linked from the genesis in order, every body
   names this game and its version, and ``chain.version`` / ``chain.head`` are the last event's;
3. **revealed values**: the file's ``seed`` and ``secret_options`` are those of its
   ``game.finished`` body, its ``id`` and ``game`` those of ``game.created``;
4. **everything ``donjon replay`` re-runs** (:func:`service.fairness.replay.check_log`): the seed
   commitment, the sealed parts (opened with the revealed seed's hiding key, each stored clear
   part exactly what a spectator may see: :mod:`service.fairness.sealing`), the fold, every seat's
   contribution to the game seed, every decision with every draw (``donjon-draw-2``;
   ``donjon-draw-1`` or the legacy scheme of older games) and every bot move, the final summary (it is in
   ``game.finished``, which is re-decided);
5. **signature**: Ed25519 over the canonical JSON of the rest (:mod:`service.fairness.signing`), by the key
   ``--key`` names when given;
6. **ledger**, with ``--ledger``: the game is in the public ledger at the place its export names
   (:mod:`service.fairness.ledger_check`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from events.chain import chain_of_body, genesis, verify_bodies
from events.codec import decode_body
from events.errors import ChainBroken
from games.base import Engine
from projections.game import CREATED, FINISHED
from service.fairness.export import EXPORT_FORMAT, chain_description
from service.fairness.ledger_check import ledger_problem
from service.fairness.replay import ReplayReport, check_log
from service.fairness.signing import check_signature

__all__ = ["DuplicateKey", "VerifyReport", "parse_export", "strict_base64", "verify_export"]


@dataclass(slots=True)
class VerifyReport:
    """What ``donjon verify`` found: ``ok`` when ``problems`` is empty; the first is the first mismatch."""

    game_id: str = ""
    game: str = ""
    version: int = 0
    summary: dict[str, Any] | None = None
    batches_checked: int = 0
    key_id: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "game": self.game, "version": self.version, "summary": self.summary,
                "batches_checked": self.batches_checked, "key_id": self.key_id, "ok": self.ok,
                "problems": self.problems}


class _Refused(Exception):
    """A check failed; its message is the problem."""


class DuplicateKey(ValueError):
    """An object of the file names one key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for name, value in pairs:
        if name in seen:
            raise DuplicateKey(f"the key {name!r} appears twice in one object")
        seen[name] = value
    return seen


def parse_export(text: str) -> Any:
    """The JSON of an export file; :class:`DuplicateKey` when an object repeats a key, and
    :class:`ValueError` for anything that is not JSON."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def strict_base64(text: Any) -> bytes:
    """The bytes of ``text`` in RFC 4648 base64 (``A-Z a-z 0-9 + /``, padded with ``=`` to a
    multiple of 4, no line breaks or spaces) written the one way those bytes encode (unused bits
    zero); :class:`ValueError` for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"not a base64 string: {type(text).__name__}")
    decoded = base64.b64decode(text, validate=True)
    if base64.b64encode(decoded).decode("ascii") != text:
        raise ValueError("not the canonical base64 of its bytes")
    return decoded


def verify_export(
    export: Any, engines: Mapping[str, Engine[Any]], *, key: str | None = None, ledger: Any = None
) -> VerifyReport:
    """Every check of the module docstring on a parsed export, ``key`` the node's public key (hex);
    with ``ledger`` (a ``GET /ledger`` answer), the game's place in it too
    (:mod:`service.fairness.ledger_check`)."""
    report = VerifyReport()
    try:
        bodies = _format(report, export)
        envelopes = _chain(report, export, bodies)
        engine = _revealed(report, export, envelopes, engines)
        _rerun(report, engine, envelopes)
        _signature(report, export, key)
        created = {**envelopes[0].payload, "ts": envelopes[0].ts}
        if ledger is not None and (problem := ledger_problem(export, created, ledger, key)):
            raise _Refused(problem)
    except _Refused as refused:
        report.problems.insert(0, str(refused))
    return report


def _format(report: VerifyReport, export: Any) -> list[bytes]:
    if not isinstance(export, dict) or export.get("format") != EXPORT_FORMAT:
        raise _Refused(f"format: not a {EXPORT_FORMAT} file")
    report.game_id, report.game = str(export.get("id", "")), str(export.get("game", ""))
    events = export.get("events")
    if not isinstance(events, list) or not events or not all(isinstance(e, dict) for e in events):
        raise _Refused("format: 'events' is not a non-empty list of events")
    try:
        return [strict_base64(event.get("body")) for event in events]
    except (binascii.Error, ValueError):
        raise _Refused("format: an event's body is not strict base64") from None


def _chain(report: VerifyReport, export: dict[str, Any], bodies: list[bytes]) -> list[Any]:
    algorithm = chain_of_body(bodies[0])
    entries = [(e.get("version"), body, e.get("prev_hash"), e.get("hash")) for e, body in zip(export["events"], bodies,
                                                                                           strict=True)]
    try:
        head = verify_bodies(report.game_id, entries, algorithm=algorithm)
    except ChainBroken as exc:
        raise _Refused(f"chain: {exc}") from None
    chain = export.get("chain") or {}
    expected = {"algorithm": chain_description(algorithm), "genesis": genesis(algorithm), "version": len(bodies),
                "head": head}
    for name, value in expected.items():
        if chain.get(name) != value:
            raise _Refused(f"chain: chain.{name} is {chain.get(name)!r}, the events give {value!r}")
    report.version = len(bodies)
    return [decode_body(body, str(e.get("prev_hash")), str(e.get("hash"))) for e, body in zip(export["events"], bodies,
                                                                                            strict=True)]


def _revealed(
    report: VerifyReport, export: dict[str, Any], envelopes: list[Any], engines: Mapping[str, Engine[Any]]
) -> Engine[Any]:
    created, finished = envelopes[0], envelopes[-1]
    if created.type != CREATED or created.payload.get("game") != report.game:
        raise _Refused(f"revealed: the first event is not the game.created of a {report.game!r} game")
    if finished.type != FINISHED:
        raise _Refused("revealed: the last event is not game.finished: only a finished game can be verified")
    for name in ("seed", "secret_options"):
        if export.get(name) != finished.payload.get(name):
            raise _Refused(f"revealed: the file's {name} is not the one its game.finished reveals")
    engine = engines.get(report.game)
    if engine is None:
        raise _Refused(f"revealed: this build plays no {report.game!r}")
    return engine


def _rerun(report: VerifyReport, engine: Engine[Any], envelopes: list[Any]) -> None:
    replayed = ReplayReport(report.game_id, game=report.game)
    check_log(replayed, engine, envelopes, {})
    report.summary, report.batches_checked = replayed.summary, replayed.batches_checked
    if replayed.seed_source != "revealed" and not replayed.problems:
        replayed.problems.append("game.finished reveals no seed")
    if replayed.problems:
        report.problems.extend(replayed.problems[1:])
        raise _Refused(f"re-run: {replayed.problems[0]}")


def _signature(report: VerifyReport, export: dict[str, Any], key: str | None) -> None:
    problem = check_signature(export, key)
    if problem is not None:
        raise _Refused(f"signature: {problem}")
    report.key_id = str(export["signature"].get("key_id", ""))
