"""The node's game cache: each game's projection and meta, read through from the store, written
through by this node's own appends.

Projections are immutable, so the stream reader can :meth:`GameCache.offer` a newer one while a
command decides on an older one and both stay correct: the command's append carries the version
it decided on, and the store refuses it if the game moved (see :mod:`service.play.commands`).

The cache is bounded by count (``max_games``, ``DONJON_CACHE_GAMES``) and by estimated bytes
(``max_bytes``, ``DONJON_CACHE_BYTES``; :func:`estimated_bytes`). Over either bound it forgets
the least recently used finished game first, then the least recently used other game, and
never a game ``keep`` names (one with sockets on this node, or whose bots this node drives or
watches): only such games can hold it above its bounds. A game it forgot is folded again from
its stream when asked for.

Every append of this node goes through :meth:`GameCache.commit`. The cache writes nothing but
the stream: it tells its :class:`~service.play.listeners.GameListener`, given at construction,
of each append (before it is sent, when it is done, once it landed) and of each game loaded or
forgotten, and asks it which games to keep. The listener (the game service) passes that on to
the lobby and due-bots index, the bot scheduler, the clock keeper and the stream reader.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from events.archive.base import GamePruned
from events.chain import LEGACY_CHAIN, genesis
from events.protocol import Store
from games.base import Command, Engine
from projections.game import GameProjection, Status
from service.errors import ErrorCode, ServiceError
from service.fairness.sealing import Sealer
from service.fairness.seed_vault import SealedSeedError, SeedVault, opened_meta
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play.auth import seat_key, seat_tokens
from service.play.decisions import Batch
from service.play.listeners import Append, GameListener

__all__ = ["CACHE_BYTES", "CACHE_GAMES", "GAME_ID", "GameCache", "GameMeta", "estimated_bytes"]

CACHE_GAMES = 5_000
"""Default bound on the number of cached games (``DONJON_CACHE_GAMES``)."""
CACHE_BYTES = 256 * 1024 * 1024
"""Default bound on the cached games' estimated bytes (``DONJON_CACHE_BYTES``)."""
BYTES_PER_GAME = 2048
BYTES_PER_EVENT = 640
"""The estimate's terms. Measured (the marginal size of one more finished game's projection,
shared objects left out): Carcassonne ~143 KB for 233 events (~610 B each), The Castle ~113 KB
for 277 events (~410 B), Castle Panic ~5 KB for 153 events. So the estimate fits the heaviest
game and overstates the light ones, which only makes the bound stricter."""
_MAX_PASSED = 64
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a game id may look like (the service makes 16 hex digits); anything else is not found."""


def estimated_bytes(projection: GameProjection) -> int:
    """What a cached projection is taken to weigh: grows with the events folded into it."""
    return BYTES_PER_GAME + BYTES_PER_EVENT * projection.version


@dataclass(slots=True)
class GameMeta:
    """The immutable parts of a game's meta, plus the token hashes seen so far."""

    game: str
    seed: bytes
    options: dict[str, Any] | None = None
    """The full normalized options, secret ones included (``None`` in metas that predate them)."""
    tokens: dict[str, int] = field(default_factory=dict)
    seat_key: bytes = b""
    """The key the tokens of seat requests with a ``request_id`` derive from (see :mod:`service.play.auth`)."""
    sealer: Sealer | None = field(default=None, repr=False, compare=False)
    """Seals and opens the game's events at rest (:mod:`service.fairness.sealing`); set by the cache."""

    def full_options(self, projection: GameProjection) -> dict[str, Any]:
        return self.options if self.options is not None else dict(projection.options)


class GameCache:
    """Projections, metas and per-game locks of the games this node serves."""

    def __init__(
        self,
        store: Store,
        engines: Mapping[str, Engine[Any]],
        metrics: Metrics,
        listener: GameListener,
        *,
        max_games: int = CACHE_GAMES,
        max_bytes: int = CACHE_BYTES,
        vault: SeedVault | None = None,
    ) -> None:
        self.store = store
        self.vault = vault
        """Seals the seeds of new games in their metas (``None``: kept in clear, as in tests)."""
        self.engines = engines
        self.metrics = metrics
        self.listener = listener
        """Told of every append, load and eviction; says which games to keep."""
        self.max_games = max_games
        self.max_bytes = max_bytes
        self._projections: dict[str, GameProjection] = {}
        self._finished: OrderedDict[str, int] = OrderedDict()
        self._others: OrderedDict[str, int] = OrderedDict()
        """Game -> its estimated bytes, least recently used first, finished games apart, so the
        first to forget is found at once."""
        self.bytes = 0
        """The estimated bytes of every cached projection."""
        self._meta: dict[str, GameMeta] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.log = get_logger()
        metrics.cache_games.track(lambda: len(self._projections))  # read when scraped, not set per append
        metrics.cache_bytes.track(lambda: self.bytes)

    # --- projections -------------------------------------------------------------------------

    def cached(self, game_id: str) -> GameProjection | None:
        return self._projections.get(game_id)

    def _touch(self, game_id: str) -> None:
        """The game was used: it is the last to forget now."""
        for listing in (self._finished, self._others):
            if game_id in listing:
                listing.move_to_end(game_id)

    def offer(self, projection: GameProjection) -> None:
        """Keep ``projection`` if it is newer than the cached one (the stream reader calls this)."""
        current = self._projections.get(projection.game_id)
        if current is None or projection.version > current.version:
            self._remember(projection)

    def __len__(self) -> int:
        return len(self._projections)

    def _remember(self, projection: GameProjection) -> None:
        game_id = projection.game_id
        self._unlist(game_id)
        size = estimated_bytes(projection)
        self._projections[game_id] = projection
        (self._finished if projection.status is Status.FINISHED else self._others)[game_id] = size
        self.bytes += size
        self._trim()

    def _unlist(self, game_id: str) -> None:
        """Take the game out of the recency lists and the byte count (not out of the cache)."""
        for listing in (self._finished, self._others):
            size = listing.pop(game_id, None)
            if size is not None:
                self.bytes -= size

    def _over_bound(self) -> bool:
        return len(self._projections) > self.max_games or self.bytes > self.max_bytes

    def _trim(self) -> None:
        """Forget games until the cache is within its bounds, finished ones first. Games that
        must stay go to the recent end of their list, and at most ``_MAX_PASSED`` are passed
        over per list and call, so a cache held above its bounds by such games costs little
        per call, and the next calls look at the ones after them."""
        for listing in (self._finished, self._others):
            passes = min(len(listing), _MAX_PASSED)
            while self._over_bound() and listing and passes > 0:
                passes -= 1
                game_id = next(iter(listing))
                lock = self._locks.get(game_id)
                if self.listener.keeps(game_id) or (lock is not None and lock.locked()):
                    listing.move_to_end(game_id)
                    continue
                self._forget(game_id)

    def _forget(self, game_id: str) -> None:
        self._unlist(game_id)
        del self._projections[game_id]
        self._meta.pop(game_id, None)
        self._locks.pop(game_id, None)
        self.metrics.cache_evictions.inc()
        self.listener.evicted(game_id)

    async def events(self, game_id: str, first: int = 1, last: int | None = None) -> list[Any]:
        """The game's events ``first`` to ``last`` (inclusive; default: to the end) with their
        sealed parts open (:mod:`service.fairness.sealing`): what the fold and every viewer's redaction
        take, read once per node, whoever asks."""
        sealer = await self.sealer(game_id)
        try:
            return sealer.open_all(await self.store.read(game_id, first, last))
        except GamePruned as exc:  # every read of a game goes through here: HTTP and the websocket alike
            raise ServiceError(ErrorCode.GAME_PRUNED, str(exc)) from None

    async def sealer(self, game_id: str) -> Sealer:
        """What seals the game's events at rest and opens them (made once per meta read)."""
        meta = await self.meta(game_id)
        if meta.sealer is None:
            meta.sealer = Sealer(game_id, meta.seed)
        return meta.sealer

    async def load(self, game_id: str) -> GameProjection:
        """The game folded to the stream's latest version (cache, then catch up from the stream)."""
        projection = self._projections.get(game_id)
        fresh = projection is None
        if projection is None:
            meta = await self.meta(game_id)
            projection = GameProjection.empty(game_id, self.engine_for(meta.game, game_id))
        envelopes = await self.events(game_id, projection.version + 1)
        projection = projection.apply_all(envelopes)
        if projection.version == 0:
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        self.offer(projection)
        self._touch(game_id)
        if fresh:
            await self.listener.loaded(projection)
        return self._projections.get(game_id, projection)

    async def current(self, game_id: str) -> GameProjection:
        """The cached projection, or the game loaded when the cache does not have it."""
        projection = self._projections.get(game_id)
        if projection is None:
            return await self.load(game_id)
        self._touch(game_id)
        return projection

    async def projection_at(self, game_id: str, version: int) -> GameProjection:
        """The game as it was at ``version`` (replay): folded from the start, not cached."""
        meta = await self.meta(game_id)
        engine = self.engine_for(meta.game, game_id)
        envelopes = await self.events(game_id, 1, version)
        projection = GameProjection.fold(game_id, engine, envelopes)
        if projection.version == 0:
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        return projection

    # --- writing through -------------------------------------------------------------------

    async def commit(
        self, before: GameProjection, batch: Batch, *, lobby_changed: bool = False
    ) -> tuple[Any, GameProjection | None]:
        """Append ``batch`` (decided on ``before``) and cache the projection after it, telling
        the listener before the append, when it is done, and once it landed (``lobby_changed``:
        the batch changes the game's lobby entry; the end always does).

        Returns the store's result and the new projection, which is ``None`` when the store had
        applied the batch's command id already (nothing appended). Raises the store's
        ``ConflictError`` when another writer moved the game first."""
        append = Append(before, batch, batch.applied_to(before), lobby_changed)
        await self.listener.appending(append)
        after = append.after
        try:
            link = await self._link(before, batch)
            stored, command = await self._sealed(before, batch)
            result = await self.store.append(
                batch.game_id,
                stored,
                expected_version=batch.expected_version,
                command_id=batch.command_id,
                actor=batch.actor,
                command=command,
                ts=batch.ts,
                link=link,
            )
            if not result.duplicate:
                if after.head_hash != result.head:  # the fold kept the head before the batch (Batch.folded)
                    after = after.but(head_hash=result.head)
                self.offer(after)
        finally:
            self.listener.append_done(append)
        if result.duplicate:
            return result, None
        self.metrics.events_appended.inc(len(batch.events))
        if after.status is Status.FINISHED:
            self.log.info("game.finished", game_id=after.game_id, version=after.version, summary=after.summary)
        await self.listener.appended(append, after)
        return result, after

    async def _sealed(self, before: GameProjection, batch: Batch) -> tuple[list[Any], Command | None]:
        """``batch``'s events and command as the store keeps them: what spectators may see in
        clear, the rest sealed, in a game whose ``game.created`` names a sealing (``hidden``)."""
        hidden = before.hidden
        if before.version == 0 and batch.events:
            hidden = batch.events[0].payload.get("hidden")
        if hidden is None:
            return list(batch.events), batch.command
        sealer = await self.sealer(batch.game_id)
        return sealer.seal(before.engine, batch.events, batch.expected_version + 1, batch.command, hidden)

    async def _link(self, before: GameProjection, batch: Batch) -> str | None:
        """The chain hash ``batch`` builds on in a SHA-256 game (``None``: a SHA-1 game, which
        the store's script hashes); read from the store when the cache does not know it."""
        if before.version == 0:
            chain = str(batch.events[0].payload.get("chain", LEGACY_CHAIN)) if batch.events else LEGACY_CHAIN
            return None if chain == LEGACY_CHAIN else genesis(chain)
        if before.chain == LEGACY_CHAIN:
            return None
        if before.head_hash:
            return before.head_hash
        version, head = await self.store.head(before.game_id)
        # A head of another version fails the store's version check first: a plain conflict.
        return head if version == before.version else genesis(before.chain)

    # --- metas and engines -----------------------------------------------------------------

    def secret_fields(
        self, game_id: str, seed: bytes, secret_options: Mapping[str, Any], seat_key: bytes
    ) -> dict[str, Any]:
        """The meta fields that keep a new game's secrets (its seed, secret options and seat key):
        sealed with the node key when there is one (:mod:`service.fairness.seed_vault`), else in clear."""
        if self.vault is not None:
            return self.vault.meta_fields(game_id, seed, secret_options, seat_key)
        return {"seed": seed.hex(), "secret_options": dict(secret_options), "seat_key": seat_key.hex()}

    def remember_meta(self, game_id: str, meta: GameMeta) -> None:
        """The meta of a game this node just created (it wrote it, so need not read it back)."""
        self._meta[game_id] = meta

    def game_name(self, game_id: str) -> str:
        """The game a cached meta names (``"?"`` when this node has not read it)."""
        meta = self._meta.get(game_id)
        return meta.game if meta else "?"

    async def meta(self, game_id: str, *, refresh: bool = False) -> GameMeta:
        """The game's meta (cached; ``refresh`` reads the store again, for new tokens)."""
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        meta = self._meta.get(game_id)
        if meta is not None and not refresh:
            return meta
        stored = await self.store.get_meta(game_id)
        try:
            raw = None if stored is None else opened_meta(game_id, stored, self.vault)
        except SealedSeedError as exc:
            raise ServiceError(ErrorCode.INTERNAL, str(exc)) from None
        seed = raw.get("seed") if raw is not None else None
        if raw is None or "game" not in raw or not isinstance(seed, str):
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        options = raw.get("options")
        meta = GameMeta(
            game=raw["game"],
            seed=bytes.fromhex(seed),
            options={**options, **raw.get("secret_options", {})} if isinstance(options, dict) else None,
            tokens=seat_tokens(raw),
            seat_key=seat_key(raw, bytes.fromhex(seed)),
        )
        self._meta[game_id] = meta
        return meta

    def engine_for(self, game: str, game_id: str = "") -> Engine[Any]:
        engine = self.engines.get(game)
        if engine is None:
            raise ServiceError(
                ErrorCode.NOT_FOUND, f"game {game_id!r} is a {game!r}, which this service does not serve"
            )
        return engine

    def lock(self, game_id: str) -> asyncio.Lock:
        """The game's lock on this node: one decision at a time per game and node."""
        lock = self._locks.get(game_id)
        if lock is None:
            lock = self._locks[game_id] = asyncio.Lock()
        return lock
