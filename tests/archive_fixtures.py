"""Fixtures of the archive tests (imported by their modules): each backend fresh per test, on the real databases.

``archive_url`` is parametrized: ``sqlite`` (a file in the test's folder, the embedded default)
and ``postgres`` (a schema of its own in the PostgreSQL at ``DONJON_TEST_POSTGRES_URL``, by
default the local one's database ``test``, dropped after the test).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

POSTGRES_URL = os.environ.get("DONJON_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture
def postgres_schema_url() -> Iterator[str]:
    """A PostgreSQL URL whose tables land in a fresh schema (``search_path``), dropped afterwards."""
    import asyncio

    import asyncpg

    schema = f"archive_{uuid.uuid4().hex[:12]}"

    async def run(statement: str) -> None:
        connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    try:
        asyncio.run(run(f"CREATE SCHEMA {schema}"))
    except OSError as exc:
        pytest.skip(f"no PostgreSQL at {POSTGRES_URL}: {exc}")
    try:
        yield f"{POSTGRES_URL}?search_path={schema}"
    finally:
        asyncio.run(run(f"DROP SCHEMA {schema} CASCADE"))


@pytest.fixture(params=["sqlite", "postgres"])
def archive_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's archive is: ``sqlite:///<a file of the test>``, or a PostgreSQL URL with its own schema."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'archive.sqlite3'}"
    return str(request.getfixturevalue("postgres_schema_url"))


@pytest.fixture
async def archive(archive_url: str) -> AsyncIterator[object]:
    from events.archive import open_archive

    backend = open_archive(archive_url.removeprefix("sqlite://"))
    await backend.migrate()
    try:
        yield backend
    finally:
        await backend.close()


@pytest.fixture
def own_valkey(tmp_path: Path) -> Iterator[str]:
    """A Valkey server of the test's own: a pass archives every finished game of its server,
    and the session's server holds other tests' games."""
    from events.embedded import EmbeddedServer

    server = EmbeddedServer(tmp_path / "valkey", fsync="everysec").start()
    try:
        yield server.url
    finally:
        server.stop()


async def finished_games(store: object, count: int, events: int = 6, ended_ms_ago: int = 10_000) -> list[str]:
    """``count`` finished games written straight to ``store`` as the service writes them (a
    SHA-256 chain, a meta with the lobby entry, filed as finished), each of ``events`` events."""
    import json
    import time

    from events.chain import genesis
    from events.envelope import NewEvent

    ids = []
    now = int(time.time() * 1000) - ended_ms_ago
    for n in range(count):
        game_id = f"arch-{uuid.uuid4().hex[:12]}"
        batch = [NewEvent("game.created", {"chain": "sha256", "seats": 2})]
        batch += [NewEvent("moved", {"n": i, "cell": i % 9}) for i in range(events - 2)]
        batch.append(NewEvent("game.finished", {"winner": n % 2}))
        await store.create_game(game_id, {"game": "tiny", "seats": 2})  # type: ignore[attr-defined]
        await store.append(  # type: ignore[attr-defined]
            game_id, batch, expected_version=0, command_id=f"c-{game_id}", actor=None, ts=now, link=genesis("sha256")
        )
        entry = {"id": game_id, "game": "tiny", "status": "finished", "version": events, "created": now - n}
        await store.set_status(  # type: ignore[attr-defined]
            game_id, "finished", now - n, version=events, fields={"lobby": json.dumps(entry)}
        )
        ids.append(game_id)
    return ids


def export_content(export: bytes | dict[str, Any]) -> bytes:
    """An export without the moment it was made (``exported_at``, and the signature's value over
    it): what archiving must leave byte for byte as it was. Two exports of one game made at two
    times differ there and nowhere else."""
    body = json.loads(export) if isinstance(export, bytes) else dict(export)
    body.pop("exported_at", None)
    body["signature"] = {k: v for k, v in body.get("signature", {}).items() if k != "value"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
