"""The game's secrets and how the service commits to them: the seed and the secret options.

Each game has a secret 32-byte seed (in the store's meta, never in an event before the end)
and may have *secret options* (``Engine.secret_options``, such as a scripted ``tile_order``:
the future by definition). ``game.created`` carries only the public options and one
commitment to both secrets; ``game.finished`` reveals them, so anyone can check the commitment
and re-run every random outcome::

    seed_commitment = sha256(seed)                                   no secret options
    seed_commitment = sha256(seed || 0x00 || canonical JSON of the   with secret options
                             secret options {name: value})           (sorted keys, no spaces)

Games recorded with ``donjon-draw-1`` or ``donjon-draw-2`` draw from the *game seed*, not the server seed: each seat
contributes a value when it takes its seat (``client_seed`` of ``POST /games/{id}/seats``, or a
value derived from the server seed for a seat that sends none, a bot's included), and::

    contribution of a seat sending none = hex(HMAC-SHA256(server seed, "donjon-seat" || 0x00 || ascii(seat)))
    game seed = HMAC-SHA256(server seed, "donjon-seed-1" || for each seat in order: 0x00 || ascii(contribution))

The server seed is committed before any seat contributes, and a server-made contribution is fixed
by it, so neither the server nor any seat alone chooses the game seed (``docs/fairness.md``).

>>> commitment(bytes(32), {}) == hashlib.sha256(bytes(32)).hexdigest()
True
>>> server_contribution(bytes(32), 0) == server_contribution(bytes(32), 0) != server_contribution(bytes(32), 1)
True
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CLIENT_SEED",
    "SEED_BYTES",
    "commitment",
    "finished_payload",
    "game_seed",
    "new_seed",
    "secret_names",
    "server_contribution",
    "split_options",
]

SEED_BYTES = 32


def new_seed() -> bytes:
    return secrets.token_bytes(SEED_BYTES)


def secret_names(engine: Any) -> frozenset[str]:
    """The engine's secret options (none for an engine that does not declare any)."""
    return frozenset(getattr(engine, "secret_options", None) or ())


def split_options(engine: Any, options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(public, secret)``: what ``game.created`` may show, and the secret options' values."""
    hidden = secret_names(engine)
    public = {name: value for name, value in options.items() if name not in hidden}
    secret = {name: options.get(name) for name in sorted(hidden)}
    return public, secret


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def commitment(seed: bytes, secret_options: Mapping[str, Any]) -> str:
    """The ``seed_commitment`` of ``game.created`` (see the module docstring)."""
    if not secret_options:
        return hashlib.sha256(seed).hexdigest()
    return hashlib.sha256(seed + b"\x00" + _canonical(dict(secret_options))).hexdigest()


def finished_payload(seed: bytes, secret_options: Mapping[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """``game.finished``: the seed revealed, the secret options revealed (when the game has any)."""
    payload: dict[str, Any] = {"seed": seed.hex(), "summary": summary}
    if secret_options:
        payload["secret_options"] = dict(secret_options)
    return payload


CLIENT_SEED = re.compile(r"[\x21-\x7e]{1,128}")
"""What a seat's ``client_seed`` may be: 1 to 128 printable ASCII characters without spaces
(so the NUL-separated input of :func:`game_seed` is unambiguous)."""


def server_contribution(server_seed: bytes, seat: int) -> str:
    """The contribution of a seat that sent none: fixed by the committed server seed, so the
    server cannot pick it after seeing the others'."""
    return hmac.digest(server_seed, b"donjon-seat\x00" + str(seat).encode(), "sha256").hex()


def game_seed(server_seed: bytes, contributions: Sequence[str | None]) -> bytes:
    """The seed every draw of a ``donjon-draw-*`` game comes from (see the module docstring)."""
    missing = [seat for seat, value in enumerate(contributions) if value is None]
    if missing:
        raise ValueError(f"seats {missing} have no seed contribution yet")
    message = b"donjon-seed-1" + b"".join(b"\x00" + str(value).encode("ascii") for value in contributions)
    return hmac.digest(server_seed, message, "sha256")
