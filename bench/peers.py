"""``donjon bench --only peers``: donjon beside boardgame.io 0.50.2, the same game and load, same machine.

The game is the mirror game (:mod:`bench.mirror`; ``bench/bgio/server.mjs`` for boardgame.io):
2 seats, 9 cells, ``play {cell}`` always legal, never over. For each load of :data:`LOADS`
(games x spectators per game), the two servers are measured one after the other, donjon first,
each a fresh process in a session of its own on the same cores:

* **donjon**: ``donjon serve --workers 1`` (one process, the embedded Valkey below it, ``fsync
  always``), loaded by ``python -m bench.mirror`` (raw sockets, :func:`bench.mirror.mirror_load`);
* **boardgame.io**: its own ``Server`` (in memory, its SocketIO transport) on Node, loaded by
  ``bench/bgio/driver.mjs`` (socket.io frames by hand, as cheap as donjon's driver).

Both loads: each seat sends its next move as soon as the previous one is acknowledged (an ack
frame on donjon, an update showing the move counted on boardgame.io, which has no ack), every
spectator reads every update, a warm-up, then the measuring window. The figure is the **server
CPU per accepted move** over the window, read from ``/proc`` (donjon: the process and the Valkey
below it; boardgame.io: its node process), and the ratio donjon / boardgame.io; beside it the
accepted moves/s, the load generators' own CPU per move (they compete for the same cores) and
the load average. The same run then measures, on donjon alone, the three real games at 50 x 0
(seats choosing from ``legal``) against the mirror game's CPU per move, taken apart (the mirror
game under the real games' load; each game's set-up alone), and ``--workers 2`` against
``--workers 1`` at 50 x 0.

boardgame.io is installed from ``bench/bgio/package-lock.json`` with ``npm ci`` into a cache
folder (``$XDG_CACHE_HOME/donjon``, else ``~/.cache/donjon``), once per lock file; without npm
and Node, or when the install fails, the section is skipped with a message saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.processes import donjon_serve, free_port, process_cpu, serve_env, spawned, stop, tree
from bench.service import cpu_at

__all__ = ["peer_figures", "prepare_boardgameio", "LOADS", "REAL_GAMES", "BOARDGAME_IO"]

BOARDGAME_IO = "0.50.2"
LOADS = ((50, 0), (10, 20), (1, 200), (1, 1000))
"""(games, spectators per game), in the order measured."""
REAL_GAMES = ("castle_panic", "carcassonne", "castle")
SOURCES = Path(__file__).with_name("bgio")
INSTALLED = ("package.json", "package-lock.json")
SCRIPTS = ("server.mjs", "driver.mjs")
SERVED = "{'mirror': MIRROR, **games.default_engines()}"
SAMPLE_EVERY = 0.02


@dataclass(frozen=True)
class Timing:
    warmup: float
    window: float


FULL, QUICK = Timing(warmup=5.0, window=15.0), Timing(warmup=1.0, window=2.0)


# --- boardgame.io, installed once per lock file ----------------------------------------------------


def cache_folder() -> Path:
    """Where boardgame.io is installed: a folder per lock file, under the user's cache."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "donjon"
    digest = hashlib.sha256((SOURCES / "package-lock.json").read_bytes()).hexdigest()[:12]
    return root / f"bench-peers-{digest}"


def prepare_boardgameio() -> Path | str:
    """The folder boardgame.io runs from (installed there by ``npm ci`` if it is not yet, the
    server and driver scripts copied in), or why it cannot run here."""
    missing = [name for name in ("npm", "node") if shutil.which(name) is None]
    if missing:
        return (
            f"boardgame.io {BOARDGAME_IO} is installed with npm and runs on Node.js (20 or newer): "
            f"{' and '.join(missing)} not found on PATH"
        )
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder.with_name(folder.name + ".lock")):
        ready = folder / "node_modules" / ".donjon-installed"
        if not ready.exists():
            for name in INSTALLED:
                shutil.copyfile(SOURCES / name, folder / name)
            why = _npm_ci(folder)
            if why:
                return why
            ready.write_text(f"boardgame.io {BOARDGAME_IO}\n", encoding="utf-8")
        for name in SCRIPTS:
            shutil.copyfile(SOURCES / name, folder / name)
    return folder


def _npm_ci(folder: Path) -> str | None:
    command = ["npm", "ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"npm ci of boardgame.io {BOARDGAME_IO} in {folder} failed: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"npm ci of boardgame.io {BOARDGAME_IO} in {folder} failed (exit {done.returncode}): {last}"
    return None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One install at a time in a cache folder (two bench runs, or a run and a test)."""
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _versions(folder: Path) -> str:
    installed = json.loads((folder / "node_modules" / "boardgame.io" / "package.json").read_text(encoding="utf-8"))
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return (
        "donjon serve --workers 1 (fsync always, embedded Valkey) / "
        f"boardgame.io {installed['version']} on Node.js {node} (in memory, its SocketIO transport)"
    )


# --- one measurement: a server, a load, the CPU over the window -------------------------------------


@dataclass(frozen=True)
class Measure:
    """One server under one load, over the measuring window."""

    moves: int
    per_s: float
    server: float
    """CPU seconds of the server's main process in the window."""
    below: float
    """CPU seconds of the processes below it (donjon's Valkey, the workers of a supervisor)."""
    client: float
    """CPU seconds of the load generator in the window."""
    result: dict[str, Any]

    def per_move(self, seconds: float) -> float:
        return seconds / max(1, self.moves)

    @property
    def cpu_per_move(self) -> float:
        return self.per_move(self.server + self.below)


async def _sample(samples: list[tuple[float, ...]], server: int, client: int) -> None:
    """(wall, the server's CPU, its children's, the load's) every :data:`SAMPLE_EVERY` seconds.
    A process gone (the load, once done) keeps its last reading."""
    last_client = 0.0
    while True:
        below = sum(process_cpu(pid) for pid in tree(server)[1:])
        last_client = process_cpu(client) or last_client
        samples.append((time.perf_counter(), process_cpu(server), below, last_client))
        await asyncio.sleep(SAMPLE_EVERY)


async def _measure(server: subprocess.Popen[bytes], load: list[str], limit: float, cwd: str | None = None) -> Measure:
    """Run the load process ``load`` against the running ``server``; the CPU each spent in the
    window the load reports (its ``t0`` and ``t1``, on the clock of ``perf_counter``)."""
    driver = await asyncio.to_thread(
        subprocess.Popen, load, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    samples: list[tuple[float, ...]] = []
    sampler = asyncio.create_task(_sample(samples, server.pid, driver.pid))
    try:
        output, errors = await asyncio.to_thread(driver.communicate, timeout=limit)
    except subprocess.TimeoutExpired:
        await asyncio.to_thread(stop, driver, 5.0)
        raise RuntimeError(f"the load {load[:3]} did not end within {limit:g} s") from None
    finally:
        sampler.cancel()
    if driver.returncode != 0 or not output.strip():
        raise RuntimeError(f"the load {load[:3]} failed (exit {driver.returncode}): {errors.decode()[-2000:]}")
    result = json.loads(output.decode().strip().splitlines()[-1])
    t0, t1 = result["t0"], result["t1"]
    server_cpu, below, client = (cpu_at(samples, t1, column) - cpu_at(samples, t0, column) for column in (1, 2, 3))
    return Measure(result.get("moves", result.get("n", 0)), result["per_s"], server_cpu, below, client, result)


def _limit(timing: Timing) -> float:
    return timing.warmup + timing.window + 180.0  # setting up a thousand sockets, the drain


async def _donjon(games: int, spectators: int, timing: Timing, workers: int = 1) -> Measure:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    load = {"kind": "mirror", "base": base, "games": games, "spectators": spectators, **timing.__dict__}
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with spawned(donjon_serve(SERVED, port, folder, workers), base, env=serve_env()) as server:
            return await _measure(server, _python_load(load), _limit(timing))


def _python_load(params: dict[str, Any]) -> list[str]:
    return [sys.executable, "-m", "bench.mirror", json.dumps(params)]


async def _boardgameio(folder: Path, games: int, spectators: int, timing: Timing) -> Measure:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "NODE_ENV": "production"}  # as deployed: boardgame.io logs nothing then
    load = {"port": port, "games": games, "spectators": spectators, **timing.__dict__}
    server_argv = ["node", str(folder / "server.mjs"), str(port)]
    async with spawned(server_argv, base, env=env, cwd=str(folder), path="/games") as server:
        driver = ["node", str(folder / "driver.mjs"), json.dumps(load)]
        return await _measure(server, driver, _limit(timing), cwd=str(folder))


# --- the figures ------------------------------------------------------------------------------------


def _label(games: int, spectators: int) -> str:
    return f"{games} game{'s' if games > 1 else ''} x {spectators:,} spectators"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def _followed(measure: Measure) -> str:
    result = measure.result
    if result["followed"]:
        return f"yes ({result['updates_expected']:,} in {result['frames']:,} frames)"
    return f"NO: {result['updates_received']:,} of {result['updates_expected']:,}"


def _resent(measure: Measure) -> str:
    resent = measure.result.get("resent", 0)
    return f" (donjon: {resent:,} commands sent again after conflict or store_unavailable)" if resent else ""


def _pair_rows(label: str, ours: Measure, theirs: Measure, spectators: int) -> dict[str, str]:
    rows = {
        f"peers: {label}: server CPU per accepted move, donjon / boardgame.io": (
            f"{_us(ours.cpu_per_move)} / {_us(theirs.cpu_per_move)} us = {ours.cpu_per_move / theirs.cpu_per_move:.2f}"
        ),
        f"peers: {label}:   donjon's, service + Valkey": (
            f"{_us(ours.per_move(ours.server))} + {_us(ours.per_move(ours.below))} us"
        ),
        f"peers: {label}: accepted moves/s, donjon / boardgame.io": f"{ours.per_s:,.0f} / {theirs.per_s:,.0f}"
        + _resent(ours),
        f"peers: {label}: load generator's CPU per move, donjon's / boardgame.io's (same cores)": (
            f"{_us(ours.per_move(ours.client))} / {_us(theirs.per_move(theirs.client))} us"
        ),
    }
    if spectators:
        rows[f"peers: {label}: every spectator shown every move, donjon / boardgame.io"] = (
            f"{_followed(ours)} / {_followed(theirs)}"
        )
    rows[f"peers: {label}: load average (1 min) after the pair"] = f"{os.getloadavg()[0]:.2f}"
    return rows


async def _real_game_rows(mirror: Measure, timing: Timing) -> dict[str, str]:
    """The three real games at 50 x 0 on one ``donjon serve``, each against the mirror game's
    CPU per move at 50 x 0 in this run; then the same cost taken apart: the mirror game under the
    real games' load (the shape of a turn-based load alone), and each game's set-up alone."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    rows: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with spawned(donjon_serve(SERVED, port, folder, 1), base, env=serve_env()) as server:
            played = {game: await _real_load(server, base, "real_games", game, timing) for game in REAL_GAMES}
            for game, measure in played.items():
                rows[f"peers: {game}, 50 games x 2 seats from legal: server CPU per move; x the mirror game's"] = (
                    _played_row(measure, mirror)
                )
            shape = await _real_load(server, base, "real_games", "mirror", timing)
            rows[f"peers: {SHAPE}: server CPU per move; x the mirror game's"] = (
                f"{_us(shape.cpu_per_move)} us = {shape.cpu_per_move / mirror.cpu_per_move:.2f} x "
                f"({shape.per_s:,.0f} moves/s)"
            )
            for game, measure in played.items():
                setups = await _real_load(server, base, "setups", game, timing)
                rows[f"peers: {game}: its set-up alone; the rest of its CPU per move, x {SHAPE}'s"] = (
                    _taken_apart_row(measure, setups, shape)
                )
    return rows


SHAPE = "the mirror game under the real games' load"
"""The base each real game's rest is set against: the same load (one move in flight per game, the
other seat's update written on its own) on the trivial game, which never ends (no set-up)."""


async def _real_load(server: subprocess.Popen[bytes], base: str, kind: str, game: str, timing: Timing) -> Measure:
    load = {"kind": kind, "base": base, "game": game, "games": 50, "warmup": timing.warmup, "seconds": timing.window}
    return await _measure(server, _python_load(load), _limit(timing))


def _played_row(measure: Measure, mirror: Measure) -> str:
    refused = measure.result["refusals"] or "none"
    tables = measure.result.get("tables", 0)
    return (
        f"{_us(measure.cpu_per_move)} us = {measure.cpu_per_move / mirror.cpu_per_move:.2f} x "
        f"({measure.per_s:,.0f} moves/s; load generator {_us(measure.per_move(measure.client))} us "
        f"per move; {tables:,} games set up in the window, {measure.moves / max(1, tables):,.0f} moves "
        f"each; refused {refused})"
    )


def _taken_apart_row(played: Measure, setups: Measure, shape: Measure) -> str:
    """A game's set-up CPU (measured alone, per game set up) spread over the moves of the played
    window, and what is left of its CPU per move against the mirror game under the same load."""
    per_game = setups.cpu_per_move
    per_move = per_game * played.result.get("tables", 0) / max(1, played.moves)
    rest = played.cpu_per_move - per_move
    return (
        f"set-up {_us(per_game)} us a game = {_us(per_move)} us per move played; the rest "
        f"{_us(rest)} us = {rest / shape.cpu_per_move:.2f} x"
    )


async def _worker_rows(one: Measure, timing: Timing) -> dict[str, str]:
    two = await _donjon(50, 0, timing, workers=2)
    return {
        "peers: donjon serve --workers 2 / --workers 1, accepted moves/s at 50 games x 0": (
            f"{two.per_s:,.0f} / {one.per_s:,.0f} = {two.per_s / one.per_s:.2f} "
            f"(server CPU per move {_us(two.cpu_per_move)} / {_us(one.cpu_per_move)} us){_resent(two)}"
        ),
    }


async def peer_figures(quick: bool = False) -> dict[str, str]:
    """Every load on both servers, interleaved, then the real games and two workers on donjon."""
    folder = await asyncio.to_thread(prepare_boardgameio)
    if isinstance(folder, str):
        return {f"peers: boardgame.io {BOARDGAME_IO}": f"skipped: {folder}"}
    timing = QUICK if quick else FULL
    figures = {
        "peers: servers compared": _versions(folder),
        "peers: each load": f"warm-up {timing.warmup:g} s, then {timing.window:g} s measured; every seat "
        "sends its next move once the last is acknowledged",
    }
    first: Measure | None = None
    for games, spectators in LOADS:
        ours = await _donjon(games, spectators, timing)
        theirs = await _boardgameio(folder, games, spectators, timing)
        first = first or ours
        figures.update(_pair_rows(_label(games, spectators), ours, theirs, spectators))
    assert first is not None
    figures.update(await _real_game_rows(first, timing))
    figures.update(await _worker_rows(first, timing))
    return figures
