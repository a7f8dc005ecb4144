"""``donjon archive run|migrate|status``: the archive from the command line.

- ``migrate``: bring the archive's schema (``DONJON_ARCHIVE_URL``, else the data folder's SQLite
  file) to this donjon's version; exit 0, 2 when it cannot be reached.
- ``status``: the archive's counts (games, events, ledger entries, schema version) and the live store's
  finished games: how many, how many are due (``DONJON_ARCHIVE_AFTER_S`` old), the oldest;
  ``--json`` for machines.
- ``run``: one archiving pass now, as a node's background pass does (leases included, so it is
  safe beside running nodes); prints what it did.
- ``prune --older-than DAYS --to DIR [--limit N] [--dry-run]``: each archived game finished more
  than ``DAYS`` ago exported to ``DIR/<game id>.json`` (the signed file ``donjon export`` writes),
  verified from disk, and only then its events deleted from the archive, its row kept as the
  index (:mod:`service.run.pruning`); exit 0, 1 when a game could not be pruned (left whole).

The commands that read games (``replay``, ``export``) get the archive attached to their store
here too (:func:`attach_archive`), so they read archived games as the service does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.base import Engine
from service.run.console import out

if TYPE_CHECKING:  # the archive and the store are imported only by the commands that use them
    from events.archive import Archive
    from events.archive.archiver import PassReport
    from service.ops.settings import Settings

EXIT_LEFT_WHOLE = 1
"""``prune``: some game could not be exported or verified, and was left whole in the archive."""

WithStore = Callable[[Any, Callable[[Any], Awaitable[int]]], Awaitable[int]]
"""The CLI's ``_with_store(settings, work)``: ``work(store)`` on the store the settings name."""

__all__ = ["add_archive_parser", "archive_main", "attach_archive"]


def add_archive_parser(sub: Any) -> None:
    """The ``archive`` command and its subcommands, on the ``donjon`` parser's ``sub``."""
    archive = sub.add_parser("archive", help="the archive of finished games: run a pass, migrate, status, prune")
    actions = archive.add_subparsers(dest="archive_command", required=True)
    for name, text in (("run", "archive the cold finished games now (one pass)"),
                       ("migrate", "bring the archive's schema to this donjon's version"),
                       ("status", "counts, backlog, oldest game not archived yet, games pruned"),
                       ("prune", "export the archived games older than --older-than days to --to, then delete"
                                 " their events from the archive")):
        action = actions.add_parser(name, help=text)
        action.add_argument("--data-dir", type=Path, help="embedded server data folder (default ./donjon-data)")
        action.add_argument("--json", action="store_true", help="print the figures as JSON")
        if name == "prune":
            _prune_arguments(action)


def _prune_arguments(prune: Any) -> None:
    prune.add_argument("--older-than", type=_days, required=True, metavar="DAYS",
                       help="games whose last event is more than DAYS days old (a decimal number, 0 or more)")
    prune.add_argument("--to", type=Path, required=True, metavar="DIR",
                       help="the folder the exports go to, one <game id>.json each (made if missing)")
    prune.add_argument("--limit", type=_positive, metavar="N", help="prune at most N games")
    prune.add_argument("--dry-run", action="store_true", help="list the games it would prune, change nothing")


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not days >= 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return days


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return int(text)


async def attach_archive(store: Any, settings: Settings) -> Archive | None:
    """The node's archive, checked and attached to ``store`` (``None``: no archive here).
    :class:`ArchiveSchemaError` when its schema is not this donjon's."""
    from events.archive.reading import ArchivingStore
    from service.run.archiving import open_node_archive, prepare_archive

    archive = open_node_archive(settings)
    if archive is None or not isinstance(store, ArchivingStore):
        return None
    await prepare_archive(archive)
    store.attach(archive)
    return archive


async def archive_main(
    settings: Settings, args: argparse.Namespace, with_store: WithStore,
    engines: Mapping[str, Engine[Any]] | None = None,
) -> int:
    """Run ``donjon archive <args.archive_command>``; ``with_store`` is the CLI's store runner,
    ``engines`` the games served (``prune`` re-runs each game to verify its export)."""
    from events.archive import ArchiveSchemaError
    from events.errors import StoreError
    from service.run.archiving import open_node_archive

    archive = open_node_archive(settings)
    if archive is None:
        sys.stderr.write("donjon: no archive here: DONJON_ARCHIVE is off, or DONJON_REDIS_URL is set without"
                         " DONJON_ARCHIVE_URL\n")
        return 2
    try:
        if args.archive_command == "migrate":
            before, after = await archive.migrate()
            out(f"archive {archive.where}: schema version {before} -> {after}")
            return 0
        await archive.check()
        if args.archive_command == "status":
            return await with_store(settings, lambda store: _status(store, archive, settings, args.json))
        if args.archive_command == "prune":
            return await with_store(settings, lambda store: _prune(store, settings, args, engines))
        return await with_store(settings, lambda store: _run(store, archive, settings, args.json))
    except ArchiveSchemaError as exc:
        sys.stderr.write(f"donjon: {exc}\n")
        return 2
    except StoreError as exc:
        sys.stderr.write(f"donjon: the archive is unavailable: {exc}\n")
        return 2
    finally:
        await archive.close()


async def _run(store: Any, archive: Archive, settings: Settings, as_json: bool) -> int:
    from events.archive.archiver import Archiver

    started = time.perf_counter()
    report = await Archiver(store.server, archive, after_ms=settings.archive_after_s * 1000).run_pass()
    seconds = time.perf_counter() - started
    figures = {"archived": report.archived, "waiting": report.waiting, "taken_by_another_node": report.taken,
               "finished_off": report.finished_off, "ledger_moved": report.ledger_moved, "seconds": round(seconds, 3)}
    out(json.dumps(figures) if as_json else
        f"archived {report.archived} games in {seconds:.2f} s; {report.waiting} finished games wait"
        f" (not {settings.archive_after_s} s old yet, or their copy did not check); {report.taken} held by"
        f" another node; {report.finished_off} finished off after an interrupted pass; {report.ledger_moved}"
        f" ledger entries moved")
    return 0


async def _status(store: Any, archive: Archive, settings: Settings, as_json: bool) -> int:
    counts = await archive.counts()
    survey = await _survey(store, archive, settings)
    oldest = survey.oldest_waiting_ms
    figures: dict[str, Any] = {
        "archive": archive.where, "schema_version": counts.schema_version, "archived_games": counts.games,
        "archived_events": counts.events, "archived_ledger_entries": counts.ledger, "pruned_games": counts.pruned,
        "live_finished_games": survey.seen, "backlog": survey.waiting,
        "oldest_unarchived_finished_ms": oldest,
        "oldest_unarchived_age_s": None if oldest is None else round(time.time() - oldest / 1000, 1),
    }
    if as_json:
        out(json.dumps(figures, indent=2))
        return 0
    out(f"archive         {archive.where} (schema version {counts.schema_version})")
    out(f"archived        {counts.games:,} games, {counts.events:,} events, {counts.ledger:,} ledger entries")
    out(f"pruned          {counts.pruned:,} of those games (their events only in their exports)")
    out(f"live, finished  {survey.seen:,} games; backlog (not archived yet) {survey.waiting:,}")
    age = "none" if oldest is None else f"{figures['oldest_unarchived_age_s']:,} s since its last event"
    out(f"oldest waiting  {age} (archived {settings.archive_after_s} s after the end)")
    return 0


async def _survey(store: Any, archive: Archive, settings: Settings) -> PassReport:
    """The live finished games, probed as a pass would, archiving nothing."""
    from events.archive.archiver import Archiver

    archiver = Archiver(store.server, archive, after_ms=settings.archive_after_s * 1000)
    return await archiver.survey()


async def _prune(store: Any, settings: Settings, args: argparse.Namespace,
                 engines: Mapping[str, Engine[Any]] | None) -> int:
    """``donjon archive prune`` on the store's attached archive (so its reads and its deletes are
    of one archive): signed and verified with the deployment's keys."""
    from service.fairness.trusted_keys import TrustedKeys
    from service.ops.logs import logs_to_stderr
    from service.ops.settings import SettingsError
    from service.play.game_service import now_ms
    from service.run.app import node_vault, open_deployment_keys
    from service.run.pruning import DAY_MS, Pruner
    from service.run.served import served_engines

    logs_to_stderr(settings)  # one line per game pruned; stdout is the report (JSON with --json)
    try:
        keys = await open_deployment_keys(settings, store, node_vault(settings), now_ms)
        served = served_engines(settings, engines)
    except SettingsError as exc:
        sys.stderr.write(f"donjon: {exc}\n")
        return 2
    trusted = TrustedKeys.from_listing(await keys.listing(), "the deployment's keys")
    pruner = Pruner(store, store.archive, args.to, signer=await keys.signer(), trusted=trusted, engines=served,
                    clock=now_ms)
    started = time.perf_counter()
    report = await pruner.run(round(args.older_than * DAY_MS), args.limit, args.dry_run)
    seconds = time.perf_counter() - started
    figures = {"dry_run": args.dry_run, "pruned": len(report.pruned), "games": report.pruned,
               "reused_exports": report.reused, "live_again": report.live, "archived_again": report.moved_on,
               "failed": report.failed, "to": str(args.to), "seconds": round(seconds, 3)}
    if args.json:
        out(json.dumps(figures, indent=2))
    else:
        verb = "would prune" if args.dry_run else "pruned"
        out(f"{verb} {len(report.pruned)} games older than {args.older_than:g} days in {seconds:.2f} s, exports in"
            f" {args.to} ({report.reused} already there and verifying); {report.live} live again and"
            f" {report.moved_on} archived again meanwhile, left for later")
        for game_id in report.pruned if args.dry_run else ():
            out(f"  {game_id}")
        for game_id, why in report.failed.items():
            out(f"LEFT WHOLE  {game_id}: {why}")
    return EXIT_LEFT_WHOLE if report.failed else 0
