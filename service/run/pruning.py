"""``donjon archive prune``: archived games older than N days exported to files, then their events
deleted from the archive.

For each archived game not pruned yet whose last event (``games.finished_ms``) is older than the
cutoff, oldest first, in this order, so that a kill at any step leaves the game whole in the
archive, or exported and verified on disk (or both), never neither:

1. **Still archived only**: a game whose keys are live again (a rematch put it back) is left to
   be archived again later.
2. **Export**: the signed export ``donjon export`` gives (:func:`service.fairness.export.signed_export`,
   the same bytes: :func:`~service.fairness.export.export_file_bytes`), read from the archive.
3. **Write** it to ``<folder>/<game id>.json`` atomically: a temporary file in the same folder,
   fsynced, renamed over the name, then the folder fsynced. A file already there that verifies
   and holds this very game (every field but ``exported_at`` and the signature equal to the fresh
   export's) is kept as it is: a second run after a kill reuses it.
4. **Verify** the file read back from disk, with the checks ``donjon verify`` makes (chain, seed,
   every draw and decision re-run, signature), the signer pinned to this deployment's keys.
5. **Delete** the game's ``events`` rows and mark its ``games`` row pruned, with where the export
   is (a ``file://`` URI), in one transaction that happens only if the row is still the one
   exported (unpruned, at the version read): :meth:`events.archive.base.Archive.prune`.

The row stays as the index: the lobby still lists the game, and a read of its events answers
``game_pruned`` (HTTP 410) naming the export (:class:`events.archive.base.GamePruned`). Its
public-ledger entry is never touched, so the ledger still verifies for every game after it.

``DONJON_ARCHIVE_FAULT`` (``written`` or ``exported``) makes the process SIGKILL itself after the
file is renamed into place (before it is verified), or after it verified (before the delete); the
crash tests run real prunes with it.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from events.archive.archiver import fault_point, kill_at
from events.archive.base import FIRST, Archive, ArchivedGame
from events.archive.reading import ArchivingStore
from games.base import Engine
from service.errors import ServiceError
from service.fairness.export import Signer, export_file_bytes, signed_export
from service.fairness.trusted_keys import TrustedKeys
from service.fairness.verify import parse_export, verify_export
from service.ops.logs import get_logger

__all__ = ["DAY_MS", "PruneReport", "Pruner", "export_path", "write_atomically"]

DAY_MS = 86_400_000
PAGE = 100
"""Games asked of the archive at a time."""
SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Game ids that are file names as they are (every id the service makes)."""
MOMENT_FIELDS = ("exported_at", "signature")
"""What two exports of one game made at two times may differ in."""


@dataclass
class PruneReport:
    """What one prune did (or, with ``dry_run``, would do)."""

    pruned: list[str] = field(default_factory=list)
    """Games whose events were deleted (with ``dry_run``: would be)."""
    reused: int = 0
    """Export files already there, verifying, kept as they were."""
    live: int = 0
    """Games live again (a rematch put them back), left to be archived again."""
    moved_on: int = 0
    """Games archived again between the export and the delete: not deleted, exported next time."""
    failed: dict[str, str] = field(default_factory=dict)
    """Game id -> why it was left whole in the archive."""


def export_path(folder: Path, game_id: str) -> Path:
    """Where the export of ``game_id`` goes in ``folder``."""
    return folder / f"{game_id}.json"


class Pruner:
    """Exports, verifies and deletes old archived games, one at a time (module docstring)."""

    def __init__(
        self,
        store: ArchivingStore,
        archive: Archive,
        folder: Path,
        *,
        signer: Signer,
        trusted: TrustedKeys,
        engines: Mapping[str, Engine[Any]],
        clock: Callable[[], int],
        fault: str | None = None,
    ) -> None:
        self.store = store
        """The store with ``archive`` attached: the export reads the game from there."""
        self.archive = archive
        self.folder = folder
        self.signer = signer
        self.trusted = trusted
        self.engines = engines
        self.clock = clock
        self.fault = fault_point(fault)
        self.log = get_logger()

    async def run(self, older_than_ms: int, limit: int | None = None, dry_run: bool = False) -> PruneReport:
        """Prune every game finished more than ``older_than_ms`` ago (at most ``limit``)."""
        report = PruneReport()
        cutoff = self.clock() - older_than_ms
        after = FIRST  # pages by (finished_ms, game_id): a game left whole is not asked for twice
        while True:
            page = await self.archive.prunable(cutoff, PAGE, after)
            for game in page:
                if limit is not None and len(report.pruned) >= limit:
                    return report
                if dry_run:
                    report.pruned.append(game.game_id)
                else:
                    await self.prune_one(game, report)
            if len(page) < PAGE:
                return report
            after = (page[-1].finished_ms, page[-1].game_id)

    async def prune_one(self, game: ArchivedGame, report: PruneReport) -> None:
        """Steps 1 to 5 of the module docstring for one game; its outcome is added to ``report``."""
        game_id = game.game_id
        if not SAFE_NAME.fullmatch(game_id):
            report.failed[game_id] = "the game id is not a file name"
            return
        if await self.store.archived(game_id) is None:
            report.live += 1
            return
        try:
            fresh = await signed_export(self.store, game_id, game.game, self.signer, self.clock())
        except ServiceError as exc:  # not_finished: an archived game always is; never delete what does not export
            report.failed[game_id] = exc.message
            return
        path = export_path(self.folder, game_id)
        if await asyncio.to_thread(self._problem, path, fresh) is None:
            report.reused += 1
        else:
            await asyncio.to_thread(write_atomically, path, export_file_bytes(fresh))
            kill_at(self.fault, "written")
            problem = await asyncio.to_thread(self._problem, path, fresh)
            if problem is not None:
                report.failed[game_id] = f"the written export does not verify: {problem}"
                self.log.error("archive.prune_unverified", game_id=game_id, path=str(path), problem=problem)
                return
        kill_at(self.fault, "exported")
        if not await self.archive.prune(game_id, game.version, path.resolve().as_uri(), self.clock()):
            report.moved_on += 1
            return
        report.pruned.append(game_id)
        self.log.info("archive.pruned", game_id=game_id, version=game.version, export=str(path))

    def _problem(self, path: Path, fresh: dict[str, Any]) -> str | None:
        """Why the file at ``path`` is not a verifying export of what ``fresh`` exports (``None``:
        it is): the checks of ``donjon verify``, pinned to the deployment's keys."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return "no file"
        try:
            export = parse_export(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            return f"not an export ({str(exc)[:200]})"
        report = verify_export(export, self.engines, trusted=self.trusted)
        if not report.ok:
            return report.problems[0]
        if not isinstance(export, dict) or _content(export) != _content(fresh):
            return "an export of another state of the game than the archive's"
        return None


def _content(export: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in export.items() if name not in MOMENT_FIELDS}


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` at ``path`` whole or not at all, on disk before this returns: a temporary file
    beside it, fsynced, renamed over ``path``, then the folder fsynced (so the rename is too)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    for stale in path.parent.glob(f".{path.name}.*.tmp"):  # left by a killed run
        stale.unlink(missing_ok=True)
    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
