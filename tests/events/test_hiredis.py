"""The store's connections parse replies with hiredis (C), not redis-py's Python parser: hiredis
is a dependency for that alone, and redis-py takes it silently, or silently does not."""

from __future__ import annotations

from redis._parsers import _AsyncHiredisParser

from events.store import EventStore


async def test_the_store_parses_replies_with_hiredis(embedded_redis_url: str) -> None:
    store = await EventStore.connect(embedded_redis_url)
    try:
        assert await store.redis.ping()
        connection = await store.redis.connection_pool.get_connection()
        try:
            assert isinstance(connection._parser, _AsyncHiredisParser)
        finally:
            await store.redis.connection_pool.release(connection)
    finally:
        await store.close()
