"""``donjon verify FILE``: check a signed game export with no store (and no network, unless the
trusted keys are given as a URL).

The checks, in this order; the first that fails is the one reported (``MISMATCH <check>: <why>``,
``docs/fairness.md``), and no input, however damaged, makes the check itself fail:

0. the file is JSON with no key twice in one object (:func:`parse_export`: a parser that keeps
   the last of two values would check a file another parser reads otherwise);
1. **format**: a ``donjon.export/2`` file (with its ``exported_at``, ms) or a ``donjon.export/1``
   one, whose ``events`` are a list, every ``body`` strict base64
   (:func:`strict_base64`: the standard alphabet, ``=`` padding, nothing else, canonical);
2. **chain**: every event's ``hash`` is ``H(prev_hash || body)`` of its stored body with the
   game's algorithm (named by ``game.created``), linked from the genesis in order, every body
   names this game and its version, and ``chain.version`` / ``chain.head`` are the last event's;
3. **revealed values**: the file's ``seed`` and ``secret_options`` are those of its
   ``game.finished`` body, its ``id`` and ``game`` those of ``game.created``;
4. **scheme** (no downgrades): a game created at or after :data:`STRONG_SCHEMES_SINCE_MS` (or the
   trusted keys' ``legacy_games_before``, when earlier) must name the SHA-256 chain and a
   specified draw scheme in its ``game.created``; an older game that names neither is checked
   under its legacy schemes and every verdict says "legacy: weaker guarantees";
5. **everything ``donjon replay`` re-runs** (:func:`service.fairness.replay.check_log`): the seed
   commitment, the sealed parts (opened with the revealed seed's hiding key, each stored clear
   part exactly what a spectator may see: :mod:`service.fairness.sealing`), the fold, every seat's
   contribution to the game seed, every decision with every draw (``donjon-draw-2``;
   ``donjon-draw-1`` or the legacy scheme of older games) and every bot move, the final summary (it is in
   ``game.finished``, which is re-decided);
6. **signature**: Ed25519 over the canonical JSON of the rest (:mod:`service.fairness.signing`),
   its ``key_id`` that of its public key; when trusted keys are given (:class:`TrustedKeys`:
   ``--key`` or ``--keys``), by one of them, not retired before the file's ``exported_at``, and a
   key the keyring made (one with a ``signed_from``) signs only ``/2`` files. Without trusted
   keys the report is ``pinned = False``: everything else checked, the signer unknown.
7. **ledger**, with ``--ledger``: the game is in the public ledger at the place its export names
   (:mod:`service.fairness.ledger_check`), the ledger's head signed by one of the trusted keys when
   they are given.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from events.chain import CHAIN, chain_of_body, genesis, verify_bodies
from events.codec import decode_body
from events.errors import ChainBroken
from games.base import Engine
from projections.game import CREATED, FINISHED
from service.fairness.draw_schemes import DEAL_VERSION, DRAW_VERSION
from service.fairness.export import EXPORT_FORMAT, EXPORT_FORMATS, chain_description
from service.fairness.ledger_check import ledger_problem
from service.fairness.replay import ReplayReport, check_log
from service.fairness.signing import check_signature, key_id, strict_base64
from service.fairness.trusted_keys import TrustedKeys

__all__ = [
    "LEGACY_WARNING",
    "STRONG_SCHEMES_SINCE_MS",
    "DuplicateKey",
    "VerifyReport",
    "parse_export",
    "strict_base64",
    "verify_export",
]

STRONG_SCHEMES_SINCE_MS = 1796120149000
"""2026-12-01 10:15:49 UTC: the release that brought the SHA-256 chain and ``donjon-draw-1``.
A game whose ``game.created`` is this late and names less is a downgrade."""
STRONG_DRAWS = (DRAW_VERSION, DEAL_VERSION)
LEGACY_WARNING = "legacy: weaker guarantees"


@dataclass(slots=True)
class VerifyReport:
    """What ``donjon verify`` found: ``ok`` when ``problems`` is empty; the first is the first mismatch."""

    game_id: str = ""
    game: str = ""
    version: int = 0
    summary: dict[str, Any] | None = None
    batches_checked: int = 0
    key_id: str = ""
    pinned: bool = False
    """The signer is one of the trusted keys given (``--key`` / ``--keys``)."""
    legacy: bool = False
    """The game was recorded under legacy schemes (SHA-1 chain or no specified draw)."""
    ledger_position: int | None = None
    """The game's place in the public ledger, when ``--ledger`` checked it."""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "game": self.game, "version": self.version, "summary": self.summary,
                "batches_checked": self.batches_checked, "key_id": self.key_id, "ok": self.ok,
                "pinned": self.pinned, "legacy": self.legacy,
                "warnings": [LEGACY_WARNING] if self.legacy else [], "problems": self.problems}


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


def verify_export(
    export: Any, engines: Mapping[str, Engine[Any]], *, trusted: TrustedKeys | None = None, key: str | None = None,
    ledger: Any = None,
) -> VerifyReport:
    """Every check of the module docstring on a parsed export, the signer pinned to ``trusted``
    (or to the one public ``key``, 64 hex digits) when given; with ``ledger`` (a ``GET /ledger``
    answer), the game's place in it too (:mod:`service.fairness.ledger_check`). Never raises:
    whatever goes wrong is the report's first problem."""
    report = VerifyReport()
    if key is not None:
        trusted = TrustedKeys.from_key(key)
    check = "format"
    try:
        bodies = _format(report, export)
        check = "chain"
        envelopes = _chain(report, export, bodies)
        check = "revealed"
        engine = _revealed(report, export, envelopes, engines)
        check = "scheme"
        _scheme(report, envelopes[0], trusted)
        check = "re-run"
        _rerun(report, engine, envelopes)
        check = "signature"
        _signature(report, export, trusted)
        check = "ledger"
        created = {**envelopes[0].payload, "ts": envelopes[0].ts}
        pinned = None if trusted is None else trusted.public_keys()
        if ledger is not None and (problem := ledger_problem(export, created, ledger, pinned)):
            raise _Refused(problem)
    except _Refused as refused:
        report.problems.insert(0, str(refused))
    except Exception as exc:
        report.problems.insert(0, f"{check}: the file cannot be checked here ({type(exc).__name__}: {str(exc)[:200]})")
    return report


def _format(report: VerifyReport, export: Any) -> list[bytes]:
    if not isinstance(export, dict) or export.get("format") not in EXPORT_FORMATS:
        raise _Refused(f"format: not a {EXPORT_FORMAT} (or donjon.export/1) file")
    if export["format"] == EXPORT_FORMAT and not _is_int(export.get("exported_at")):
        raise _Refused(f"format: a {EXPORT_FORMAT} file has an integer exported_at (ms)")
    if not isinstance(export.get("id"), str) or not isinstance(export.get("game"), str):
        raise _Refused("format: 'id' and 'game' are strings")
    report.game_id, report.game = export["id"], export["game"]
    events = export.get("events")
    if not isinstance(events, list) or not events or not all(isinstance(e, dict) for e in events):
        raise _Refused("format: 'events' is not a non-empty list of events")
    if not all(_is_int(e.get("version")) and isinstance(e.get("prev_hash"), str) and isinstance(e.get("hash"), str)
               for e in events):
        raise _Refused("format: every event has an integer version and string prev_hash and hash")
    if not isinstance(export.get("chain"), dict):
        raise _Refused("format: 'chain' is not an object")
    try:
        return [strict_base64(event.get("body")) for event in events]
    except (binascii.Error, ValueError):
        raise _Refused("format: an event's body is not strict base64") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    try:
        return [decode_body(body, e["prev_hash"], e["hash"]) for e, body in zip(export["events"], bodies, strict=True)]
    except (KeyError, TypeError, ValueError) as exc:
        raise _Refused(f"chain: an event's body is not an event ({type(exc).__name__}: {str(exc)[:120]})") from None


def _revealed(
    report: VerifyReport, export: dict[str, Any], envelopes: list[Any], engines: Mapping[str, Engine[Any]]
) -> Engine[Any]:
    created, finished = envelopes[0], envelopes[-1]
    if not all(isinstance(envelope.payload, dict) for envelope in envelopes):
        raise _Refused("revealed: an event's payload is not a map")
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


def _scheme(report: VerifyReport, created: Any, trusted: TrustedKeys | None) -> None:
    """No downgrade: a game created since the strong schemes must claim them; an older one that
    does not is legacy (checked under its own schemes, with weaker guarantees)."""
    chain, draw = created.payload.get("chain"), created.payload.get("draw")
    strong = chain == CHAIN and draw in STRONG_DRAWS
    if strong:
        return
    if draw is not None and draw not in STRONG_DRAWS:
        raise _Refused(f"scheme: game.created names the draw scheme {str(draw)[:40]!r}, which no verifier knows")
    since = STRONG_SCHEMES_SINCE_MS
    if trusted is not None and trusted.legacy_games_before is not None:
        since = min(since, trusted.legacy_games_before)
    if not _is_int(created.ts) or created.ts >= since:
        claims = f"chain {chain or 'sha1 (none named)'}, draw {draw or 'legacy (none named)'}"
        raise _Refused(f"scheme: a game created at {created.ts!r}, after legacy games ended ({since}), "
                       f"claims weaker schemes ({claims})")
    report.legacy = True


def _rerun(report: VerifyReport, engine: Engine[Any], envelopes: list[Any]) -> None:
    replayed = ReplayReport(report.game_id, game=report.game)
    check_log(replayed, engine, envelopes, {})
    report.summary, report.batches_checked = replayed.summary, replayed.batches_checked
    if replayed.seed_source != "revealed" and not replayed.problems:
        replayed.problems.append("game.finished reveals no seed")
    if replayed.problems:
        report.problems.extend(replayed.problems[1:])
        raise _Refused(f"re-run: {replayed.problems[0]}")


def _signature(report: VerifyReport, export: dict[str, Any], trusted: TrustedKeys | None) -> None:
    problem = check_signature(export, None if trusted is None else trusted.public_keys())
    if problem is not None:
        raise _Refused(f"signature: {problem}")
    signature = export["signature"]
    report.key_id = key_id(bytes.fromhex(signature["public_key"]))
    if trusted is None:
        return
    problem = trusted.refusal(signature["public_key"], export.get("format"), export.get("exported_at"))
    if problem is not None:
        raise _Refused(f"signature: {problem}")
    report.pinned = True
