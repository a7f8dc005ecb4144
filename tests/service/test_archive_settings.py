"""The archive's settings, a node refusing an archive at another schema version, and its metrics."""

from __future__ import annotations

import pytest
from aiohttp import web

from events.archive import ArchiveSchemaError
from events.archive.archiver import PassReport
from service.ops.metrics import Metrics
from service.ops.settings import Secret, Settings, SettingsError
from service.run.app import create_app
from service.run.archiving import archive_location, record_pass
from tests.archive_fixtures import postgres_schema_url  # noqa: F401
from tests.service.conftest import ENGINES, settings_for


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("DONJON_ARCHIVE", "maybe", "DONJON_ARCHIVE='maybe' is not valid: expected on or off"),
    ("DONJON_ARCHIVE_URL", "mysql://x/y", "DONJON_ARCHIVE_URL is not valid: the URL must start with postgresql://"),
    ("DONJON_ARCHIVE_AFTER_S", "-1", "DONJON_ARCHIVE_AFTER_S must be 0 or more"),
    ("DONJON_ARCHIVE_EVERY_S", "0", "DONJON_ARCHIVE_EVERY_S must be at least 1"),
])
def test_a_bad_archive_setting_stops_the_start_naming_it(variable, value, message):
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        Settings.from_env({variable: value})


def test_where_the_archive_is(tmp_path):
    assert archive_location(Settings(data_dir=tmp_path)) == tmp_path / "archive.sqlite3"  # the embedded default
    assert archive_location(Settings(data_dir=tmp_path, archive=False)) is None
    shared = Settings(redis_url=Secret("redis://127.0.0.1:6379/0"))
    assert archive_location(shared) is None  # each node would keep its own file
    assert archive_location(shared.with_(archive_url=Secret("sqlite:///srv/a.db"))) == __import__("pathlib").Path(
        "/srv/a.db")
    assert archive_location(shared.with_(archive_url=Secret("postgresql://h/db"))) == "postgresql://h/db"


@pytest.mark.allow_error_logs  # the node logs why it refuses (archive.schema_mismatch)
async def test_a_node_refuses_a_postgres_archive_not_migrated(embedded_redis_url, postgres_schema_url):  # noqa: F811
    app = create_app(settings_for(embedded_redis_url, archive_url=Secret(postgres_schema_url)), engines=ENGINES)
    runner = web.AppRunner(app)
    try:
        with pytest.raises(ArchiveSchemaError, match="run `donjon archive migrate`"):
            await runner.setup()
    finally:
        await runner.cleanup()


async def test_a_node_starts_while_postgres_is_down_and_serves(client_factory_down):
    response = await client_factory_down.get("/games/catalog")
    assert response.status == 200


@pytest.fixture
async def client_factory_down(make_client):
    return await make_client(archive_url=Secret("postgresql://postgres@127.0.0.1:1/test"))


def test_a_pass_shows_in_the_metrics():
    metrics = Metrics("n1")
    record_pass(PassReport(archived=3, waiting=2, oldest_waiting_ms=1, latencies=[301.0, 302.5, 400.0]), metrics, 0.5)
    text = metrics.render().decode()
    assert 'donjon_games_archived_total{node="n1"} 3.0' in text
    assert 'donjon_archive_backlog{node="n1"} 2.0' in text
    assert 'donjon_archive_latency_seconds_count{node="n1"} 3.0' in text
    assert metrics.archive_oldest_seconds.value() > 1_000_000
