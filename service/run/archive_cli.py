"""``donjon archive run|migrate|status``: the archive from the command line.

- ``migrate``: bring the archive's schema (``DONJON_ARCHIVE_URL``, else the data folder's SQLite
  file) to this donjon's version; exit 0, 2 when it cannot be reached.
- ``status``: the archive's counts (games, events, ledger entries, schema version) and the live store's
  finished games: how many, how many are due (``DONJON_ARCHIVE_AFTER_S`` old), the oldest;
  ``--json`` for machines.
- ``run``: one archiving pass now, as a node's background pass does (leases included, so it is
  safe beside running nodes); prints what it did.

The commands that read games (``replay``, ``export``) get the archive attached to their store
here too (:func:`attach_archive`), so they read archived games as the service does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.run.console import out

if TYPE_CHECKING:  # the archive and the store are imported only by the commands that use them
    from events.archive import Archive
    from events.archive.archiver import PassReport
    from service.ops.settings import Settings

WithStore = Callable[[Any, Callable[[Any], Awaitable[int]]], Awaitable[int]]
"""The CLI's ``_with_store(settings, work)``: ``work(store)`` on the store the settings name."""

__all__ = ["add_archive_parser", "archive_main", "attach_archive"]


def add_archive_parser(sub: Any) -> None:
    """The ``archive`` command and its three subcommands, on the ``donjon`` parser's ``sub``."""
    archive = sub.add_parser("archive", help="the archive of finished games: run a pass, migrate, status")
    actions = archive.add_subparsers(dest="archive_command", required=True)
    for name, text in (("run", "archive the cold finished games now (one pass)"),
                       ("migrate", "bring the archive's schema to this donjon's version"),
                       ("status", "counts, backlog, oldest game not archived yet")):
        action = actions.add_parser(name, help=text)
        action.add_argument("--data-dir", type=Path, help="embedded server data folder (default ./donjon-data)")
        action.add_argument("--json", action="store_true", help="print the figures as JSON")


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


async def archive_main(settings: Settings, args: argparse.Namespace, with_store: WithStore) -> int:
    """Run ``donjon archive <args.archive_command>``; ``with_store`` is the CLI's store runner."""
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
        "archived_events": counts.events, "archived_ledger_entries": counts.ledger,
        "live_finished_games": survey.seen, "backlog": survey.waiting,
        "oldest_unarchived_finished_ms": oldest,
        "oldest_unarchived_age_s": None if oldest is None else round(time.time() - oldest / 1000, 1),
    }
    if as_json:
        out(json.dumps(figures, indent=2))
        return 0
    out(f"archive         {archive.where} (schema version {counts.schema_version})")
    out(f"archived        {counts.games:,} games, {counts.events:,} events, {counts.ledger:,} ledger entries")
    out(f"live, finished  {survey.seen:,} games; backlog (not archived yet) {survey.waiting:,}")
    age = "none" if oldest is None else f"{figures['oldest_unarchived_age_s']:,} s since its last event"
    out(f"oldest waiting  {age} (archived {settings.archive_after_s} s after the end)")
    return 0


async def _survey(store: Any, archive: Archive, settings: Settings) -> PassReport:
    """The live finished games, probed as a pass would, archiving nothing."""
    from events.archive.archiver import Archiver

    archiver = Archiver(store.server, archive, after_ms=settings.archive_after_s * 1000)
    return await archiver.survey()
