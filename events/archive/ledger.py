"""The public ledger's entries leave the live store once their games have (issue 23).

The ledger (:mod:`events.ledger`) holds an entry per game ever created, ~360 bytes of Valkey
each, forever; a pass of :class:`LedgerMover` moves to the archive's ``ledger`` table every entry
whose game is no longer in the live store (archived, or gone), except the head, which the
append script reads and so always stays. In this order, so that a kill at any step leaves each
entry in the live ledger, in the archive, or in both (reads merge the two, an entry in both once):

1. **Scan** the live stream, a page at a time, and ask the live store (one pipeline) which
   games of the page still have keys, and where the game index points each game.
2. **Copy** the entries of the games gone, exactly as stored (canonical JSON, both hashes), in
   one transaction; a position the archive holds already is kept (an entry never changes, and
   two nodes may move the same one: no lease is needed).
3. **Check the copy**: read the rows back; only an entry whose archived row is identical to the
   live one goes on.
4. **Delete** them from the stream and the game index with one script, which keeps the head
   whatever it was told.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from events.archive.base import Archive, LedgerRow
from events.keys import events_key, meta_key
from events.ledger import games_key, ledger_key
from events.server import Server

__all__ = ["LedgerMover"]

PAGE = 500
"""Live entries looked at per pipeline."""
CALL_BUDGET_S = 15.0

# KEYS: the stream, the game index. ARGV: position, game id, indexed (1/0), ... per entry.
# Never the last entry (the head); the index field only while it still names that position.
DELETE_LUA = """#!lua
local last = redis.call("XREVRANGE", KEYS[1], "+", "-", "COUNT", 1)
if not last[1] then return 0 end
local head = tonumber(string.match(last[1][1], "^(%d+)"))
local deleted = 0
for i = 1, #ARGV, 3 do
  if tonumber(ARGV[i]) < head then
    deleted = deleted + redis.call("XDEL", KEYS[1], ARGV[i] .. "-0")
    if ARGV[i + 2] == "1" and redis.call("HGET", KEYS[2], ARGV[i + 1]) == ARGV[i] then
      redis.call("HDEL", KEYS[2], ARGV[i + 1])
    end
  end
end
return deleted
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class LedgerMover:
    """Moves the ledger entries of games no longer live from ``server`` to ``archive``."""

    def __init__(self, server: Server, archive: Archive, *, page: int = PAGE) -> None:
        self.server = server
        self.archive = archive
        self.page = page
        self._delete = server.script(DELETE_LUA)

    async def run_pass(self) -> int:
        """Steps 1 to 4 over the whole live ledger; how many entries left it."""
        moved = 0
        after = "-"
        while True:
            async with self.server.call(CALL_BUDGET_S):
                rows = await self.server.redis.xrange(ledger_key(), after, "+", count=self.page)
                head = await self.server.redis.xrevrange(ledger_key(), "+", "-", count=1)
            if not rows or not head:
                return moved
            head_position = _position(head[0][0])
            movable = await self._movable([row for row in rows if _position(row[0]) < head_position])
            moved += await self._move(movable)
            if len(rows) < self.page:
                return moved
            after = f"({_text(rows[-1][0])}"

    async def _movable(self, rows: Sequence[Any]) -> list[LedgerRow]:
        """The archive's rows of the entries among ``rows`` whose games have no live keys."""
        if not rows:
            return []
        fields = [{_text(name): _text(value) for name, value in row[1].items()} for row in rows]
        ids = [str(_game_of(entry["entry"])) for entry in fields]
        async with self.server.call(CALL_BUDGET_S), self.server.redis.pipeline(transaction=False) as pipe:
            for game_id in ids:
                pipe.exists(meta_key(game_id), events_key(game_id))
                pipe.hget(games_key(), game_id)
            replies: list[Any] = await pipe.execute()
        movable = []
        for index, (row, entry, game_id) in enumerate(zip(rows, fields, ids, strict=True)):
            live, indexed = replies[2 * index], replies[2 * index + 1]
            if live:
                continue
            position = _position(row[0])
            movable.append((position, game_id, entry["entry"], entry["prev_hash"], entry["hash"],
                            indexed is not None and int(_text(indexed)) == position))
        return movable

    async def _move(self, rows: Sequence[LedgerRow]) -> int:
        """Copy, check, delete (steps 2 to 4): how many entries the live ledger lost."""
        if not rows:
            return 0
        await self.archive.put_ledger(rows)
        archived = set(await self.archive.ledger_rows_at([row[0] for row in rows]))
        checked = [row for row in rows if row in archived]
        if not checked:
            return 0
        args: list[Any] = []
        for position, game_id, *_, indexed in checked:
            args += [position, game_id, int(indexed)]
        return int(await self._delete(keys=[ledger_key(), games_key()], args=args))


def _position(stream_id: Any) -> int:
    return int(_text(stream_id).split("-")[0])


def _game_of(entry_json: str) -> str:
    return str(json.loads(entry_json)["id"])
