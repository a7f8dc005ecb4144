"""Fixtures of the archive tests (imported by their modules): each backend fresh per test, on the real databases.

``archive_url`` is parametrized: ``sqlite`` (a file in the test's folder, the embedded default)
and ``postgres`` (a schema of its own in the PostgreSQL at ``DONJON_TEST_POSTGRES_URL``, by
default the local one's database ``test``, dropped after the test).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

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
