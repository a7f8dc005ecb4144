"""``donjon verify FILE [--key PUBKEY | --keys FILE|URL] [--ledger FILE|URL] [--json]``: the verdict on an export.

Exit codes: 0 every check passes and the signer is one of the trusted keys given; 1 a mismatch
(``MISMATCH <check>: <why>``: anything in the file, however damaged, that does not check); 2 a
usage error, a file, key listing or ledger that cannot be read; 3 every check passes but no trusted key
was given, so who signed is not known (the output says so). ``--json`` prints exactly one JSON
object in every case, with ``outcome`` one of ``ok``, ``mismatch``, ``unreadable``, ``unpinned``.
A game recorded under legacy schemes says "legacy: weaker guarantees" on every line of its verdict.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from games.base import Engine
from service.run.console import out

__all__ = ["EXIT_UNPINNED", "verify_command"]

EXIT_OK, EXIT_MISMATCH, EXIT_UNREADABLE, EXIT_UNPINNED = 0, 1, 2, 3


def _refused_usage(message: str, as_json: bool) -> int:
    if as_json:
        out(json.dumps({"ok": False, "outcome": "unreadable", "problems": [message]}, indent=2))
    sys.stderr.write(f"donjon: {message}\n")
    return EXIT_UNREADABLE


def verify_command(
    path: Path, key: str | None, keys: str | None, as_json: bool, engines: Mapping[str, Engine[Any]] | None,
    ledger_source: str | None = None,
) -> int:
    """``donjon verify``: check an export (no store; the network only for ``--keys URL`` and
    ``--ledger URL``)."""
    import games
    from service.fairness.ledger_check import LedgerUnreadable, load_ledger
    from service.fairness.trusted_keys import TrustedKeys, TrustedKeysError
    from service.fairness.verify import parse_export, verify_export

    if key is not None and keys is not None:
        return _refused_usage("give --key or --keys, not both", as_json)
    try:
        trusted = TrustedKeys.from_key(key) if key is not None else TrustedKeys.load(keys) if keys else None
    except TrustedKeysError as exc:
        return _refused_usage(str(exc), as_json)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return _refused_usage(f"cannot read {str(path)!r}: {exc.strerror or exc}", as_json)
    try:
        export: Any = parse_export(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, a key twice, nested too deep
        export = exc
    if isinstance(export, ValueError | RecursionError):
        from service.fairness.verify import VerifyReport

        why = str(export)[:200] if isinstance(export, ValueError) else "nested too deep"
        report = VerifyReport(problems=[f"format: the file is not JSON without repeated keys ({why})"])
    else:
        try:
            game_id = str(export.get("id", "")) if isinstance(export, dict) else ""
            ledger = None if ledger_source is None else load_ledger(ledger_source, game_id)
        except LedgerUnreadable as exc:
            return _refused_usage(str(exc), as_json)
        report = verify_export(export, engines or games.default_engines(), trusted=trusted, ledger=ledger)
        if report.ok and ledger is not None:
            report.ledger_position = export["ledger"]["position"]
    code = EXIT_MISMATCH if not report.ok else EXIT_OK if report.pinned else EXIT_UNPINNED
    if as_json:
        outcome = {EXIT_OK: "ok", EXIT_MISMATCH: "mismatch", EXIT_UNPINNED: "unpinned"}[code]
        out(json.dumps({**report.as_dict(), "outcome": outcome}, indent=2))
    else:
        _print_verdict(report)
    return code


def _say(line: str) -> None:
    """``line`` on stdout, any character a file smuggled in (a lone surrogate) escaped."""
    out(line.encode("utf-8", "backslashreplace").decode("utf-8"))


def _print_verdict(report: Any) -> None:
    legacy = "   (legacy: weaker guarantees)" if report.legacy else ""
    if not report.ok:
        _say(f"MISMATCH  {report.problems[0]}{legacy}")
        return
    _say(f"game      {report.game_id} ({report.game})   version {report.version}   batches re-run "
        f"{report.batches_checked}{legacy}")
    _say(f"summary   {json.dumps(report.summary, sort_keys=True)}{legacy}")
    signer = (f"key {report.key_id}, one of the trusted keys given" if report.pinned else
              f"key {report.key_id}, UNPINNED: who signed is not checked; pass --key or --keys with the "
              "deployment's GET /keys")
    ledger = "" if report.ledger_position is None else f", ledger position {report.ledger_position}"
    _say(f"OK: signature ({signer}), chain, seed commitment, seat contributions, "
        f"every draw, decision and bot move{ledger}{legacy}")
    if not report.pinned:
        _say(f"UNPINNED  the signer is not pinned: this file verifies, but anyone could have signed it{legacy}")
