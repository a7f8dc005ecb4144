"""A finished game's whole log as one JSON file an auditor can check offline (``donjon export``).

Every event comes with its stored msgpack body (base64), ``prev_hash`` and ``hash``, exactly the
bytes the chain hashed (:mod:`events.chain`), so a verifier in any language re-computes the chain
without trusting the service's decoding; ``seed`` and ``secret_options`` are copied from the log's
``game.finished`` body (a verifier reads them from that body, which the chain covers). The node
signs it (:mod:`service.signing`): ``signature`` is one more top-level field, over the canonical
JSON of every other field (:func:`service.signing.signed_bytes`).

A game that has not finished is refused (:class:`NotFinished`): before the end the seed is secret
and the stored bodies hold what some viewers may not see (hands, the Overlord's tokens).
"""

from __future__ import annotations

import base64
from typing import Any

from events.chain import LEGACY_CHAIN, chain_of_body, genesis
from events.codec import encode_body

__all__ = ["EXPORT_FORMAT", "NotFinished", "chain_description", "export_game"]

EXPORT_FORMAT = "donjon.export/1"


class NotFinished(ValueError):
    """The game has not finished: its log is exported only after the end."""


def chain_description(algorithm: str) -> str:
    """The export's ``chain.algorithm``: what each hash is of (``docs/fairness.md``)."""
    return f"{algorithm}(prev_hash_hex || msgpack_body)"


async def export_game(store: Any, game_id: str, game: str) -> dict[str, Any]:
    """The unsigned export of a finished game; :class:`NotFinished` for any other."""
    envelopes = await store.read(game_id, upcast=False)
    if not envelopes or envelopes[-1].type != "game.finished":
        raise NotFinished(f"game {game_id!r} has not finished: its log is exported only after the end")
    bodies = [encode_body(envelope) for envelope in envelopes]
    algorithm = chain_of_body(bodies[0]) if bodies else LEGACY_CHAIN
    revealed = envelopes[-1].payload
    export: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "id": game_id,
        "game": game,
        "status": "finished",
        "chain": {
            "algorithm": chain_description(algorithm),
            "genesis": genesis(algorithm),
            "version": envelopes[-1].version,
            "head": envelopes[-1].hash,
        },
        "seed": revealed.get("seed"),
        "events": [
            {"version": e.version, "body": base64.b64encode(body).decode("ascii"), "prev_hash": e.prev_hash,
             "hash": e.hash}
            for e, body in zip(envelopes, bodies, strict=True)
        ],
    }
    if "secret_options" in revealed:
        export["secret_options"] = revealed["secret_options"]
    return export
