"""Who is asking: seat tokens, and the seat a token holds in a game.

A seat's token is handed out once, by ``POST /games/{id}/seats``, and stored only as its sha256
in the game's meta (``token:<sha256 hex>`` -> seat), so a read of the store reveals no token.
A token is bound to one game and one seat; another game's token is refused like a made-up one.

A seat request with a client-chosen ``request_id`` gets the token :func:`request_token`
derives from the game's secret seat key (random, in the meta, never sent), the game id and that
request id: a retry of the same request, on any node, yields the same token again, and the
store still holds only its hash. Whoever knows a request id can therefore get its seat's token
back by retrying that request, exactly as the client can: a request id is a credential like the
token, to be chosen at random and kept as carefully. A reader of the store alone learns neither
(the seat batch records only the sha256 of the request id, as its command id).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any, Protocol

from projections.game import GameProjection
from service.errors import ErrorCode, ServiceError

__all__ = [
    "REQUEST_ID",
    "SEAT_KEY_FIELD",
    "TOKEN_FIELD",
    "authenticate",
    "hash_token",
    "request_token",
    "seat_command_id",
    "seat_key",
    "seat_tokens",
]

TOKEN_FIELD = "token:"
"""Meta field prefix: ``token:<sha256 hex of the token>`` -> seat number."""
SEAT_KEY_FIELD = "seat_key"
"""Meta field: the game's secret seat key (hex), from which retried seat requests' tokens derive."""
REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{16,128}")
"""What a seat request's ``request_id`` may look like: long enough to be unguessable if random."""
_LEGACY_KEY_LABEL = b"donjon seat key\x00"


class _Tokens(Protocol):
    @property
    def tokens(self) -> dict[str, int]:
        """The token hashes seen so far: sha256 hex -> seat."""
        ...


class Seats(Protocol):
    """What :func:`authenticate` reads: the game cache (:class:`service.play.cache.GameCache`,
    which imports this module's meta readers, so this one names only what it needs of it)."""

    async def meta(self, game_id: str, *, refresh: bool = False) -> _Tokens: ...

    async def current(self, game_id: str) -> GameProjection: ...

    async def load(self, game_id: str) -> GameProjection: ...


def hash_token(token: str) -> str:
    """What the meta keeps of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def seat_key(meta: Mapping[str, Any], seed: bytes) -> bytes:
    """The game's seat key; a game whose meta predates seat keys derives one from its seed."""
    key = meta.get(SEAT_KEY_FIELD)
    if isinstance(key, str) and key:
        return bytes.fromhex(key)
    return hashlib.sha256(_LEGACY_KEY_LABEL + seed).digest()


def request_token(key: bytes, game_id: str, request_id: str) -> str:
    """The token of the seat that request ``request_id`` takes in ``game_id``: 43 URL-safe
    characters, like a random token, and the same on every try of that request."""
    mac = hmac.new(key, f"{game_id}\x00{request_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def seat_command_id(request_id: str) -> str:
    """The command id recorded on the seat batch of request ``request_id``: its sha256, so the
    store answers a retry that already landed, and the log does not show the request id."""
    return "seat:" + hashlib.sha256(request_id.encode()).hexdigest()


def seat_tokens(meta: Mapping[str, Any]) -> dict[str, int]:
    """The token hashes a game's meta holds: sha256 hex -> seat."""
    return {key[len(TOKEN_FIELD) :]: int(value) for key, value in meta.items() if key.startswith(TOKEN_FIELD)}


async def authenticate(cache: Seats, game_id: str, token: str | None) -> int | None:
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
