"""Who is asking: seat tokens, and the seat a token holds in a game.

A seat's token is handed out once, by ``POST /games/{id}/seats``, and stored only as its sha256
in the game's meta (``token:<sha256 hex>`` -> seat), so a read of the store reveals no token.
A token is bound to one game and one seat; another game's token is refused like a made-up one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from service.errors import ErrorCode, ServiceError

if TYPE_CHECKING:
    from service.cache import GameCache

__all__ = ["TOKEN_FIELD", "authenticate", "hash_token", "seat_tokens"]

TOKEN_FIELD = "token:"
"""Meta field prefix: ``token:<sha256 hex of the token>`` -> seat number."""


def hash_token(token: str) -> str:
    """What the meta keeps of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def seat_tokens(meta: Mapping[str, Any]) -> dict[str, int]:
    """The token hashes a game's meta holds: sha256 hex -> seat."""
    return {key[len(TOKEN_FIELD) :]: int(value) for key, value in meta.items() if key.startswith(TOKEN_FIELD)}


async def authenticate(cache: GameCache, game_id: str, token: str | None) -> int | None:
    """The seat ``token`` holds in ``game_id``; ``None`` for no token (a spectator).

    Raises ``unauthorized`` for a token that is not one of this game's (another game's token
    included), and ``not_found`` for an unknown game. A token this node has not seen yet (its
    seat was taken on another node) is looked up in the store before it is refused.
    """
    if token is None:
        await cache.meta(game_id)
        return None
    digest = hash_token(token)
    meta = await cache.meta(game_id)
    seat = meta.tokens.get(digest)
    if seat is None:
        meta = await cache.meta(game_id, refresh=True)
        seat = meta.tokens.get(digest)
    if seat is None:
        raise ServiceError(ErrorCode.UNAUTHORIZED, f"that token holds no seat in game {game_id!r}")
    projection = await cache.current(game_id)
    if projection.names[seat] is None:
        # The hash is written before the seat's append: the seat may be in the stream already.
        projection = await cache.load(game_id)
    if projection.names[seat] is None:
        raise ServiceError(ErrorCode.UNAUTHORIZED, f"that token holds no seat in game {game_id!r}")
    return seat
