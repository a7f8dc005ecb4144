r"""``GameService``: the one object the routes, the websocket endpoint and the stream reader call.

It wires one node's parts together and does nothing of its own:

* :class:`~service.play.cache.GameCache` keeps each game's projection and meta and writes this
  node's appends through;
* :class:`~service.play.seating.Seating` creates games and seats players;
* :func:`~service.play.auth.authenticate` finds the seat a token holds;
* :class:`~service.play.commands.CommandRunner` runs a seat's command, with its retries;
* :class:`~service.bots.scheduler.BotScheduler` makes the bots' moves;
* :class:`~service.bots.sweep.DueBotsSweep` finds the bot games nobody drives (after a full
  restart, say) in the store's due-bots index;
* :class:`~service.play.sight.Sight` decides what a viewer may see now (a spectator delay), for
  every route;
* :class:`~service.play.listings.Listings` keeps the lobby and the due-bots index from the
  appended batches.

It is its cache's :class:`~service.play.listeners.GameListener`: it passes what the cache did to
the listings, the bot scheduler, the clock keeper and the :class:`AppendWatcher`\ s that
:meth:`GameService.listen` (the node's stream reader), each told only what it acts on.

What each append holds is decided by :mod:`service.play.decisions`, the one pure module that
``donjon replay`` re-runs too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from events.errors import StoreError
from events.protocol import Store
from games.base import Bot, Command, Engine
from projections.game import GameProjection
from service.bots import bots_for
from service.bots.scheduler import BotScheduler
from service.bots.sweep import HANDED_OVER, DueBotsSweep
from service.fairness.sealing import Sealer
from service.fairness.seed_vault import SeedVault
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play.auth import authenticate
from service.play.cache import CACHE_BYTES, CACHE_GAMES, GameCache
from service.play.commands import CommandResult, CommandRunner
from service.play.decisions import takeover_bot
from service.play.listeners import Append, AppendWatcher
from service.play.listings import Listings
from service.play.rematch import Rematches
from service.play.seating import Seating
from service.play.sight import Sight
from service.timing.clocks import ClockKeeper

__all__ = ["GameService", "now_ms"]

log = get_logger()


def now_ms() -> int:
    """The wall clock in milliseconds since the epoch: the ``ts`` of the envelopes."""
    return int(time.time() * 1000)


class GameService:
    """Creates games, seats players, runs commands and bots; one per app (per node)."""

    def __init__(
        self,
        store: Store,
        engines: Mapping[str, Engine[Any]],
        *,
        metrics: Metrics | None = None,
        retries: int = 5,
        clock: Callable[[], int] = now_ms,
        bot_delay: float = 0.0,
        bot_takeover: float = 3.0,
        bot_sweep: float = 0.0,
        cache_games: int = CACHE_GAMES,
        cache_bytes: int = CACHE_BYTES,
        vault: SeedVault | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.engines = dict(engines)
        self.metrics = metrics or Metrics()
        self.bots: dict[str, dict[str, Bot]] = {name: bots_for(engine) for name, engine in self.engines.items()}
        """Game -> the bots it offers, by name."""
        self.listings = Listings(store)
        self._watchers: list[AppendWatcher] = []
        self.cache = GameCache(
            store, self.engines, self.metrics, self, max_games=cache_games, max_bytes=cache_bytes, vault=vault
        )
        self.seating = Seating(self.cache, self.bots, self.metrics, retries=retries, clock=clock)
        self.commands = CommandRunner(
            self.cache, self.metrics, retries=retries, clock=clock, takeover=self.takeover_bot
        )
        self.bot_scheduler = BotScheduler(
            self.cache, self.bots, self.metrics, clock=clock, delay=bot_delay, takeover=bot_takeover
        )
        self.sight_of = Sight(self.cache, clock)
        self.rematches = Rematches(self.cache, self.seating, clock)
        self.clocks = ClockKeeper(self.cache, self.bots, self.metrics, clock=clock)
        self.sweep = DueBotsSweep(
            self.listings, self.cache, self.bot_scheduler, self.metrics, clock=clock, period=bot_sweep
        )

    def listen(self, watcher: AppendWatcher) -> None:
        """Tell ``watcher`` of this node's appends in flight from now on, and keep the games it
        keeps cached (the node's stream reader calls this as it is made)."""
        self._watchers.append(watcher)

    # --- the cache's listener (service.play.listeners.GameListener) ------------------------------

    async def appending(self, append: Append) -> None:
        await self.listings.appending(append)  # first: if the store refuses it, nothing is in flight
        for watcher in self._watchers:
            watcher.appending(append.game_id, append.after.version)

    def append_done(self, append: Append) -> None:
        for watcher in self._watchers:
            watcher.append_done(append.game_id, append.after.version)

    async def appended(self, append: Append, after: GameProjection) -> None:
        for watcher in self._watchers:
            watcher.appended(append, after)
        await self.listings.appended(append, after)
        self.bot_scheduler.appended(after)
        self.clocks.appended(after)

    async def loaded(self, projection: GameProjection) -> None:
        await self.listings.repair(projection)
        self.bot_scheduler.watch(projection)
        self.clocks.appended(projection)

    def evicted(self, game_id: str) -> None:
        self.bot_scheduler.forget(game_id)

    def keeps(self, game_id: str) -> bool:
        """The cache keeps games with sockets here and games whose bots this node moves or watches."""
        return any(watcher.keeps(game_id) for watcher in self._watchers) or self.bot_scheduler.busy(game_id)

    def start(self) -> None:
        """Start the due-bots sweep (every ``bot_sweep`` seconds; 0: never) and the clock keeper
        (both need a running event loop)."""
        self.sweep.start()
        self.clocks.start()

    async def release_duty(self) -> int:
        """Hand this node's background duty to the other nodes before it stops: no more sweeps,
        bot moves or timeouts fired here, and every game whose bots it drove listed as overdue
        at once, so the next sweep of another node takes it (instead of after the takeover
        delay). How many games were handed over."""
        await self.sweep.stop()
        await self.clocks.stop_firing()
        games = await self.bot_scheduler.release()
        for game_id in games:
            try:
                await self.listings.due.mark(game_id, int(HANDED_OVER))
            except StoreError as exc:  # the takeover delay hands it over all the same
                log.warning("bots.handover_failed", game_id=game_id, error=str(exc))
        return len(games)

    async def close(self) -> None:
        """Stop the sweep, the bot tasks and the clock keeper."""
        await self.sweep.stop()
        await self.clocks.close()
        await self.bot_scheduler.close()

    # --- games ---------------------------------------------------------------------------------

    def cached(self, game_id: str) -> GameProjection | None:
        return self.cache.cached(game_id)

    def offer(self, projection: GameProjection) -> None:
        """A newer projection from the stream reader (see :meth:`GameCache.offer`)."""
        self.cache.offer(projection)

    async def load(self, game_id: str) -> GameProjection:
        """The game folded to the stream's latest version."""
        return await self.cache.load(game_id)

    async def events(self, game_id: str, first: int = 1, last: int | None = None) -> list[Any]:
        """The game's events ``first`` to ``last``, sealed parts open (see :meth:`GameCache.events`)."""
        return await self.cache.events(game_id, first, last)

    async def projection_at(self, game_id: str, version: int) -> GameProjection:
        """The game as it was at ``version``."""
        return await self.cache.projection_at(game_id, version)

    async def sight(self, game_id: str, seat: int | None) -> GameProjection:
        """The game as ``seat`` may see it now (``None``: a spectator): what every route shows,
        reading no event past its version (:class:`service.play.sight.Sight`)."""
        return await self.sight_of.of(game_id, seat)

    async def for_spectators(self, projection: GameProjection) -> GameProjection:
        """``projection`` as spectators may see it now (:meth:`service.play.sight.Sight.spectators`)."""
        return await self.sight_of.spectators(projection)

    async def sealer(self, game_id: str) -> Sealer:
        """What opens the game's sealed events (see :meth:`GameCache.sealer`)."""
        return await self.cache.sealer(game_id)

    def engine_for(self, game: str, game_id: str = "") -> Engine[Any]:
        return self.cache.engine_for(game, game_id)

    # --- seats and commands ---------------------------------------------------------------------

    async def create_game(
        self,
        game: Any,
        options: Any,
        seats: Any,
        bots: Any = None,
        bots_only: Any = False,
        features: Mapping[str, Any] | None = None,
    ) -> GameProjection:
        """See :meth:`Seating.create_game`."""
        return await self.seating.create_game(game, options, seats, bots, bots_only, features)

    async def take_seat(
        self,
        game_id: str,
        name: Any,
        request_id: Any = None,
        client_seed: Any = None,
        rematch_token: str | None = None,
    ) -> tuple[int, str, GameProjection]:
        """See :meth:`Seating.take_seat`."""
        return await self.seating.take_seat(game_id, name, request_id, client_seed, rematch_token)

    async def rematch(self, game_id: str, token: str | None) -> tuple[str, int]:
        """See :meth:`Rematches.rematch`."""
        return await self.rematches.rematch(game_id, token)

    async def authenticate(self, game_id: str, token: str | None) -> int | None:
        """See :func:`service.play.auth.authenticate`."""
        return await authenticate(self.cache, game_id, token)

    async def execute(
        self, game_id: str, seat: int, client_id: str, command: Command, expected_version: int | None = None
    ) -> CommandResult:
        """See :meth:`CommandRunner.execute`."""
        return await self.commands.execute(game_id, seat, client_id, command, expected_version)

    # --- bots ------------------------------------------------------------------------------------

    def takeover_bot(self, game: str) -> str | None:
        """The bot that takes a seat that leaves a ``game`` that goes on."""
        return takeover_bot(self.bot_names(game))

    def bot_names(self, game: str) -> list[str]:
        """The names of the bots ``game`` offers, sorted (the catalog lists them)."""
        return sorted(self.bots.get(game, {}))

    def watch_bots(self, projection: GameProjection) -> None:
        """See :meth:`BotScheduler.watch`."""
        self.bot_scheduler.watch(projection)
