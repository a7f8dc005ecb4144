"""Appends made in the same event-loop turn, sent to the server together as one pipeline.

Every append is one ``EVALSHA`` of ``append.lua``. Sent one by one, each call pays redis-py's
per-call machinery (taking a pooled connection, the retry wrapper, the command wrappers): with
100 busy games that was about 100 µs of CPU per append, five times what the same call costs in a
pipeline. :class:`AppendBatcher` queues the script calls made while the loop runs and, one turn
later, sends them as one non-transactional pipeline (one connection, one write, one read of all
the replies); each call still gets its own reply or its own error.

What a caller sees is what it would see sending its call alone:

* **Each script stays atomic on its own.** A pipeline is not ``MULTI``: the server runs the
  calls one after the other, each whole, and a batch may apply some appends and refuse others.
* **Order.** Calls go to the server in the order they were made, so of two appends to one game
  in one batch the first runs first and the second sees its effect (a conflict, a duplicate).
* **Failures reach every waiter.** When the pipeline fails (connection refused or reset, a
  timeout), every call of the batch gets the error. redis-py's retry may send the whole batch
  again; the script's command-id check makes that safe (an applied append comes back as a
  duplicate, as a lone retried call does).
* **NOSCRIPT.** When the server's script cache was flushed (or another server answers now), the
  calls that got ``NOSCRIPT`` ran nothing: the script is loaded and those calls are sent again,
  in their order, once.
* **A cap.** At most ``max_batch`` calls go in one pipeline; a longer burst is cut into several
  batches, sent at once on separate connections. Their relative order on the server is then
  that of independent calls, which the script's expected-version check makes safe.
* **Cancellation.** A caller cancelled before its batch is sent is left out of it; once sent,
  the call runs (as a lone call whose caller is cancelled after writing it does).
* **A budget.** With ``timeout``, a batch that has no replies after that many seconds (a hung
  server) fails every call of it, as a timeout; whether a call that was sent ran is then
  unknown, as for a lone call that timed out. One deadline per batch, not per call.

On one server (not a cluster) a batch goes straight to one of the client's pooled connections:
the calls packed into one write, then one reply read per call, inside the connection's own retry
(``Retry``: a connection lost is reconnected and the whole batch sent again, as redis-py's
pipeline does) and with no socket timeout of its own per read when the batch has its budget.
That skips the layers redis-py puts around each command and pipeline (the command stack, the
observability hooks, a timeout context per reply), about a third of the client's CPU per
append, with the same replies and errors. On a cluster a batch is a redis-py pipeline (which
routes it by slot); a batch of one there is a plain script call.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as rexc
from redis.commands.core import AsyncScript

__all__ = ["AppendBatcher", "BatchStats", "NotReplicated", "pack_commands"]


class NotReplicated(rexc.TimeoutError):
    """The server took the batch but fewer replicas than asked confirmed it in time (``WAIT``):
    no ack may say it is safe from a failover. Each waiter gets it as
    :class:`~events.errors.StoreUnavailable` and resends with the same command id."""


def pack_commands(commands: Sequence[Sequence[Any]], encode: Callable[[Any], Any]) -> bytes:
    """``commands`` in the protocol's bytes, as redis-py's ``Connection.pack_commands`` makes
    them, in one pass and one buffer: about a third of its CPU for an append's arguments (a
    body of a few hundred bytes, keys, hashes), which it copies through chunks sized for large
    values. bytes, str (UTF-8) and int are written here; anything else goes through ``encode``,
    the connection's encoder, which writes a float as redis-py does and refuses a bool."""
    out: list[bytes] = []
    for command in commands:
        out.append(b"*%d\r\n" % len(command))
        for arg in command:
            kind = type(arg)
            if kind is bytes:
                data = arg
            elif kind is str:
                data = arg.encode()
            elif kind is int:
                data = b"%d" % arg
            else:
                data = encode(arg)
            out.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(out)


@dataclass(frozen=True, slots=True)
class BatchStats:
    """What a batcher has sent: ``batches`` pipelines (or lone calls) carrying ``calls`` calls."""

    batches: int = 0
    calls: int = 0
    largest: int = 0


@dataclass(slots=True)
class _Call:
    keys: Sequence[Any]
    args: Sequence[Any]
    waiter: asyncio.Future[Any] = field(repr=False)


class AppendBatcher:
    """Runs ``script`` for many callers, one pipeline per event-loop turn.

    ``translate`` turns a redis-py or socket exception into the one each waiter gets (a fresh
    one per waiter); ``timeout`` is each batch's budget (see the module). Use it from one event
    loop.
    """

    def __init__(
        self,
        redis: aioredis.Redis | aioredis.RedisCluster,
        script: AsyncScript,
        *,
        max_batch: int,
        translate: Callable[[BaseException], BaseException],
        timeout: float | None = None,
        replicas: int = 0,
        replica_timeout_ms: int = 1000,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self._redis = redis
        self._script = script
        self._max_batch = max_batch
        self._translate = translate
        self._timeout = timeout
        self.replicas = replicas
        """Replicas that must confirm each batch (``WAIT``) before its replies count; 0: none."""
        self.replica_timeout_ms = replica_timeout_ms
        self._queue: list[_Call] = []
        self._sending: set[asyncio.Task[None]] = set()
        self._stats = BatchStats()

    @property
    def stats(self) -> BatchStats:
        return self._stats

    async def call(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """The script's reply to ``keys``/``args``, sent with the other calls of this loop turn."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Any] = loop.create_future()
        if not self._queue:
            loop.call_soon(self._send_queued)
        self._queue.append(_Call(keys, args, waiter))
        if len(self._queue) >= self._max_batch:
            self._send_queued()
        return await waiter

    async def drain(self) -> None:
        """Send what is queued and wait until every batch has its replies (before closing the client)."""
        self._send_queued()
        while self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def _send_queued(self) -> None:
        batch, self._queue = self._queue, []
        if batch:
            task = asyncio.get_running_loop().create_task(self._send(batch))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, batch: list[_Call]) -> None:
        batch = [call for call in batch if not call.waiter.done()]  # cancelled callers
        if not batch:
            return
        stats = self._stats
        self._stats = BatchStats(stats.batches + 1, stats.calls + len(batch), max(stats.largest, len(batch)))
        try:
            async with asyncio.timeout(self._timeout):
                replies = await self._run(batch)
        except TimeoutError as exc:  # the budget ran out (redis-py raises timeouts of its own class)
            budget_out = TimeoutError(f"no reply within {self._timeout:g} s") if self._timeout is not None else exc
            replies = [budget_out] * len(batch)
        except asyncio.CancelledError:
            for call in batch:
                call.waiter.cancel()
            raise
        except Exception as exc:  # the whole batch failed: every waiter gets its own copy
            replies = [exc] * len(batch)
        for call, reply in zip(batch, replies):
            if call.waiter.done():
                continue
            if isinstance(reply, Exception):
                call.waiter.set_exception(self._translate(reply))
            else:
                call.waiter.set_result(reply)

    async def _run(self, batch: list[_Call]) -> list[Any]:
        """One reply per call: the script's result, or the exception that call got."""
        pool = getattr(self._redis, "connection_pool", None)  # one server; a cluster has a pool per node
        if pool is None and len(batch) == 1 and not self.replicas:  # AsyncScript itself reloads a flushed script
            return [await self._script(keys=batch[0].keys, args=batch[0].args)]
        send = self._pipeline if pool is None else functools.partial(self._exchange, pool)
        replies = await send(batch)
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, rexc.NoScriptError)]
        if missing:
            try:
                self._script.sha = await self._redis.script_load(self._script.script)
                again = await send([batch[i] for i in missing])
            except Exception as exc:  # only the calls sent again failed; the others keep their replies
                again = [exc] * len(missing)
            for i, reply in zip(missing, again):
                replies[i] = reply
        return replies

    async def _exchange(self, pool: Any, calls: list[_Call]) -> list[Any]:  # redis-py leaves the pool untyped
        """The calls on one pooled connection of a one-server client: one write, one reply read
        per call (an error reply is that call's exception), retried as the connection's ``Retry``
        says when the connection is lost."""
        sha = self._script.sha
        # The batch's own budget bounds the reads; without one, the socket timeout does (None).
        read_timeout = math.inf if self._timeout is not None else None
        connection = await pool.get_connection()
        try:
            commands: list[tuple[Any, ...]] = [("EVALSHA", sha, len(c.keys), *c.keys, *c.args) for c in calls]
            if self.replicas:  # on the same connection, after the batch: WAIT counts its writes
                commands.append(("WAIT", self.replicas, self.replica_timeout_ms))
            packed = pack_commands(commands, connection.encoder.encode)

            async def send_and_read() -> list[Any]:
                await connection.send_packed_command(packed, check_health=False)
                replies: list[Any] = []
                for _ in commands:
                    try:
                        replies.append(await connection.read_response(timeout=read_timeout))
                    except rexc.ResponseError as exc:  # this call's error; the others keep their replies
                        replies.append(exc)
                return replies if not self.replicas else self._confirmed(replies[:-1], replies[-1])

            async def reconnect(_error: Exception) -> None:
                await connection.disconnect()

            replies: list[Any] = await connection.retry.call_with_retry(send_and_read, reconnect)
            return replies
        finally:
            await pool.release(connection)

    async def _pipeline(self, calls: list[_Call]) -> list[Any]:
        if self.replicas:
            return await self._confirmed_pipeline(calls)
        async with self._redis.pipeline(transaction=False) as pipe:
            for call in calls:
                pipe.execute_command("EVALSHA", self._script.sha, len(call.keys), *call.keys, *call.args)
            return await pipe.execute(raise_on_error=False)

    async def _confirmed_pipeline(self, calls: list[_Call]) -> list[Any]:
        """The cluster's pipeline with a ``WAIT`` after the calls of each master, which redis-py
        sends on that master's one connection after them. A call that the pipeline had to send
        elsewhere (its slot moved meanwhile) was not covered by that WAIT: it fails as
        :class:`NotReplicated`, and its resend (a duplicate, written again) is confirmed where
        the slot is now."""
        cluster: Any = self._redis  # redis-py's RedisCluster: its node lookups are untyped here
        nodes = [cluster.get_node_from_key(call.keys[0]) for call in calls]
        by_node: dict[str, list[int]] = {}
        for index, node in enumerate(nodes):
            by_node.setdefault(node.name, []).append(index)
        async with self._redis.pipeline(transaction=False) as pipe:
            for call in calls:
                pipe.execute_command("EVALSHA", self._script.sha, len(call.keys), *call.keys, *call.args)
            for indexes in by_node.values():
                pipe.execute_command("WAIT", self.replicas, self.replica_timeout_ms, target_nodes=nodes[indexes[0]])
            replies = await pipe.execute(raise_on_error=False)
        confirmed = dict(zip(by_node, replies[len(calls):]))
        result = list(replies[: len(calls)])
        for index, (call, node) in enumerate(zip(calls, nodes)):
            moved = cluster.get_node_from_key(call.keys[0]).name != node.name
            if moved:
                result[index] = NotReplicated("the slot moved during the append: resend it")
            else:
                result[index] = self._confirmed([result[index]], confirmed[node.name])[0]
        return result

    def _confirmed(self, replies: list[Any], waited: Any) -> list[Any]:
        """``replies`` as they are when ``WAIT`` says enough replicas have them, else each call
        that the server ran (an error reply ran nothing) fails as :class:`NotReplicated`."""
        if isinstance(waited, int) and waited >= self.replicas:
            return replies
        why = NotReplicated(
            f"the append is on {waited if isinstance(waited, int) else 'no'} of {self.replicas} replicas"
            f" after {self.replica_timeout_ms} ms"
        )
        return [reply if isinstance(reply, Exception) else why for reply in replies]
