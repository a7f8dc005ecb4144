"""One archiving pass: the finished games cold enough move from the live store to the archive.

For each batch of the lobby's finished games (oldest first), in this order, so that a kill at
any point leaves every game whole in the live store, in the archive, or in both:

1. **Probe** (one pipeline): each game's status and last event; only a finished game whose last
   event is ``after_ms`` old goes on. A game whose keys are gone but which the archive holds (a
   pass killed after its delete) is only taken out of the lobby's live index.
2. **Lease**: ``SET game:{ID}:archiving <token> NX PX``: of two nodes, one takes each game.
3. **Read** its metadata and command-id hashes and its whole stream.
4. **Copy** them to the archive in one transaction (a kill here rolls it back).
5. **Check the copy**, in that transaction before it commits (:meth:`Archive.put`): the archived
   rows re-hashed from their stored bytes must chain from the genesis to the live head, as many
   as the live events. A game whose copy does not check is not kept and stays live (and a live
   log that does not chain never checks, so it is never deleted).
6. **Delete** the game's keys with a script that first checks, atomically, that the lease is
   still this node's and the stream still ends at the archived version (a rematch link appended
   meanwhile keeps the game live, to be archived again later).
7. **Unlist** it from the lobby's live index (the archive lists it now).

After the games, the pass moves the public ledger's entries of the games no longer live to the
archive too (:class:`events.archive.ledger.LedgerMover`, its own steps and guarantees).

No tombstone is left: a reader that finds no key of a game asks the archive
(:class:`events.archive.reading.ArchivingStore`), and the copy is there before the keys go.

``DONJON_ARCHIVE_FAULT`` (``copy``, ``copied`` or ``delete``) makes the process SIGKILL itself
at that step: inside the copy's transaction, after the copy committed, after the first half of
a batch's deletes; the crash tests run real passes with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack

from events.archive.base import Archive, ArchivedGame, storable
from events.archive.ledger import LedgerMover
from events.archive.replies import entries_of_reply, pairs
from events.batcher import pack_commands
from events.errors import StoreError
from events.keys import archive_lease_key, cmds_key, events_key, meta_key
from events.server import Server
from events.sharded import ShardedIndex
from events.store.lobby import lobby_index

__all__ = ["FAULT_ENV", "Archiver", "PassReport", "fault_point", "kill_at"]

FAULT_ENV = "DONJON_ARCHIVE_FAULT"


def fault_point(given: str | None = None) -> str | None:
    """Where the crash tests want this process killed: ``given``, else ``DONJON_ARCHIVE_FAULT``."""
    return given if given is not None else os.environ.get(FAULT_ENV)


def kill_at(fault: str | None, point: str) -> None:
    """SIGKILL this process when ``fault`` (:func:`fault_point`) names ``point``."""
    if fault == point:
        os.kill(os.getpid(), signal.SIGKILL)

LEASE_ENV = "DONJON_ARCHIVE_LEASE_MS"
"""How long a lease lasts, in ms, when set (the crash tests shorten it; nodes keep the default)."""
FINISHED = "finished"
LEASE_MS = 120_000
"""How long a node's claim on a game lasts: far longer than one batch takes, and short enough
that a game whose archiver died is taken by the next pass soon after."""

CALL_BUDGET_S = 15.0
"""Seconds one of the pass's pipelines may take: far more than the service's call budget (a
batch moves megabytes, on a store busy serving games), and still a bound on a hung store."""
PARALLEL = 3
"""Batches of a pass in flight at once, so that the live store and the archive are both busy
(one batch reads while another writes). Two were best while PostgreSQL spent 1.1-1.5 ms a game
(a third made its backends contend); with the leaner copy and check (~0.65 ms) three are (on
two cores, 4,000 games: 885-917 games/s with three, 793-816 with two, 856-880 with four, the
CPU per game the same for two and three)."""
PAGE_BATCHES = 6
"""Batches per page of the live index a pass takes at once (the batches of a page flow through
``parallel`` slots; the pages follow each other)."""
READ_CHUNK = 50
"""Games read from the live store per pipeline (a finished game is ~200-300 events, ~80 KB)."""

# KEYS: meta, events, cmds, lease. ARGV: the lease token, the archived version.
# 1: deleted; 0: the lease is not ours (expired, another node's); -1: the stream moved on.
DELETE_LUA = """#!lua
if redis.call("GET", KEYS[4]) ~= ARGV[1] then return 0 end
local last = redis.call("XREVRANGE", KEYS[2], "+", "-", "COUNT", 1)
local version = 0
if last[1] then version = tonumber(string.match(last[1][1], "^(%d+)")) end
if version ~= tonumber(ARGV[2]) then
  redis.call("DEL", KEYS[4])
  return -1
end
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return 1
"""

RELEASE_LUA = """#!lua
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0
"""


@dataclass
class PassReport:
    """What one pass did."""

    archived: int = 0
    seen: int = 0
    """Finished games the pass looked at."""
    waiting: int = 0
    """Finished games not cold enough yet (or whose copy did not check): still live."""
    taken: int = 0
    """Games another node held the lease of."""
    finished_off: int = 0
    """Games a killed pass had deleted but not unlisted."""
    oldest_waiting_ms: int | None = None
    """The last event time of the oldest finished game still live."""
    latencies: list[float] = field(default_factory=list)
    """Seconds from each archived game's last event to its delete."""
    ledger_moved: int = 0
    """Ledger entries moved to the archive."""

    def merge(self, other: PassReport) -> None:
        self.archived += other.archived
        self.ledger_moved += other.ledger_moved
        self.seen += other.seen
        self.waiting += other.waiting
        self.taken += other.taken
        self.finished_off += other.finished_off
        self.latencies += other.latencies
        if other.oldest_waiting_ms is not None:
            self.oldest_waiting_ms = min(self.oldest_waiting_ms or other.oldest_waiting_ms, other.oldest_waiting_ms)


@dataclass(frozen=True, slots=True)
class _Probe:
    game_id: str
    status: str | None
    last_ms: int | None


class Archiver:
    """Moves cold finished games from a live store's server to ``archive``, one pass at a time."""

    def __init__(
        self,
        server: Server,
        archive: Archive,
        *,
        after_ms: int,
        batch: int = 200,
        parallel: int = PARALLEL,
        clock: Callable[[], int] | None = None,
        fault: str | None = None,
        log: Any = None,
    ) -> None:
        self.server = server
        self.archive = archive
        self.after_ms = after_ms
        self.batch = batch
        self.parallel = parallel
        self.clock = clock or (lambda: int(time.time() * 1000))
        self.fault = fault_point(fault)
        self.token = secrets.token_hex(8)
        self.lease_ms = int(os.environ.get(LEASE_ENV, LEASE_MS))
        self.index: ShardedIndex = lobby_index(server, FINISHED)
        self.log = log
        self._delete = server.script(DELETE_LUA)
        self._release = server.script(RELEASE_LUA)
        self.ledger = LedgerMover(server, archive)

    async def run_pass(self, max_games: int | None = None) -> PassReport:
        """Look at every finished game of the live index once (at most ``max_games``), then at
        the live ledger's entries (:class:`~events.archive.ledger.LedgerMover`): pages of
        :data:`PAGE_BATCHES` batches, ``parallel`` of them in flight at once, so that one batch's
        reads from the live store overlap another's writes to the archive (the leases keep them
        apart, as between nodes), and a batch starts as soon as one ends rather than when the
        slowest of a round does."""
        report = PassReport()
        offset = 0
        while max_games is None or report.seen < max_games:
            size = self.batch * self.parallel * PAGE_BATCHES
            if max_games is not None:
                size = min(size, max_games - report.seen)
            page = await self.index.ranked(size, offset, highest_first=False)
            if not page:
                break
            for part in await self._archive_page(page):
                report.merge(part)
                offset += part.seen - part.archived - part.finished_off  # what stays listed is skipped next
            if len(page) < size:
                break
        report.ledger_moved = await self.ledger.run_pass()
        return report

    async def _archive_page(self, page: Sequence[str]) -> list[PassReport]:
        """The page's batches, at most ``parallel`` in flight; each batch's report."""
        slots = asyncio.Semaphore(self.parallel)

        async def one(game_ids: Sequence[str]) -> PassReport:
            async with slots:
                return await self.archive_batch(game_ids)

        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(page[start:start + self.batch]))
                         for start in range(0, len(page), self.batch)]
        except BaseExceptionGroup as failed:  # the callers expect the store's own errors
            raise failed.exceptions[0] from None
        return [task.result() for task in tasks]

    async def survey(self) -> PassReport:
        """What a pass would find, archiving nothing: every finished game still live, how many
        are waiting (all of them: ``waiting``) and the oldest one's last event time."""
        report = PassReport()
        offset = 0
        while True:
            page = await self.index.ranked(self.batch, offset, highest_first=False)
            for probe in await self._probe(page):
                if probe.status == FINISHED and probe.last_ms is not None:
                    report.seen += 1
                    report.waiting += 1
                    report.oldest_waiting_ms = min(report.oldest_waiting_ms or probe.last_ms, probe.last_ms)
            offset += len(page)
            if len(page) < self.batch:
                return report

    async def archive_batch(self, game_ids: Sequence[str]) -> PassReport:
        """Steps 1 to 7 of the module's docstring for these games."""
        report = PassReport(seen=len(game_ids))
        probes = await self._probe(game_ids)
        await self._finish_off(probes, report)
        due = self._due(probes, report)
        leased = await self._lease(due)
        report.taken += len(due) - len(leased)
        games = await self._read(leased)
        try:
            deleted = await self._move(games, report)
        except BaseException:
            await self._release_all(games)  # the next pass (this node's or another's) starts afresh
            raise
        await self._unlist([game.game_id for game in deleted])
        now = self.clock()
        report.archived += len(deleted)
        report.latencies += [(now - game.finished_ms) / 1000 for game in deleted]
        return report

    async def _unlist(self, game_ids: Sequence[str]) -> None:
        """Take the games out of the lobby's live index (their shards, and the unsharded set of
        earlier versions), one pipeline: the archive lists them now."""
        if not game_ids:
            return
        async with self.server.call(CALL_BUDGET_S), self.server.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.zrem(self.index.key_of(game_id), game_id)
                if self.index.legacy:
                    pipe.zrem(self.index.legacy, game_id)
            await pipe.execute()

    async def _move(self, games: Sequence[ArchivedGame], report: PassReport) -> list[ArchivedGame]:
        """Copy and check the copy (one transaction), delete (steps 4 to 6): the games deleted
        from the live store."""
        checked_ids = await self.archive.put(games, during=self._fault_coroutine("copy"))
        self._fault_at("copied")
        checked = [game for game in games if game.game_id in checked_ids]
        mismatched = [game for game in games if game.game_id not in checked_ids]
        for game in mismatched:
            self._warn("archive.copy_mismatch", game.game_id, version=game.version)
        await self._release_all(mismatched)
        deleted = await self._delete_all(checked)
        report.waiting += len(games) - len(deleted)
        return deleted

    async def _release_all(self, games: Sequence[ArchivedGame]) -> None:
        for game in games:
            with contextlib.suppress(StoreError):
                await self._release(keys=[archive_lease_key(game.game_id)], args=[self.token])

    async def _probe(self, game_ids: Sequence[str]) -> list[_Probe]:
        async with self.server.call(CALL_BUDGET_S), self.server.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hget(meta_key(game_id), "status")
                pipe.xrevrange(events_key(game_id), "+", "-", count=1)
            replies: list[Any] = await pipe.execute()
        probes = []
        for index, game_id in enumerate(game_ids):
            status, last = replies[2 * index], replies[2 * index + 1]
            probes.append(_Probe(game_id, None if status is None else msgpack.unpackb(status, raw=False),
                                 _event_ms(last[0][1][b"b"]) if last else None))
        return probes

    async def _finish_off(self, probes: Sequence[_Probe], report: PassReport) -> None:
        """Unlist the games whose keys are gone but whose copy the archive holds."""
        for probe in probes:
            if probe.status is None and probe.last_ms is None and await self.archive.game(probe.game_id) is not None:
                await self.index.remove(probe.game_id)
                report.finished_off += 1

    def _due(self, probes: Sequence[_Probe], report: PassReport) -> list[str]:
        cold_before = self.clock() - self.after_ms
        due = []
        for probe in probes:
            if probe.status != FINISHED or probe.last_ms is None:
                continue  # a stale index entry, or a game a killed pass finished off above
            if probe.last_ms <= cold_before:
                due.append(probe.game_id)
                continue
            report.waiting += 1
            report.oldest_waiting_ms = min(report.oldest_waiting_ms or probe.last_ms, probe.last_ms)
        return due

    async def _lease(self, game_ids: Sequence[str]) -> list[str]:
        async with self.server.call(CALL_BUDGET_S), self.server.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.set(archive_lease_key(game_id), self.token, nx=True, px=self.lease_ms)
            replies: list[Any] = await pipe.execute()
        return [game_id for game_id, taken in zip(game_ids, replies, strict=True) if taken]

    async def _read(self, game_ids: Sequence[str]) -> list[ArchivedGame]:
        records: list[ArchivedGame | None] = []
        for start in range(0, len(game_ids), READ_CHUNK):  # each pipeline well within a call's budget
            chunk = game_ids[start:start + READ_CHUNK]
            async with self.server.call(CALL_BUDGET_S):
                if self.server.cluster:
                    records += await self._read_cluster(chunk)
                else:
                    records += await self._read_streamed(chunk)
        for game_id, game in zip(game_ids, records, strict=True):
            if game is None:
                await self._release(keys=[archive_lease_key(game_id)], args=[self.token])
        return [game for game in records if game is not None]

    async def _read_streamed(self, game_ids: Sequence[str]) -> list[ArchivedGame | None]:
        """Each game's record from ``HGETALL`` meta, ``HGETALL`` cmds and ``XRANGE`` of its stream,
        sent as one pipeline on one connection and each game made a record as soon as its replies
        are in. The stream comes as the server's plain arrays (hiredis's lists; redis-py's parsing,
        a dict per entry, was a third of the pass's CPU, and a Lua script flattening them cost the
        server ~0.45 ms a game); held until the whole pipeline was read, those lists (two an entry)
        lived long enough to drive the garbage collector's full sweeps, a third of the node's CPU."""
        pool = self.server.redis.connection_pool
        connection = await pool.get_connection()
        try:
            commands = [command for game_id in game_ids for command in _read_commands(game_id)]
            await connection.send_packed_command(pack_commands(commands, connection.encoder.encode))
            records = []
            for game_id in game_ids:
                meta, cmds, stream = [await connection.read_response() for _ in range(3)]
                records.append(self._record(game_id, pairs(meta), pairs(cmds), stream))
        except BaseException:
            await connection.disconnect()  # replies may be left unread on it
            raise
        finally:
            await pool.release(connection)
        return records

    async def _read_cluster(self, game_ids: Sequence[str]) -> list[ArchivedGame | None]:
        """As :meth:`_read_streamed`, through redis-py's cluster pipeline (replies parsed, the
        stream a dict per entry): one pipeline, the records made once it is all in."""
        async with self.server.redis.pipeline(transaction=False) as pipe:
            for game_id in game_ids:
                pipe.hgetall(meta_key(game_id))
                pipe.hgetall(cmds_key(game_id))
                pipe.xrange(events_key(game_id), "-", "+")
            replies: list[Any] = await pipe.execute()
        return [self._record(game_id, pairs(replies[3 * n]), pairs(replies[3 * n + 1]), replies[3 * n + 2])
                for n, game_id in enumerate(game_ids)]

    def _record(
        self, game_id: str, meta: dict[bytes, bytes], cmds: dict[bytes, bytes], stream: Any
    ) -> ArchivedGame | None:
        entries = entries_of_reply(stream)
        if not meta or not entries:
            return None
        if not storable(entries):  # the archive could not give its hashes back byte for byte
            self._warn("archive.not_storable", game_id, version=entries[-1][0])
            return None
        # The live chain is not re-verified here: the copy is (step 5), against the live head.
        head = entries[-1][3]
        fields = {name.decode(): value for name, value in meta.items()}
        return ArchivedGame(
            game_id=game_id, game=str(msgpack.unpackb(fields.get("game", b"\xa1?"), raw=False)),
            status=FINISHED, score=_lobby_score(fields), finished_ms=_event_ms(entries[-1][1]),
            version=entries[-1][0], head=head, meta=fields,
            cmds={name.decode(): value for name, value in cmds.items()}, entries=entries,
        )

    async def _delete_all(self, games: Sequence[ArchivedGame]) -> list[ArchivedGame]:
        half = (len(games) + 1) // 2 if self.fault == "delete" else len(games)
        deleted = await self._delete_some(games[:half])
        self._fault_at("delete")
        return deleted + await self._delete_some(games[half:])

    async def _delete_some(self, games: Sequence[ArchivedGame]) -> list[ArchivedGame]:
        if not games:
            return []
        if self.server.cluster:  # redis-py's cluster pipeline runs no scripts: one call per game
            replies = list(await asyncio.gather(*(self._delete(keys=_game_keys(g.game_id), args=[self.token, g.version])
                                                  for g in games)))
        else:  # one pipeline of script calls (it loads the script first if the server lost it)
            async with self.server.call(CALL_BUDGET_S), self.server.redis.pipeline(transaction=False) as pipe:
                for game in games:
                    await self._delete.inner(keys=_game_keys(game.game_id), args=[self.token, game.version],
                                             client=pipe)
                replies = list(await pipe.execute())
        for game, reply in zip(games, replies, strict=True):
            if reply == -1:
                self._warn("archive.moved_on", game.game_id, version=game.version)
        return [game for game, reply in zip(games, replies, strict=True) if reply == 1]

    def _fault_at(self, point: str) -> None:
        kill_at(self.fault, point)

    def _fault_coroutine(self, point: str) -> Any:
        if self.fault != point:
            return None

        async def die() -> None:
            self._fault_at(point)

        return die

    def _warn(self, event: str, game_id: str, **fields: Any) -> None:
        if self.log is not None:
            self.log.warning(event, game_id=game_id, **fields)


def _read_commands(game_id: str) -> tuple[tuple[str, ...], ...]:
    return ("HGETALL", meta_key(game_id)), ("HGETALL", cmds_key(game_id)), ("XRANGE", events_key(game_id), "-", "+")


def _game_keys(game_id: str) -> list[str]:
    """What the delete script takes: the game's three keys and its lease."""
    return [meta_key(game_id), events_key(game_id), cmds_key(game_id), archive_lease_key(game_id)]


def _event_ms(body: bytes) -> int:
    return int(msgpack.unpackb(body, raw=False).get("ts", 0))


def _lobby_score(meta: dict[str, bytes]) -> float:
    """The lobby's score of a game (its creation time), from its stored lobby entry."""
    try:
        entry = json.loads(msgpack.unpackb(meta["lobby"], raw=False))
        return float(entry["created"])
    except (KeyError, ValueError, TypeError):
        return 0.0
