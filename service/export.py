"""``GET /games/{id}/export``: a finished game's whole log as one JSON file an auditor can check.

Every event comes with its stored msgpack body (base64), ``prev_hash`` and ``hash``, exactly the bytes
the append script hashed (:mod:`events.chain`), so a verifier in any language re-computes the chain
without trusting the service's decoding; ``seed`` and ``secret_options`` are copied from the log's
``game.finished`` body (a verifier should read them from that body, which the chain covers). The file
has no ``signature`` yet: a signed export (issue 14) adds it as one more top-level field, computed over
the canonical JSON of every other field (:func:`signed_bytes`), so verifiers of this shape keep working.

A game that has not finished is refused with ``not_finished``: before the end the seed is secret and
the stored bodies hold what some viewers may not see (hands, the Overlord's tokens, bot commands).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import msgpack

from events.envelope import GENESIS_HASH
from events.store import EventStore
from service.errors import ErrorCode, ServiceError

__all__ = ["EXPORT_FORMAT", "export_game", "signed_bytes"]

EXPORT_FORMAT = "donjon.export/1"
CHAIN_ALGORITHM = "sha1(prev_hash_hex || msgpack_body)"


async def export_game(store: EventStore, game_id: str, game: str) -> dict[str, Any]:
    """The export of a finished game; :class:`ServiceError` ``not_finished`` for any other."""
    entries = await store.raw_entries(game_id)
    last = msgpack.unpackb(entries[-1][1], raw=False) if entries else {}
    if last.get("type") != "game.finished":
        raise ServiceError(
            ErrorCode.NOT_FINISHED, f"game {game_id!r} has not finished: its log is exported only after the end"
        )
    revealed = last.get("payload") or {}
    version, head = entries[-1][0], entries[-1][3]
    export: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "id": game_id,
        "game": game,
        "status": "finished",
        "chain": {"algorithm": CHAIN_ALGORITHM, "genesis": GENESIS_HASH, "version": version, "head": head},
        "seed": revealed.get("seed"),
        "events": [
            {"version": v, "body": base64.b64encode(body).decode("ascii"), "prev_hash": prev, "hash": hash_}
            for v, body, prev, hash_ in entries
        ],
    }
    if "secret_options" in revealed:
        export["secret_options"] = revealed["secret_options"]
    return export


def signed_bytes(export: dict[str, Any]) -> bytes:
    """The bytes a signature covers: canonical JSON (sorted keys, no spaces) without ``signature``."""
    unsigned = {key: value for key, value in export.items() if key != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
