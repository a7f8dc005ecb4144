"""The archiving pass of ``donjon serve``: which archive a node uses, and its background loop.

Every node (every worker of ``donjon serve --workers N``) runs a pass every
``DONJON_ARCHIVE_EVERY_S``: the finished games whose last event is ``DONJON_ARCHIVE_AFTER_S``
old move from the live store to the archive (:mod:`events.archive.archiver`; the leases keep two
nodes off one game). The store the app reads through serves them from there
(:class:`events.archive.reading.ArchivingStore`).

Which archive: ``DONJON_ARCHIVE_URL`` (``postgresql://...`` or ``sqlite:///path``); unset, the
SQLite file ``archive.sqlite3`` of the data folder, but only beside the embedded store: nodes
sharing a store must share the archive too, so with ``DONJON_REDIS_URL`` and no archive URL no
node archives (it says so at start). At start the node checks the archive's schema version: an
SQLite file is brought to it (it is the node's own), PostgreSQL must be at it already
(``donjon archive migrate``), else the start fails naming the command. A database that does not
answer at start is only a warning: every pass checks again, and archived games answer
``store_unavailable`` until it is back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from events.archive import Archive, ArchiveSchemaError, ArchiveUnavailable, open_archive
from events.archive.archiver import Archiver, PassReport
from events.archive.reading import ArchivingStore
from events.archive.sqlite import FILE_NAME, SqliteArchive
from events.errors import StoreUnavailable
from events.tasks import stop_task
from service.edge.keys import METRICS, SETTINGS, STORE
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.ops.settings import Secret, Settings

__all__ = [
    "archive_location", "archiving", "embedded_archive_url", "open_node_archive", "prepare_archive", "record_pass",
]

log = get_logger()


def archive_location(settings: Settings) -> str | Path | None:
    """Where this node's archive is (a PostgreSQL URL or an SQLite path), ``None``: no archive."""
    if not settings.archive:
        return None
    if settings.archive_url is not None:
        url = settings.archive_url.reveal()
        return Path(url.removeprefix("sqlite://")) if url.startswith("sqlite:") else url
    if settings.embedded:
        return Path(settings.data_dir) / FILE_NAME
    return None


def embedded_archive_url(settings: Settings) -> Secret | None:
    """``DONJON_ARCHIVE_URL`` as the workers of a ``donjon serve`` that started the embedded
    store get it: the supervisor's folder's SQLite file unless a URL was given (the workers see
    a store URL, and a store URL alone means no archive)."""
    if settings.archive_url is not None or not settings.archive:
        return settings.archive_url
    return Secret(f"sqlite://{(Path(settings.data_dir) / FILE_NAME).resolve()}")


def open_node_archive(settings: Settings) -> Archive | None:
    where = archive_location(settings)
    return None if where is None else open_archive(where)


async def prepare_archive(archive: Archive) -> bool:
    """Check (SQLite: bring) the schema to this code's version; False when the database does not
    answer. :class:`ArchiveSchemaError` when it is at another version."""
    try:
        if isinstance(archive, SqliteArchive):
            await archive.migrate()
        await archive.check()
    except ArchiveUnavailable as exc:
        log.warning("archive.unavailable", archive=archive.where, error=str(exc))
        return False
    return True


async def archiving(app: web.Application) -> AsyncIterator[None]:
    """The cleanup context: the archive attached to the app's store and the passes running."""
    settings = app[SETTINGS]
    archive = open_node_archive(settings)
    store = app[STORE]
    if archive is None or not isinstance(store, ArchivingStore):
        if settings.archive and not settings.embedded:
            log.warning("archive.off", reason="DONJON_REDIS_URL is set and DONJON_ARCHIVE_URL is not")
        yield
        return
    try:
        ready = await prepare_archive(archive)
    except ArchiveSchemaError as exc:
        log.error("archive.schema_mismatch", archive=archive.where, error=str(exc))
        await archive.close()
        raise
    store.attach(archive)
    log.info("archive.attached", archive=archive.where, ready=ready, after_s=settings.archive_after_s)
    archiver = Archiver(store.server, archive, after_ms=settings.archive_after_s * 1000, log=log)
    task = asyncio.create_task(_passes(archiver, app[METRICS], settings.archive_every_s, ready), name="donjon-archive")
    try:
        yield
    finally:
        await stop_task(task)
        store.attach(None)
        await archive.close()


async def _passes(archiver: Archiver, metrics: Metrics, every_s: float, ready: bool) -> None:
    while True:
        await asyncio.sleep(every_s)
        try:
            if not ready:
                ready = await prepare_archive(archiver.archive)
                if not ready:
                    continue
            started = time.perf_counter()
            report = await archiver.run_pass()
            record_pass(report, metrics, time.perf_counter() - started)
        except ArchiveSchemaError as exc:  # came back at another version: archive nothing, say so
            ready = False
            metrics.archive_failures.inc()
            log.error("archive.schema_mismatch", archive=archiver.archive.where, error=str(exc))
        except StoreUnavailable as exc:  # the live store or the archive: the next pass retries
            metrics.archive_failures.inc()
            log.warning("archive.pass_failed", error=str(exc))


def record_pass(report: PassReport, metrics: Metrics, seconds: float) -> None:
    """A pass's figures in the node's metrics and log."""
    metrics.games_archived.inc(report.archived)
    for latency in report.latencies:
        metrics.archive_seconds.observe(latency)
    metrics.archive_backlog.set(report.waiting)
    oldest = report.oldest_waiting_ms
    metrics.archive_oldest_seconds.set(0 if oldest is None else max(0.0, time.time() - oldest / 1000))
    if report.archived or report.finished_off or report.ledger_moved:
        log.info("archive.pass", archived=report.archived, waiting=report.waiting, taken=report.taken,
                 finished_off=report.finished_off, ledger_moved=report.ledger_moved, seconds=round(seconds, 3))
