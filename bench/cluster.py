"""``donjon bench --only cluster``: scaling out, on one Redis and on a 3-master cluster.

Two stores, both started here in temporary folders and both with ``appendfsync everysec`` (so
the comparison is of the layouts, not of fsync policies): one Valkey server, and a 3-master
Valkey Cluster (:class:`events.localcluster.LocalCluster`). On each:

* **1, 2 and 3 nodes.** Each node is its own process (an aiohttp app serving the bench engine
  of :mod:`bench.die_game`, as ``donjon serve`` would). 60 games are spread over the
  nodes: game *i*'s player is on node *i mod n*, its spectator on the next node, so every
  update crosses nodes when there are several. Closed loop: each player sends its next command
  when the last is acked. Figures: accepted commands/s; command -> spectator update p50 / p99
  (sent by this process, read back by it); the CPU the node processes and the store servers
  spent per accepted command (from ``/proc``).
* **Routing by game, 3 nodes against 1.** Every socket of a game on one node, as
  ``deploy/haproxy.cfg`` routes them, should make 3 nodes cost what 1 does per command. The
  closed loop above cannot show it on 2 cores: three nodes, their store and the load generator
  contend for the cores, and a node's cost per command falls as its load rises (more commands
  per loop turn, per store round trip), so a saturated node looks cheaper than three less busy
  ones. So this comparison gives every node the same load, well below saturation: paced (each
  player sends a command every :data:`PACE_S`, the players' starts spread out), and
  :data:`GAMES_PER_NODE` games per node (~200 commands/s each); interleaved: :data:`ROUNDS` rounds
  of 1 node, 3 nodes routed, 3 nodes crossing (each player's spectator on the next node), each
  on fresh processes, the CPU counted only while the players play. The figure is each round's
  ratio of the nodes' CPU per command, and their median.
* **Store connections of one node** watching 10, 1,000 and 5,000 games (``CLIENT LIST`` on
  every server, by the node's connection name), to show they grow with the masters, not with
  the games.

On a shared 2-core machine the load generator, the nodes and the servers all compete for the
cores: the ratios between rows say more than the absolute rates.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from bench.die_game import ROLL
from bench.percentiles import percentile
from bench.processes import free_port, process_cpu

if TYPE_CHECKING:
    from events.store import EventStore

__all__ = ["cluster_figures", "serve_node"]

_GAMES = 60
PACE_S = 0.1
"""Seconds between two commands of one player in the routing comparison."""
GAMES_PER_NODE = 20
"""Games per node in the routing comparison: each node has the same load at 1 and at 3 nodes."""
ROUNDS = 3
"""Rounds of the routing comparison (1 node, 3 routed, 3 crossing each)."""


def serve_node(url: str, port: int, node_id: str) -> None:
    """Run one bench node until killed (the child processes of :func:`cluster_figures`), as
    ``donjon serve`` runs: on uvloop, its collector settled, no access log."""
    from bench.die_game import BENCH
    from service.ops.logs import configure_logging
    from service.ops.settings import Secret, Settings
    from service.run.app import create_app
    from service.run.serving import serve_app

    configure_logging("json", "warning", stream=open(os.devnull, "w"))  # noqa: SIM115 - the process's lifetime
    settings = Settings(
        redis_url=Secret(url), ws_rate=1e9, ws_burst=1e9, ws_outbox=100_000, log_level="warning", node_id=node_id,
        drain_ms=0,
    )
    engines: dict[str, Any] = {"bench": BENCH}
    serve_app(create_app(settings, engines=engines), host="127.0.0.1", port=port)


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes so far."""
    return sum(process_cpu(pid) for pid in pids)


@contextlib.asynccontextmanager
async def _nodes(url: str, count: int) -> AsyncIterator[tuple[list[str], list[int]]]:
    """``count`` node processes on the store at ``url``: their base URLs and pids."""
    import aiohttp

    processes, bases = [], []
    try:
        for index in range(count):
            port = free_port()
            code = f"from bench.cluster import serve_node; serve_node({url!r}, {port}, 'bench-{index}')"
            processes.append(
                subprocess.Popen(  # noqa: ASYNC220 - a fork and exec, over before the load starts
                    [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
            bases.append(f"http://127.0.0.1:{port}")
        async with aiohttp.ClientSession() as session:
            for base in bases:
                deadline = time.monotonic() + 30
                while True:
                    with contextlib.suppress(aiohttp.ClientError, OSError):
                        async with session.get(f"{base}/readyz") as response:
                            if response.status == 200:
                                break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"bench node {base} did not get ready")
                    await asyncio.sleep(0.1)
        yield bases, [process.pid for process in processes]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def _spread_load(
    bases: list[str], seconds: float, *, routed: bool = False, pace: float | None = None,
    meter: Callable[[], tuple[float, float]] = lambda: (0.0, 0.0), count: int = _GAMES,
) -> dict[str, Any]:
    """Closed loop over ``count`` games spread over the nodes, one spectator each elsewhere
    (``routed``: on the player's node, as a balancer routing by game puts every socket of a game);
    ``pace``: each player sends its ``k``-th command ``k * pace`` seconds after its start, or at
    once when acks come later than that, the players' starts spread over one ``pace``. ``meter``
    reads the CPU seconds of the nodes and of the servers so far: ``cpu`` in the result is what
    they spent while the players played (not while the games and sockets were set up)."""
    import aiohttp

    # A player and a spectator socket per game: more than aiohttp's default 100 connections.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        players, watchers = await _sockets(session, bases, count, routed)
        sent: dict[tuple[int, int], float] = {}
        latencies: list[float] = []
        acked = [3] * count  # the last version each player was acked
        shown = [3] * count  # the last version each spectator was shown
        acks = 0
        stop = time.perf_counter() + seconds

        async def play(i: int, ws: Any) -> None:
            nonlocal acks
            k, version = 0, 3
            begun = time.perf_counter() + (pace or 0.0) * i / count  # staggered: no bursts to batch
            while time.perf_counter() < stop:
                k += 1
                if pace is not None:
                    await asyncio.sleep(max(0.0, begun + k * pace - time.perf_counter()))
                sent[(i, version + 1)] = time.perf_counter()
                await ws.send_json(dict(ROLL, id=f"{i}-{k}"))
                version = acked[i] = await _acked_version(ws)
                acks += 1

        async def watch(i: int, ws: Any) -> None:
            while True:
                frame = await ws.receive_json()
                if frame.get("type") == "update":
                    at = time.perf_counter()
                    shown[i] = frame["version"]
                    for event in frame["events"]:
                        started = sent.get((i, event["version"]))
                        if started is not None:
                            latencies.append(at - started)

        watching = [asyncio.create_task(watch(i, ws)) for i, ws in enumerate(watchers)]
        started, cpu_before = time.perf_counter(), meter()
        await asyncio.gather(*(play(i, ws) for i, ws in enumerate(players)))
        ended, cpu_after = time.perf_counter(), meter()
        missing = await _updates_missing(shown, acked)
        for task in watching:
            task.cancel()
        for ws in (*players, *watchers):
            await ws.close()
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    cpu = (cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1])
    return {"acks": acks, "seconds": ended - started, "p50": p50, "p99": p99, "missing": missing, "cpu": cpu}


async def _acked_version(ws: Any) -> int:
    """The version of the next ack on a player's socket (updates before it skipped)."""
    while True:
        frame = await ws.receive_json()
        if frame["type"] == "ack":
            return int(frame["version"])
        if frame["type"] == "error":
            raise RuntimeError(frame)


async def _sockets(session: Any, bases: list[str], count: int, routed: bool) -> tuple[list[Any], list[Any]]:
    """``count`` new games, game *i* on node *i mod n*: its player's socket there, its spectator's
    on the next node (``routed``: the same one)."""
    from bench.load import new_game, open_socket

    games = [await new_game(session, bases[i % len(bases)]) for i in range(count)]
    players = [await open_socket(session, bases[i % len(bases)], g, t) for i, (g, t) in enumerate(games)]
    apart = 0 if routed else 1
    watchers = [await open_socket(session, bases[(i + apart) % len(bases)], g) for i, (g, _) in enumerate(games)]
    return players, watchers


async def _updates_missing(shown: list[int], acked: list[int], within: float = 10.0) -> int:
    """Wait for the updates of the last commands, however late (a saturated node's reader lags);
    how many versions acked were never shown within ``within`` seconds."""
    deadline = time.perf_counter() + within
    while any(s < a for s, a in zip(shown, acked, strict=True)) and time.perf_counter() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    return sum(a - s for s, a in zip(shown, acked, strict=True) if s < a)


async def _measured(
    url: str, count: int, server_pids: list[int], seconds: float, routed: bool, pace: float | None = None,
    games: int = _GAMES,
) -> tuple[Any, ...]:
    """One load of ``games`` games on ``count`` fresh nodes: the load's result, the nodes' and the
    servers' CPU seconds while it played."""
    async with _nodes(url, count) as (bases, pids):
        await _spread_load(bases, 0.5, routed=routed, pace=pace, count=games)  # warm up

        def meter() -> tuple[float, float]:
            return _cpu_seconds(pids), _cpu_seconds(server_pids)

        result = await _spread_load(bases, seconds, routed=routed, pace=pace, meter=meter, count=games)
        return result, *result["cpu"]


async def _throughput_rows(label: str, url: str, server_pids: list[int], seconds: float) -> dict[str, str]:
    figures: dict[str, str] = {}
    per_command: dict[int, float] = {}
    for count in (1, 2, 3):
        result, nodes_cpu, servers_cpu = await _measured(url, count, server_pids, seconds, routed=False)
        acks = max(1, result["acks"])
        per_command[count] = nodes_cpu / acks
        figures[f"cluster: {label}, {count} node(s): accepted commands/s; update p50 / p99"] = (
            f"{result['acks'] / result['seconds']:,.0f}; {result['p50'] * 1e3:.1f} / {result['p99'] * 1e3:.1f} ms"
            + (f" ({result['missing']} updates never shown within 10 s)" if result["missing"] else "")
        )
        figures[f"cluster: {label}, {count} node(s): CPU per command, nodes + store"] = (
            f"{nodes_cpu / acks * 1e6:,.0f} + {servers_cpu / acks * 1e6:,.0f} us"
        )
    figures.update(await _routing_rows(label, url, server_pids, seconds))
    return figures


async def _routing_rows(label: str, url: str, server_pids: list[int], seconds: float) -> dict[str, str]:
    """The paced, interleaved comparison of the module's docstring: 3 nodes routed by game (and
    crossing) against 1 node, nodes' CPU per command."""
    rounds: list[dict[str, float]] = []
    for _ in range(ROUNDS):
        cost = {}
        for name, count, by_game in (("one", 1, True), ("routed", 3, True), ("crossing", 3, False)):
            result, nodes_cpu, _ = await _measured(
                url, count, server_pids, seconds, by_game, pace=PACE_S, games=GAMES_PER_NODE * count
            )
            cost[name] = nodes_cpu / max(1, result["acks"])
            cost[f"{name} rate"] = result["acks"] / result["seconds"]
        rounds.append(cost)

    def ratios(name: str) -> list[float]:
        return sorted(cost[name] / cost["one"] for cost in rounds)

    routed, crossing = ratios("routed"), ratios("crossing")
    one = statistics.median(cost["one"] for cost in rounds)
    rate = statistics.fmean(cost["one rate"] for cost in rounds)  # per node, as in every row
    return {
        f"cluster: {label}, 3 nodes routed by game / 1 node, paced ({rate:,.0f} commands/s per node): nodes'"
        " CPU per command": (
            f"median {statistics.median(routed):.2f} ({' · '.join(f'{r:.2f}' for r in routed)};"
            f" 1 node {one * 1e6:,.0f} us; crossing nodes"
            f" {statistics.median(crossing):.2f}: {' · '.join(f'{r:.2f}' for r in crossing)})"
        ),
    }


async def _connection_rows(label: str, url: str, quick: bool) -> dict[str, str]:
    """Store connections of one node (in this process) as the games it watches grow; the games
    are made by another node, so the count is the watching alone."""
    from aiohttp import web

    from bench.die_game import BENCH
    from events.store import EventStore
    from service.edge.keys import NODE, SERVICE
    from service.ops.settings import Secret, Settings
    from service.run.app import create_app

    counts = (10, 200, 1000) if quick else (10, 1000, 5000)
    node_id = f"watch-{os.getpid()}"
    runners = []
    figures: dict[str, str] = {}
    try:
        for name in (node_id, f"make-{os.getpid()}"):
            settings = Settings(redis_url=Secret(url), node_id=name, log_level="warning")
            engines: dict[str, Any] = {"bench": BENCH}
            runner = web.AppRunner(create_app(settings, engines=engines))
            await runner.setup()  # the store and the node; no listener needed
            runners.append(runner)
        node, service = runners[0].app[NODE], runners[1].app[SERVICE]
        store = node.store
        assert isinstance(store, EventStore)  # the bench counts a Redis server's connections
        watched = 0
        for count in counts:
            while watched < count:
                batch = min(200, count - watched)
                made = await asyncio.gather(*(service.create_game("bench", {}, 1) for _ in range(batch)))
                for projection in made:
                    node.subscribe(await node.live_game(projection.game_id), _Quiet())
                watched += len(made)
            await _settled(lambda target=watched: node.feed.notices >= target and node.feed.problem is None)
            figures[f"cluster: {label}: store connections of a node watching {count:,} games"] = (
                f"{await _named_connections(store, f'donjon-{node_id}')} "
                f"({node.feed.connections} of them subscriber connections)"
            )
    finally:
        for runner in runners:
            await runner.cleanup()
    return figures


class _Quiet:
    """A subscriber that takes the updates and drops them (the count is what is measured)."""

    viewer: int | None = None

    def __init__(self) -> None:
        from service.edge.outbox import FRAMED

        self.codec: Any = FRAMED["json"]

    def deliver(self, data: str | bytes) -> None:
        pass


async def _settled(condition: Any, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition() and time.monotonic() < deadline:  # noqa: ASYNC110 - a condition of another object
        await asyncio.sleep(0.05)


async def _named_connections(store: EventStore, name: str) -> int:
    """Connections named ``name`` on every server of the store."""
    from redis.asyncio.cluster import RedisCluster

    if store.cluster:
        listings = await store.redis.client_list(target_nodes=RedisCluster.PRIMARIES)
        clients = [c for per_node in listings.values() for c in per_node] if isinstance(listings, dict) else listings
    else:
        clients = await store.redis.client_list()
    return sum(1 for client in clients if client.get("name") == name)


async def cluster_figures(quick: bool = False) -> dict[str, str]:
    """Start both stores in temporary folders, measure, stop them."""
    from events.embedded import EmbeddedServer
    from events.localcluster import LocalCluster

    seconds = 2.0 if quick else 5.0
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        server = EmbeddedServer(os.path.join(folder, "one"), fsync="everysec")
        await server.start_async()
        try:
            pid = server.pid
            figures.update(await _throughput_rows("one Valkey", server.url, [pid] if pid else [], seconds))
            figures.update(await _connection_rows("one Valkey", server.url, quick))
        finally:
            await asyncio.to_thread(server.stop)
        cluster = LocalCluster(os.path.join(folder, "cluster"), masters=3, fsync="everysec")
        await asyncio.to_thread(cluster.start)
        try:
            figures.update(await _throughput_rows("3-master cluster", cluster.url, cluster.pids, seconds))
            figures.update(await _connection_rows("3-master cluster", cluster.url, quick))
        finally:
            await asyncio.to_thread(cluster.stop)
    return figures
