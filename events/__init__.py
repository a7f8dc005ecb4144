"""The event store: msgpack envelopes in one Redis stream per game, appended atomically.

- :mod:`events.protocol` — :class:`Store` and its indexes' protocols: what the service relies on
- :mod:`events.envelope` — :class:`Envelope` (a stored event), :class:`NewEvent` (one to append), :class:`AppendResult`
- :mod:`events.codec` — the only encoding of events to bytes and back; the upcaster registry
- :mod:`events.chain` — the hash chain and how to verify an exported log
- :mod:`events.store` — :class:`EventStore`, the Redis implementation: append, read, meta, lobby (a package by job)
- :mod:`events.keys` — the Redis key and channel names of a game and of the lobby
- :mod:`events.server` — :class:`Server`: the client, its call budget, redis-py's errors made the store's
- :mod:`events.sharded` — :class:`ShardedIndex`: a sorted set in shards (the lobby, due bots, deadlines)
- :mod:`events.errors` — ``ConflictError``, ``StoreUnavailable`` and the rest
- :mod:`events.due` — :class:`DueBots`: the due-bots index, the games whose bot owes a move
- :mod:`events.deadlines` — :class:`Deadlines`: the turn clocks' next deadlines
- :mod:`events.feed` — :class:`GameFeed`: the append notices of the games a node watches
- :mod:`events.embedded` — :class:`EmbeddedServer`, Valkey with append-only persistence

docs/store.md is the reference.
"""
