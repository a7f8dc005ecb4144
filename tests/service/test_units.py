"""Unit tests of the service's small parts: settings, wire frames, metrics text, logs, errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgpack
import pytest

from games.base import IllegalMove, RuleError
from service.edge.wire import JSON, MSGPACK, CommandFrame, Hello, parse_frame
from service.errors import ErrorCode, ServiceError, from_rule_error
from service.ops.logs import configure_logging
from service.ops.metrics import Metrics
from service.ops.settings import Secret, Settings, SettingsError

# --- settings ----------------------------------------------------------------------------------


def test_settings_defaults_are_the_embedded_laptop_setup():
    settings = Settings.from_env({})
    assert settings.embedded and settings.redis_url is None
    assert (settings.host, settings.port, settings.data_dir, settings.fsync) == (
        "127.0.0.1", 8080, Path("donjon-data"), "always"
    )


def test_the_store_budgets_are_settings():
    settings = Settings.from_env({"DONJON_STORE_TIMEOUT_MS": "1500", "DONJON_READY_TIMEOUT_MS": "250"})
    assert (settings.store_timeout_ms, settings.ready_timeout_ms) == (1500, 250)
    assert (Settings().store_timeout_ms, Settings().ready_timeout_ms) == (2000, 1000)
    with pytest.raises(SettingsError, match="DONJON_STORE_TIMEOUT_MS"):
        Settings.from_env({"DONJON_STORE_TIMEOUT_MS": "0"})


def test_settings_cast_the_environment_and_flags_win():
    env = {"DONJON_PORT": "9000", "DONJON_WS_RATE": "2.5", "DONJON_REDIS_URL": "redis://h:1/0", "DONJON_FSYNC": "EVERYSEC"}
    settings = Settings.from_env(env, port=9100)
    assert (settings.port, settings.ws_rate, settings.fsync) == (9100, 2.5, "everysec")
    assert settings.redis_url.reveal() == "redis://h:1/0" and not settings.embedded


@pytest.mark.parametrize(
    "env, key",
    [({"DONJON_PORT": "eighty"}, "DONJON_PORT"), ({"DONJON_FSYNC": "never"}, "DONJON_FSYNC"),
     ({"DONJON_WS_RATE": "0"}, "DONJON_WS_RATE"), ({"DONJON_PORT": "70000"}, "DONJON_PORT"),
     ({"DONJON_BOT_SWEEP_MS": "-1"}, "DONJON_BOT_SWEEP_MS"), ({"DONJON_CACHE_GAMES": "0"}, "DONJON_CACHE_GAMES"),
     ({"DONJON_CACHE_BYTES": "lots"}, "DONJON_CACHE_BYTES")],
)
def test_a_bad_setting_names_its_variable(env, key):
    with pytest.raises(SettingsError, match=key):
        Settings.from_env(env)


def test_secrets_do_not_show_in_reprs():
    settings = Settings(redis_url=Secret("redis://:hunter2@h/0"))
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.redis_url)
    assert settings.redis_url.reveal() == "redis://:hunter2@h/0"


# --- wire --------------------------------------------------------------------------------------


def test_frames_parse_into_typed_messages():
    assert parse_frame({"type": "hello"}) == Hello(token=None, since=None)
    assert parse_frame({"type": "hello", "token": "t", "since": 4}) == Hello(token="t", since=4)
    assert parse_frame({"type": "command", "id": "c", "command": {"type": "pass"}}) == CommandFrame(
        id="c", command={"type": "pass", "args": {}}, expected_version=None
    )
    assert parse_frame(
        {"type": "command", "id": "c", "command": {"type": "play", "args": {"card": 2}}, "expected_version": 7}
    ).expected_version == 7


@pytest.mark.parametrize(
    "frame, code",
    [
        ({"type": "hello", "since": True}, "bad_frame"),
        ({"type": "hello", "token": ["x"]}, "bad_frame"),
        ({"type": "command", "id": "x" * 129, "command": {"type": "pass"}}, "bad_frame"),
        ({"type": "command", "id": "c", "command": {"type": "pass", "extra": 1}}, "bad_frame"),
        ({"type": "command", "id": "c", "command": {"type": ""}}, "bad_frame"),
        ({"type": "ping"}, "unknown_frame"),
        ([], "bad_frame"),
    ],
)
def test_bad_frames_have_stable_codes(frame, code):
    with pytest.raises(ServiceError) as info:
        parse_frame(frame)
    assert info.value.code == code


def test_codecs_round_trip_and_refuse_garbage():
    frame = {"type": "ack", "id": "c", "version": 3, "duplicate": False}
    assert json.loads(JSON.encode(frame)) == frame
    assert msgpack.unpackb(MSGPACK.encode(frame)) == frame
    for codec, garbage in ((JSON, "{"), (MSGPACK, b"\xc1"), (MSGPACK, "text")):
        with pytest.raises(ServiceError) as info:
            codec.decode(garbage)
        assert info.value.code == "bad_json"


# --- errors ------------------------------------------------------------------------------------


def test_rule_errors_keep_their_codes():
    assert from_rule_error(IllegalMove("no")).as_dict() == {"code": "illegal_move", "message": "no"}
    custom = from_rule_error(RuleError("the dragon sleeps", code="dragon_asleep"))
    assert (custom.code, custom.http_status) == ("dragon_asleep", 422)
    assert ErrorCode.RATE_LIMITED.http_status == 429 and ErrorCode.BAD_JSON.http_status == 400


# --- metrics -----------------------------------------------------------------------------------


def test_every_series_carries_the_node_and_the_known_ones_exist_at_zero():
    metrics = Metrics(node_id="n1", games={"castle": ["greedy", "random"]})
    text = metrics.render().decode()
    for line in (
        'donjon_games_created_total{game="castle",node="n1"} 0.0',
        'donjon_commands_total{game="castle",node="n1",result="ok"} 0.0',
        'donjon_command_seconds_count{game="castle",node="n1"} 0.0',
        'donjon_bot_moves_total{bot="random",game="castle",node="n1"} 0.0',
        'donjon_ws_errors_total{code="store_unavailable",node="n1"} 0.0',
        'donjon_ws_connections{node="n1"} 0.0',
        'donjon_events_appended_total{node="n1"} 0.0',
    ):
        assert line in text.splitlines(), line
    build = next(line for line in text.splitlines() if line.startswith("donjon_build_info{"))
    assert 'node="n1"' in build and 'version="' in build and build.endswith(" 1.0")
    assert "# TYPE process_cpu_seconds_total counter" in text
    assert "# TYPE python_gc_collections_total counter" in text
    assert not [line for line in text.splitlines() if line.split("{")[0].split(" ")[0].endswith("_created")]
    every_donjon_sample = [line for line in text.splitlines() if line.startswith("donjon_")]
    assert every_donjon_sample and all('node="n1"' in line for line in every_donjon_sample)


def test_two_apps_in_one_process_count_apart():
    one, two = Metrics(node_id="a"), Metrics(node_id="b")
    one.commands.inc(game="tiny", result="ok")
    one.command_seconds.observe(0.01, game="tiny")
    one.ws_connections.inc()
    assert one.commands.value(game="tiny", result="ok") == 1 and two.commands.value(game="tiny", result="ok") == 0
    assert (one.command_seconds.count(game="tiny"), two.command_seconds.count(game="tiny")) == (1, 0)
    assert (one.ws_connections.value(), two.ws_connections.value()) == (1, 0)
    with pytest.raises(ValueError):
        one.commands.inc(wrong="label")


def test_counters_are_collected_from_their_own_numbers_into_one_series_per_label_set():
    metrics = Metrics(node_id="n1")
    metrics.commands.inc(game="tiny", result="ok")
    metrics.commands.inc(result="ok", game="tiny")  # the labels named in another order: the same series
    metrics.commands.inc(2, game="tiny", result="not_your_turn")
    metrics.ws_frames_out.inc()
    with pytest.raises(ValueError):
        metrics.ws_frames_out.inc(-1)
    with pytest.raises(ValueError):
        metrics.commands.inc(game="tiny")  # a label missing
    lines = metrics.render().decode().splitlines()
    assert 'donjon_commands_total{game="tiny",node="n1",result="ok"} 2.0' in lines
    assert 'donjon_commands_total{game="tiny",node="n1",result="not_your_turn"} 2.0' in lines
    assert 'donjon_ws_frames_out_total{node="n1"} 1.0' in lines
    assert metrics.commands.value(game="tiny", result="ok") == 2.0
    assert metrics.registry.get_sample_value("donjon_commands_total", {"node": "n1", "game": "tiny", "result": "ok"}) == 2


def test_histograms_kept_as_plain_numbers_render_what_the_librarys_own_histogram_does():
    import prometheus_client

    from service.ops.metrics import COMMAND_BUCKETS, Histogram

    ours, theirs = prometheus_client.CollectorRegistry(), prometheus_client.CollectorRegistry()
    plain = Histogram(ours, "n1", "donjon_x_seconds", "x.", ("game",), buckets=COMMAND_BUCKETS)
    library = prometheus_client.Histogram("donjon_x_seconds", "x.", ("node", "game"), registry=theirs,
                                          buckets=COMMAND_BUCKETS)
    samples = [0.0, 0.0005, 0.0007, 0.001, 0.02, 2.5, 3.0, 100.0]  # bounds themselves, between, above the last
    for value in samples:
        plain.observe(value, game="tiny")
        library.labels(node="n1", game="tiny").observe(value)
    plain.touch(game="castle")
    library.labels(node="n1", game="castle")
    assert prometheus_client.generate_latest(ours) == prometheus_client.generate_latest(theirs)
    assert plain.count(game="tiny") == len(samples) and plain.count(game="castle") == 0
    with pytest.raises(ValueError):
        plain.observe(1.0)  # a label missing



# --- logs --------------------------------------------------------------------------------------


def test_json_logs_are_one_object_per_line_with_the_bound_fields():
    import structlog

    saved = structlog.get_config()
    stream = io.StringIO()
    try:
        configure_logging("json", "info", stream=stream)
        structlog.get_logger().bind(game_id="g1").info("command.accepted", version=7, command_id="0:c", latency_ms=1.5)
        structlog.get_logger().debug("hidden")
    finally:
        structlog.configure(**saved)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert {k: line[k] for k in ("event", "game_id", "version", "command_id", "latency_ms", "level")} == {
        "event": "command.accepted", "game_id": "g1", "version": 7, "command_id": "0:c", "latency_ms": 1.5,
        "level": "info",
    }


# --- seeds -------------------------------------------------------------------------------------


def test_the_commitment_covers_the_seed_and_the_secret_options():
    import hashlib

    from service.fairness.seeds import commitment, finished_payload, split_options

    class Engine:
        secret_options = frozenset({"tile_order"})

    seed = bytes(range(32))
    assert commitment(seed, {}) == hashlib.sha256(seed).hexdigest()
    assert commitment(seed, {"tile_order": ["A", "B"]}) == hashlib.sha256(
        seed + b'\x00{"tile_order":["A","B"]}'
    ).hexdigest()
    assert commitment(seed, {"tile_order": None}) != commitment(seed, {})
    assert split_options(Engine(), {"farmers": True, "tile_order": ["A"]}) == ({"farmers": True}, {"tile_order": ["A"]})
    assert split_options(object(), {"farmers": True}) == ({"farmers": True}, {})
    assert finished_payload(seed, {}, {"winner": 0}) == {"seed": seed.hex(), "summary": {"winner": 0}}
    assert finished_payload(seed, {"tile_order": None}, {})["secret_options"] == {"tile_order": None}


# --- serve -------------------------------------------------------------------------------------


async def test_serve_freezes_the_start_up_heap_and_makes_collections_rarer():
    import gc

    from service.run.serving import FULL_GC_EVERY, YOUNG_GC_EVERY, _settle_gc_on_startup

    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        await _settle_gc_on_startup(None)
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNG_GC_EVERY, 10, FULL_GC_EVERY) == (10_000, 10, 10)
        gc.set_threshold(20_000, 10, 200)
        await _settle_gc_on_startup(None)
        assert gc.get_threshold() == (20_000, 10, 200)  # an operator's higher thresholds are kept
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)
