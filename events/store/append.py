"""The only write to a stream: one run of ``events/append.lua`` per append, all of it or nothing.

The script checks the command id, then the expected version, then appends the whole batch with
its hash chain and announces it (docs/store.md, "Appending"). The appends made in one event-loop
turn travel together as one pipeline (:mod:`events.batcher`), each keeping its own result.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any

from events import codec
from events.batcher import AppendBatcher
from events.chain import link_hash
from events.envelope import AppendResult, NewEvent
from events.errors import ChainBroken, ConflictError
from events.keys import cmds_key, events_key, live_channel
from events.server import Script, Server
from events.store.replies import as_bytes, outcome

__all__ = ["APPEND_LUA", "Appending", "sha256_links"]

APPEND_LUA = resources.files("events").joinpath("append.lua").read_text(encoding="utf-8")
"""The append script (``events/append.lua``, shipped as package data)."""


def sha256_links(prev: str, bodies: Sequence[bytes]) -> str:
    """The append script's ARGV[4] for a SHA-256 game: ``prev`` then each body's chain hash."""
    links = [prev]
    for body in bodies:
        links.append(link_hash(links[-1], body, "sha256"))
    return "".join(links)


def _check(events: Sequence[NewEvent], expected_version: int, command_id: str | None) -> None:
    if not events:
        raise ValueError("append needs at least one event")
    if not isinstance(expected_version, int) or expected_version < 0:
        raise ValueError(f"expected_version must be an int >= 0, got {expected_version!r}")
    if command_id == "":
        raise ValueError("command_id must be None or a non-empty str")


class Appending:
    """The appending part of :class:`events.store.EventStore`."""

    server: Server
    _append_script: Script
    _batcher: AppendBatcher | None

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
        """Append ``events`` as versions ``expected_version + 1 ...``, all of them or none.

        If ``command_id`` was applied to this game already, nothing is appended and the earlier
        result comes back with ``duplicate=True`` (whatever ``expected_version`` says now).
        Otherwise :class:`ConflictError` when the stream is not at ``expected_version``.
        ``command`` goes on the first event only. Events may be :class:`NewEvent` or anything
        with ``type`` and ``payload`` attributes (and optionally ``schema``), such as
        :class:`games.base.Event`. :class:`~events.errors.InvalidEvent` (before anything is sent)
        for a payload that is not msgpack/JSON-safe.

        A retried call whose first try was applied but whose reply was lost (a connection reset)
        comes back as a duplicate with a ``command_id``, and as a conflict without one. All of
        this holds the same when the append travels in a batch with others (see the class).

        ``link`` is the chain hash of the event at ``expected_version`` in a SHA-256 game (its
        genesis for a new one): the batch is hashed here and the script refuses it, with
        :class:`~events.errors.ChainBroken`, unless ``link`` is the stored head. ``None``: a
        SHA-1 game, hashed by the script.
        """
        _check(events, expected_version, command_id)
        bodies = [
            codec.encode_new(
                game_id, expected_version + i + 1, event,
                command_id=command_id, actor=actor, ts=ts, command=command if i == 0 else None,
            )
            for i, event in enumerate(events)
        ]
        links = "" if link is None else sha256_links(link, bodies)
        keys = [events_key(game_id), cmds_key(game_id)]
        args: list[int | str | bytes] = [expected_version, command_id or "", live_channel(game_id), links, *bodies]
        if self._batcher is not None:
            reply = await self._batcher.call(keys, args)  # bounded and translated by the batcher
        else:
            reply = await self._append_script(keys=keys, args=args)
        return _result(game_id, expected_version, link, links, reply)

    async def command_result(self, game_id: str, command_id: str) -> AppendResult | None:
        """What an earlier append with ``command_id`` produced (``duplicate=True``), or ``None``.

        The same answer a repeated :meth:`append` would give, without deciding the command again.
        """
        async with self.server.call():
            done = await self.server.redis.hget(cmds_key(game_id), command_id)
        if done is None:
            return None
        first, _, last = as_bytes(done).decode().partition(",")
        return AppendResult(int(first), int(last), duplicate=True)


def _result(game_id: str, expected_version: int, link: str | None, links: str, reply: Any) -> AppendResult:
    """The append script's reply as the store answers it: a result, or the refusal raised."""
    said = outcome(reply)
    if said == "conflict":
        raise ConflictError(game_id, expected_version, int(reply[1]))
    if said == "unlinked":
        why = "a SHA-256 game's batch needs its link" if link is None else f"{link} is not the stored head"
        raise ChainBroken(game_id, expected_version + 1, f"the batch does not link: {why}")
    head = links[-64:] if links and said == "ok" else ""
    return AppendResult(int(reply[1]), int(reply[2]), duplicate=said == "dup", head=head)
