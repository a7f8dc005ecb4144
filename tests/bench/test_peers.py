"""``donjon bench --only peers``: donjon beside boardgame.io on the mirror game.

The figures are measured by the bench, not asserted here (no clocks in tests); what is tested is
the mirror game's contract, the spectators' frame counting, the skip without npm, and one quick
run end to end against both real servers (boardgame.io installed by npm from the committed lock,
a real ``donjon serve``), whose every row must be there and say what it measured.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bench import run_bench
from bench.mirror import CELLS, MIRROR, MirrorState, _Follower
from bench.peers import BOARDGAME_IO, LOADS, REAL_GAMES, SOURCES, cache_folder, prepare_boardgameio
from games.base import BadCommand, UnknownCommand, fold
from service.edge.outbox import FRAMED
from service.fairness.draw_schemes import LegacyRandom

ROOT = Path(__file__).resolve().parents[2]


def test_the_mirror_game_takes_play_from_either_seat_at_any_time_and_never_ends():
    rng = LegacyRandom(1)
    state = fold(MIRROR, MIRROR.setup({}, 2, rng))
    assert MIRROR.normalize_options({}, 2) == {} and MIRROR.waiting_for(state) == [0, 1]
    for seat, cell in [(0, 4), (0, 4), (1, 4), (1, 8)]:
        assert {"type": "play", "args": {"cell": cell}} in MIRROR.legal_moves(state, seat)
        state = fold(MIRROR, MIRROR.decide(state, seat, {"type": "play", "args": {"cell": cell}}, rng), state)
    assert state == MirrorState(cells=(None,) * 4 + (1,) + (None,) * 3 + (1,), moves=(2, 2))
    assert len(MIRROR.legal_moves(state, 0)) == CELLS and MIRROR.legal_moves(state, None) == []
    assert not MIRROR.is_terminal(state) and MIRROR.clock_seat(state) is None
    assert MIRROR.view(state, None) == {"cells": list(state.cells), "moves": [2, 2], "legal": []}


@pytest.mark.parametrize(
    ("command", "error"),
    [({"type": "play", "args": {"cell": 9}}, BadCommand), ({"type": "play", "args": {"cell": "1"}}, BadCommand),
     ({"type": "play"}, BadCommand), ({"type": "pass"}, UnknownCommand), ("play", BadCommand)],
)
def test_the_mirror_game_refuses_what_is_not_a_play_of_a_cell(command, error):
    state = fold(MIRROR, MIRROR.setup({}, 2, LegacyRandom(1)))
    with pytest.raises(error):
        MIRROR.decide(state, 0, command, LegacyRandom(2))


def test_the_mirror_game_is_in_no_catalog():
    import games

    assert "mirror" not in games.default_engines()


async def test_a_follower_keeps_the_last_version_of_every_update_and_answers_pings():
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    try:
        follower = _Follower(ours, bytearray())
        follower.first = follower.version = 3
        frames = [{"type": "update", "game": "g", "version": v, "view": {"x": "y" * 150 * v}} for v in (4, 6)]
        first, second = (FRAMED["json"].encode(frame) for frame in frames)
        theirs.sendall(first + second[:100])
        follower.on_readable()  # a frame and a bit: the bit waits
        assert (follower.version, follower.frames) == (4, 1)
        theirs.sendall(second[100:] + b"\x89\x02hi")  # the rest, then a ping
        follower.on_readable()
        assert (follower.version, follower.frames, follower.seen) == (6, 2, 3)
        assert theirs.recv(100) == b"\x8a\x82\x00\x00\x00\x00hi"  # the pong, masked with zeros
    finally:
        ours.close()
        theirs.close()


def test_boardgameio_is_installed_per_lock_file_under_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = cache_folder()
    assert folder.parent == tmp_path / "donjon" and folder.name.startswith("bench-peers-")
    lock = json.loads((SOURCES / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"][""]["dependencies"]["boardgame.io"] == BOARDGAME_IO
    assert lock["packages"]["node_modules/boardgame.io"]["version"] == BOARDGAME_IO


async def test_without_npm_the_section_is_skipped_saying_why(monkeypatch, tmp_path, capsys):
    import service.ops.logs

    monkeypatch.setattr(service.ops.logs, "configure_logging", lambda *args, **kwargs: None)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # run_bench sets it; the suite's stays
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no npm, no node
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert prepare_boardgameio() == (
        "boardgame.io 0.50.2 is installed with npm and runs on Node.js (20 or newer): npm and node not found on PATH"
    )
    assert await run_bench(sections=["peers"], quick=True) == 0
    out = capsys.readouterr().out
    assert re.search(r"peers: boardgame\.io 0\.50\.2 +skipped: .*npm and node not found on PATH", out), out
    assert not (tmp_path / "cache").exists()  # nothing installed, nothing measured


CPU = r"[\d,]+ / [\d,]+ us = \d+\.\d\d"
SPLIT = r"[\d,]+ \+ [\d,]+ us"
RATE = r"[\d,]+ / [\d,]+"
RESENT = r"( \(donjon: [\d,]+ commands sent again after conflict or store_unavailable\))?"
FOLLOWED = r"yes \([\d,]+ in [\d,]+ frames\) / yes \([\d,]+ in [\d,]+ frames\)"


def _rows(games: int, spectators: int) -> dict[str, str]:
    label = f"{games} game{'s' if games > 1 else ''} x {spectators:,} spectators"
    rows = {
        f"peers: {label}: server CPU per accepted move, donjon / boardgame.io": CPU,
        f"peers: {label}:   donjon's, service + Valkey": SPLIT,
        f"peers: {label}: accepted moves/s, donjon / boardgame.io": RATE + RESENT,
        f"peers: {label}: load generator's CPU per move, donjon's / boardgame.io's (same cores)": RATE + " us",
    }
    if spectators:
        rows[f"peers: {label}: every spectator shown every move, donjon / boardgame.io"] = FOLLOWED
    rows[f"peers: {label}: load average (1 min) after the pair"] = r"\d+\.\d\d"
    return rows


def _ours_left() -> list[str]:
    """Command lines of the processes this run may have started that are still there."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = stat.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "bench.mirror" in line or str(cache_folder()) in line:
            left.append(line)
    return left


@pytest.mark.timeout(900)
def test_a_quick_run_measures_both_servers_on_every_load():
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm and Node.js are needed to install and run boardgame.io")
    env = {key: value for key, value in os.environ.items() if not key.startswith("DONJON_")}
    done = subprocess.run(
        [sys.executable, "-m", "service", "bench", "--only", "peers", "--quick", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=840,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    expected = {
        "peers: servers compared": r"donjon serve --workers 1 \(fsync always, embedded Valkey\) / boardgame\.io "
        r"0\.50\.2 on Node\.js v\d+\.\d+\.\d+ \(in memory, its SocketIO transport\)",
        "peers: each load": r"warm-up 1 s, then 2 s measured; .*",
    }
    for games, spectators in LOADS:
        expected.update(_rows(games, spectators))
    for game in REAL_GAMES:
        expected[f"peers: {game}, 50 games x 2 seats from legal: server CPU per move; x the mirror game's"] = (
            r"[\d,]+ us = \d+\.\d\d x \([\d,]+ moves/s; load generator [\d,]+ us per move; "
            r"[\d,]+ games set up in the window, [\d,]+ moves each; refused .*\)"
        )
    expected["peers: the mirror game under the real games' load: server CPU per move; x the mirror game's"] = (
        r"[\d,]+ us = \d+\.\d\d x \([\d,]+ moves/s\)"
    )
    for game in REAL_GAMES:
        expected[f"peers: {game}: its set-up alone; the rest of its CPU per move, x the mirror game under the "
                 "real games' load's"] = (
            r"set-up [\d,]+ us a game = [\d,]+ us per move played; the rest -?[\d,]+ us = -?\d+\.\d\d x"
        )
    expected["peers: donjon serve --workers 2 / --workers 1, accepted moves/s at 50 games x 0"] = (
        r"[\d,]+ / [\d,]+ = \d+\.\d\d \(server CPU per move [\d,]+ / [\d,]+ us\)" + RESENT
    )
    peers = {name: value for name, value in figures.items() if name.startswith("peers:")}
    assert list(peers) == list(expected)
    for name, pattern in expected.items():
        assert re.fullmatch(pattern, peers[name]), (name, peers[name])
    for games, spectators in LOADS:  # both servers took moves under every load
        label = f"{games} game{'s' if games > 1 else ''} x {spectators:,} spectators"
        rates = peers[f"peers: {label}: accepted moves/s, donjon / boardgame.io"]
        both = re.match(r"([\d,]+) / ([\d,]+)", rates)
        assert both and all(int(rate.replace(",", "")) > 0 for rate in both.groups()), (label, rates)
    assert not _ours_left()
