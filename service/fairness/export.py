"""``GET /games/{id}/export``: a finished game's whole log as one JSON file an auditor can check.

Every event comes with its stored msgpack body (base64), ``prev_hash`` and ``hash``, exactly the bytes
the append script hashed (:mod:`events.chain`), so a verifier in any language re-computes the chain
without trusting the service's decoding; ``seed`` and ``secret_options`` are copied from the log's
``game.finished`` body (a verifier should read them from that body, which the chain covers). The node
signs it with the deployment's current key (:func:`signed_export`, :mod:`service.fairness.signing`,
:mod:`service.fairness.deployment_keys`): ``signature`` is one more top-level field,
computed over the canonical JSON of every other field (:func:`signed_bytes`), so verifiers of the
unsigned shape keep working. ``chain.algorithm`` and ``chain.genesis`` are the game's own (SHA-256
for games created since v1.2, SHA-1 before; ``docs/fairness.md``).

The format is ``donjon.export/2``: ``/1`` plus ``exported_at``, the time (ms since the epoch) the
export was signed, which a pinned verifier compares with the signing key's retirement (a key
retired before it cannot have signed it). ``/1`` files still verify.

A game that has not finished is refused with ``not_finished``: before the end the seed is secret, so
the stored bodies' sealed parts (hands, the Overlord's tokens, commands: :mod:`service.fairness.sealing`) do
not open, and a spectator delay would not hold. The export carries the bodies as stored, sealed parts
included; a verifier opens them with the seed ``game.finished`` reveals.

The export covers the stream up to ``game.finished``: a ``game.rematch`` link appended after it is
not exported as an event, its game id is the export's ``rematch`` field instead (signed with the rest).
``ledger`` names the game's entry in the public ledger (``{"position", "hash"}``,
:mod:`service.fairness.ledger`), for games recorded since there is one.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Protocol

import msgpack

from events.chain import chain_of_body, genesis
from events.protocol import Store
from service.errors import ErrorCode, ServiceError
from service.fairness.ledger import export_place


class Signer(Protocol):
    """What signs an export: the deployment's current key (:class:`service.fairness.signing.NodeKey`, which
    imports :func:`signed_bytes` from here, so this module names only what it needs of it)."""

    def sign_export(self, export: dict[str, Any]) -> dict[str, Any]: ...

__all__ = [
    "EXPORT_FORMAT", "EXPORT_FORMATS", "chain_description", "export_file_bytes", "export_game", "finished_part",
    "signed_bytes", "signed_export",
]

EXPORT_FORMAT = "donjon.export/2"
EXPORT_FORMATS = ("donjon.export/1", EXPORT_FORMAT)
"""Every format a verifier accepts: ``/1`` files (no ``exported_at``) still verify."""


def chain_description(algorithm: str) -> str:
    """The export's ``chain.algorithm``: what each hash is of (``docs/fairness.md``)."""
    return f"{algorithm}(prev_hash_hex || msgpack_body)"


async def export_game(store: Store, game_id: str, game: str, exported_at: int | None = None) -> dict[str, Any]:
    """The export of a finished game at ``exported_at`` (ms; now by default); :class:`ServiceError`
    ``not_finished`` for any other."""
    entries, rematch = finished_part(await store.raw_entries(game_id))
    last = msgpack.unpackb(entries[-1][1], raw=False) if entries else {}
    if last.get("type") != "game.finished":
        raise ServiceError(
            ErrorCode.NOT_FINISHED, f"game {game_id!r} has not finished: its log is exported only after the end"
        )
    revealed = last.get("payload") or {}
    version, head = entries[-1][0], entries[-1][3]
    algorithm = chain_of_body(entries[0][1])
    export: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "exported_at": int(time.time() * 1000) if exported_at is None else exported_at,
        "id": game_id,
        "game": game,
        "status": "finished",
        "chain": {"algorithm": chain_description(algorithm), "genesis": genesis(algorithm), "version": version,
                  "head": head},
        "seed": revealed.get("seed"),
        "events": [
            {"version": v, "body": base64.b64encode(body).decode("ascii"), "prev_hash": prev, "hash": hash_}
            for v, body, prev, hash_ in entries
        ],
    }
    if "secret_options" in revealed:
        export["secret_options"] = revealed["secret_options"]
    if rematch is not None:
        export["rematch"] = rematch
    place = await export_place(store, game_id)
    if place is not None:
        export["ledger"] = place
    return export


def finished_part(
    entries: list[tuple[int, bytes, str, str]],
) -> tuple[list[tuple[int, bytes, str, str]], str | None]:
    """The entries up to ``game.finished`` and the id of the rematch linked after it (the one
    event that may follow the end, ``docs/fairness.md``), or ``None``; all of them, ``None``,
    for a log that has not finished."""
    for index in range(len(entries) - 1, -1, -1):
        body = msgpack.unpackb(entries[index][1], raw=False)
        if body.get("type") == "game.finished":
            after = [msgpack.unpackb(entry[1], raw=False) for entry in entries[index + 1:]]
            links = [event.get("payload", {}).get("id") for event in after if event.get("type") == "game.rematch"]
            return entries[: index + 1], (str(links[0]) if links else None)
        if body.get("type") != "game.rematch":
            break
    return entries, None


async def signed_export(
    store: Store, game_id: str, game: str, key: Signer, exported_at: int | None = None
) -> dict[str, Any]:
    """The export of a finished game at ``exported_at`` (ms; now by default), signed with the
    deployment's ``key``."""
    return key.sign_export(await export_game(store, game_id, game, exported_at))


def export_file_bytes(signed: dict[str, Any]) -> bytes:
    """An export file's bytes, as ``donjon export`` writes it and ``donjon archive prune`` keeps it."""
    return (json.dumps(signed, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def signed_bytes(export: dict[str, Any]) -> bytes:
    """The bytes a signature covers: canonical JSON (sorted keys, no spaces) without ``signature``."""
    unsigned = {key: value for key, value in export.items() if key != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
