"""The store that serves archived games as if they were live: :class:`ArchivingStore`.

It is the Redis :class:`~events.store.EventStore` (so everything that names it, the app's key,
the tests, the bench, keeps working) with an archive attached. Reads go to the live store
first and, only when it holds no key of the game, to the archive, which returns the very bytes
the stream held: the same envelopes, chain, metadata and command ids. The lobby's finished list
merges the live index with the archive's, paged in the archive by its lobby index.

A write to an archived game (a rematch's link appended to it, a seat's presence stamp) first
puts the game back into the live store whole (:meth:`ArchivingStore.restore`, one script that
does nothing if any key of it exists); the archiver takes it again once it is cold, replacing
the archived copy.

A game ``donjon archive prune`` took (its events deleted, its signed export written elsewhere)
keeps its record: its metadata and lobby listing are served as before, but every read of its
events and every write to it raises :class:`~events.archive.base.GamePruned`, naming where the
export is, rather than answering an empty or unknown game.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

import msgpack

from events import codec
from events.archive.base import Archive, ArchivedGame
from events.envelope import GENESIS_HASH, AppendResult, Envelope, NewEvent
from events.errors import ConflictError, UnknownGame
from events.keys import cmds_key, events_key, meta_key
from events.store import EventStore

__all__ = ["ArchivingStore"]

FINISHED = "finished"

# KEYS: meta, events, cmds. ARGV: the number of meta fields, their name/value pairs, the number
# of command ids, their pairs, then (version, body, prev, hash) per event. Nothing if any exists.
RESTORE_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 1 or redis.call("XLEN", KEYS[2]) > 0 then return 0 end
local i = 1
for _ = 1, tonumber(ARGV[i]) do redis.call("HSET", KEYS[1], ARGV[i + 1], ARGV[i + 2]); i = i + 2 end
i = i + 1
for _ = 1, tonumber(ARGV[i]) do redis.call("HSET", KEYS[3], ARGV[i + 1], ARGV[i + 2]); i = i + 2 end
i = i + 1
while i <= #ARGV do
  redis.call("XADD", KEYS[2], ARGV[i] .. "-0", "b", ARGV[i + 1], "p", ARGV[i + 2], "h", ARGV[i + 3])
  i = i + 4
end
return 1
"""


class ArchivingStore(EventStore):
    """An :class:`EventStore` that also reads (and restores) the games of an archive."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.archive: Archive | None = None
        """The archive attached (``None``: a plain live store)."""
        self._restore_script = self.server.script(RESTORE_LUA)

    def attach(self, archive: Archive | None) -> None:
        """Serve the archive's games, and its ledger entries, from now on (``None``: stop)."""
        self.archive = archive
        self.ledger.archive = archive

    async def _is_live(self, game_id: str) -> bool:
        async with self.server.call():
            return bool(await self.server.redis.exists(meta_key(game_id), events_key(game_id)))

    async def archived(self, game_id: str) -> ArchivedGame | None:
        """The archived record (no events) of a game the live store holds nothing of."""
        if self.archive is None or await self._is_live(game_id):
            return None
        return await self.archive.game(game_id)

    async def _refuse_if_pruned(self, game_id: str) -> None:
        """:class:`GamePruned` when the archive kept only the game's row: an empty read of an
        archived game is then not "no events" but "its events are in its export"."""
        if self.archive is not None and (record := await self.archive.game(game_id)) is not None:
            record.check_not_pruned()

    # --- reads -----------------------------------------------------------------------------

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        meta = await super().get_meta(game_id)
        if meta is not None or self.archive is None:
            return meta
        archived = await self.archive.game(game_id)
        if archived is None:
            return None
        return {name: msgpack.unpackb(value, raw=False) for name, value in archived.meta.items()}

    async def head(self, game_id: str) -> tuple[int, str]:
        found = await super().head(game_id)
        if found[0] or self.archive is None:
            return found
        archived = await self.archived(game_id)
        if archived is None:
            return 0, GENESIS_HASH
        archived.check_not_pruned()
        return archived.version, archived.head

    async def read(
        self, game_id: str, from_version: int = 1, to_version: int | None = None, *, upcast: bool = True
    ) -> list[Envelope]:
        found = await super().read(game_id, from_version, to_version, upcast=upcast)
        if found or self.archive is None or await self._is_live(game_id):
            return found
        upcasters = self._upcasters if upcast else None
        entries = await self.archive.entries(game_id, from_version, to_version)
        if not entries:
            await self._refuse_if_pruned(game_id)
        return [codec.decode_body(body, prev, hash_, upcasters=upcasters) for _, body, prev, hash_ in entries]

    async def raw_entries(self, game_id: str) -> list[tuple[int, bytes, str, str]]:
        found = await super().raw_entries(game_id)
        if found or self.archive is None or await self._is_live(game_id):
            return found
        entries = await self.archive.entries(game_id)
        if not entries:
            await self._refuse_if_pruned(game_id)
        return entries

    async def command_result(self, game_id: str, command_id: str) -> AppendResult | None:
        found = await super().command_result(game_id, command_id)
        if found is not None or self.archive is None:
            return found
        archived = await self.archived(game_id)
        done = None if archived is None else archived.cmds.get(command_id)
        if done is None:
            return None
        first, _, last = done.decode().partition(",")
        return AppendResult(int(first), int(last), duplicate=True)

    # --- the lobby -------------------------------------------------------------------------

    async def is_filed(self, game_id: str, status: str) -> bool:
        if await super().is_filed(game_id, status):
            return True
        if status != FINISHED or self.archive is None:
            return False
        archived = await self.archived(game_id)
        return archived is not None and archived.status == status

    async def list_games(
        self, status: str, limit: int = 50, offset: int = 0, *, newest_first: bool = True
    ) -> list[str]:
        """The live index and the archive merged in the lobby's order (a game in both once)."""
        if status != FINISHED or self.archive is None:
            return await super().list_games(status, limit, offset, newest_first=newest_first)
        wanted = offset + limit
        live = await self._lobby(status).ranked_scored(wanted, 0, highest_first=newest_first)
        archived = await self.archive.listed(status, wanted, 0, newest_first)
        merged = dict(archived)
        merged.update(live)
        ranking = sorted(merged.items(), key=lambda item: (item[1], item[0]), reverse=newest_first)
        return [game_id for game_id, _ in ranking[offset:wanted]]

    async def count_games(self, status: str) -> int:
        live = await super().count_games(status)
        if status != FINISHED or self.archive is None:
            return live
        return live + (await self.archive.counts()).games

    # --- writes to an archived game put it back first --------------------------------------

    async def restore(self, game_id: str) -> bool:
        """Put an archived game back into the live store whole (and into the lobby's live index);
        False when the archive does not hold it or the live store already holds some of it."""
        archived = await self.archived(game_id)
        if archived is None or self.archive is None:
            return False
        archived.check_not_pruned()  # its events are in its export only: nothing to put back
        entries = await self.archive.entries(game_id)
        if not entries:  # pruned since its record was read: never put back a game without its events
            await self._refuse_if_pruned(game_id)
            return False
        args: list[Any] = [len(archived.meta)]
        for name, value in archived.meta.items():
            args += [name, value]
        args.append(len(archived.cmds))
        for name, value in archived.cmds.items():
            args += [name, value]
        for version, body, prev, hash_ in entries:
            args += [version, body, prev, hash_]
        restored = bool(await self._restore_script(
            keys=[meta_key(game_id), events_key(game_id), cmds_key(game_id)], args=args
        ))
        if restored:
            await self._lobby(archived.status).add(game_id, archived.score)
        return restored

    async def append(
        self,
        game_id: str,
        events: Sequence[NewEvent],
        *,
        expected_version: int,
        command_id: str | None,
        actor: int | None,
        command: dict[str, Any] | None = None,
        ts: int,
        link: str | None = None,
    ) -> AppendResult:
        def again() -> Coroutine[Any, Any, AppendResult]:
            return super(ArchivingStore, self).append(
                game_id, events, expected_version=expected_version, command_id=command_id, actor=actor,
                command=command, ts=ts, link=link,
            )

        try:
            return await again()
        except ConflictError as exc:
            if exc.actual != 0 or expected_version == 0 or not await self.restore(game_id):
                raise
        return await again()

    async def update_meta(self, game_id: str, fields: Mapping[str, Any]) -> None:
        try:
            await super().update_meta(game_id, fields)
        except UnknownGame:
            if not await self.restore(game_id):
                raise
            await super().update_meta(game_id, fields)

    async def set_status(
        self, game_id: str, status: str, score: float, *, version: int = 0, fields: Mapping[str, Any] | None = None,
        only_live: bool = False,
    ) -> bool:
        if self.archive is not None and not only_live:
            try:  # a live game, most often: filed in one call, without asking first
                return await super().set_status(game_id, status, score, version=version, fields=fields, only_live=True)
            except UnknownGame:
                await self.restore(game_id)  # never file a game whose keys are in the archive only
        return await super().set_status(game_id, status, score, version=version, fields=fields, only_live=only_live)
