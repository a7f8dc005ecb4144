"""Production logs: every line JSON, the standard library's records included, and failures of the
node's reader logged with their tracebacks."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
import warnings

import pytest
import structlog

from events.store import events_key
from service.edge.keys import STORE
from service.ops.logs import configure_logging
from tests.service.conftest import hello, started_tiny


@pytest.fixture
def json_logs():
    """The service's production logging (JSON) into a buffer for the test; the suite's afterwards."""
    saved, root = structlog.get_config(), logging.getLogger()
    level, excepthook = root.level, sys.excepthook
    stream = io.StringIO()
    handler = configure_logging("json", "info", stream=stream, node_id="node-9")
    # Loggers made at import must not keep this configuration after the test.
    structlog.configure(cache_logger_on_first_use=False)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        logging.captureWarnings(False)
        sys.excepthook = excepthook
        structlog.configure(**saved)


@pytest.mark.allow_error_logs
async def test_every_line_of_a_real_app_is_json_the_standard_librarys_included(json_logs, make_client):
    client = await make_client(node_id="node-9")
    game_id, _ = await started_tiny(client)
    assert (await client.get(f"/games/{game_id}")).status == 200  # aiohttp's access log (a stdlib logger)
    loop = asyncio.get_running_loop()
    try:
        raise RuntimeError("a task failed and nobody awaited it")
    except RuntimeError as exc:  # asyncio's own report of it goes to the stdlib logger "asyncio"
        loop.call_exception_handler({"message": "Task exception was never retrieved", "exception": exc})
    warnings.warn("a library is deprecated", DeprecationWarning, stacklevel=1)
    try:
        raise SystemError("the process ends")
    except SystemError as exc:  # what the interpreter does with an exception nothing caught
        sys.excepthook(type(exc), exc, exc.__traceback__)
    lines = json_logs.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]  # fails on the first line that is not JSON
    assert len(parsed) == len(lines) > 3
    for line in parsed:
        assert line["node_id"] == "node-9" and "timestamp" in line and "level" in line, line
    by_logger = {line.get("logger"): line for line in parsed}
    assert {"aiohttp.access", "asyncio", "py.warnings", "donjon"} <= set(by_logger)
    assert "SystemError: the process ends" in by_logger["donjon"]["exception"]
    assert f"/games/{game_id}" in by_logger["aiohttp.access"]["event"]
    failure = by_logger["asyncio"]
    assert failure["level"] == "error" and failure["event"] == "Task exception was never retrieved"
    assert "Traceback" in failure["exception"] and "RuntimeError: a task failed" in failure["exception"]
    assert any(line["event"] == "http.request" for line in parsed)  # the service's own lines, same stream


@pytest.mark.allow_error_logs
async def test_a_stream_read_the_store_refuses_is_logged_with_its_traceback(client, caplog):
    game_id, _ = await started_tiny(client)
    watcher, _ = await hello(client, game_id)
    redis = client.app[STORE].redis
    try:
        # A real refusal: the game's stream key now holds a string, so the reader's XREAD gets WRONGTYPE.
        await redis.delete(events_key(game_id))
        await redis.set(events_key(game_id), "not a stream")
        for _ in range(500):
            if "reader.read_failed" in caplog.text:
                break
            await asyncio.sleep(0.01)
        record = next(r for r in caplog.records if "reader.read_failed" in r.getMessage())
        assert record.levelno == logging.ERROR
        assert "Traceback" in record.getMessage() and "WRONGTYPE" in record.getMessage()
    finally:
        await watcher.close()
        await redis.delete(events_key(game_id))
