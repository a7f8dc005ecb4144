"""The event store: msgpack envelopes in one Redis stream per game, appended atomically.

- :mod:`events.envelope` — :class:`Envelope` (a stored event) and :class:`NewEvent` (one to append)
- :mod:`events.codec` — the only encoding of events to bytes and back; the upcaster registry
- :mod:`events.chain` — the hash chain and how to verify an exported log
- :mod:`events.store` — :class:`EventStore`: append, read, subscribe, read_many, verify_chain
- :mod:`events.errors` — ``ConflictError``, ``StoreUnavailable`` and the rest
- :mod:`events.due` — :class:`DueBots`: the due-bots index, the games whose bot owes a move
- :mod:`events.embedded` — :class:`EmbeddedServer`, Valkey with append-only persistence

docs/store.md is the reference.
"""
