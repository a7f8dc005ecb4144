"""The public ledger's service side: what a new game records, and ``GET /ledger``'s answers.

Every game is recorded (:func:`record_game`) right after its meta is stored (which makes its id
ours) and before its creation batch is appended, so every game that exists is in the ledger.
A crash in between leaves an entry of a game with no events: it shows as a listed game that
never started, which hides nothing. The entry holds the game's public options only (the
engine's secret ones, such as a scripted ``tile_order``, are committed to by the seed
commitment, never listed) and the ``seed_commitment`` its ``game.created`` carries.

The head ``{"position", "hash", "signed_at"}`` is signed as an export is (Ed25519 over its
canonical JSON, one more field ``signature``), with the key the route hands in
(:func:`service.edge.ledger_routes.ledger_signer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from events.ledger import LedgerEntry
from events.protocol import Store
from service.errors import ErrorCode, ServiceError
from service.ops.logs import get_logger

__all__ = [
    "DEFAULT_LIMIT", "MAX_LIMIT", "Signer", "export_place", "game_answer", "page_answer", "record_game", "signed_head",
]

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
log = get_logger()


class Signer(Protocol):
    """What signs the head: a key that signs a JSON object as it signs an export
    (:class:`service.fairness.signing.NodeKey`; export's own protocol is not imported, since the
    export imports this module for its ``ledger`` field)."""

    def sign_export(self, export: dict[str, Any]) -> dict[str, Any]: ...


async def record_game(
    store: Store,
    game_id: str,
    game: str,
    public_options: Mapping[str, Any],
    commitment: str,
    created_ms: int,
    *,
    new_id: bool = False,
) -> LedgerEntry:
    """Append the new game's entry; the entry (its earlier one when a creation is retried).
    ``new_id``: the id was just drawn at random (:meth:`events.ledger.Ledger.record`)."""
    fields = {"game": game, "options": dict(public_options), "seed_commitment": commitment, "created": created_ms}
    entry = await store.ledger.record(game_id, fields, new_id=new_id)
    log.info("ledger.recorded", game_id=game_id, position=entry.position, hash=entry.hash)
    return entry


def signed_head(key: Signer, position: int, digest: str, now_ms: int) -> dict[str, Any]:
    """The ledger's head, signed: ``{"position", "hash", "signed_at", "signature"}``."""
    return key.sign_export({"position": position, "hash": digest, "signed_at": now_ms})


async def page_answer(store: Store, key: Signer, now_ms: int, start: int, limit: int) -> dict[str, Any]:
    """``GET /ledger?from=N&limit=M``: the entries from ``start`` (at most ``limit``, none past
    the head signed with them) and the position of the next page, ``None`` at the head."""
    position, digest = await store.ledger.head()
    entries = [entry for entry in await store.ledger.page(start, limit) if entry.position <= position]
    last = entries[-1].position if entries else max(start - 1, 0)
    return {
        "entries": [entry.as_dict() for entry in entries],
        "head": signed_head(key, position, digest, now_ms),
        "next": last + 1 if last < position else None,
    }


async def game_answer(store: Store, key: Signer, now_ms: int, game_id: str, limit: int) -> dict[str, Any]:
    """``GET /ledger?game=ID``: the game's entry and the entries from it towards the head (the
    first page of them; ``next`` pages on with ``?from=``), which link it to the signed head."""
    position = await store.ledger.position_of(game_id)
    if position is None:
        raise ServiceError(ErrorCode.NOT_FOUND, f"the ledger has no game {game_id!r}")
    answer = await page_answer(store, key, now_ms, position, limit)
    if not answer["entries"] or answer["entries"][0]["position"] != position:
        raise ServiceError(ErrorCode.NOT_FOUND, f"the ledger has no entry for game {game_id!r}")
    return {"entry": answer["entries"][0], **answer}


async def export_place(store: Store, game_id: str) -> dict[str, Any] | None:
    """The export's ``ledger``: ``{"position", "hash"}`` of the game's entry; ``None`` for a game
    recorded before the ledger (it has no entry)."""
    position = await store.ledger.position_of(game_id)
    entry = None if position is None else await store.ledger.entry_at(position)
    return None if entry is None else {"position": entry.position, "hash": entry.hash}
