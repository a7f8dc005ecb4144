"""The game's secrets and how the service commits to them: the seed and the secret options.

Each game has a secret 32-byte seed (in the store's meta, never in an event before the end)
and may have *secret options* (``Engine.secret_options``, such as a scripted ``tile_order``:
the future by definition). ``game.created`` carries only the public options and one
commitment to both secrets; ``game.finished`` reveals them, so anyone can check the commitment
and re-run every random outcome::

    seed_commitment = sha256(seed)                                   no secret options
    seed_commitment = sha256(seed || 0x00 || canonical JSON of the   with secret options
                             secret options {name: value})           (sorted keys, no spaces)

>>> commitment(bytes(32), {}) == hashlib.sha256(bytes(32)).hexdigest()
True
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from typing import Any

__all__ = ["SEED_BYTES", "new_seed", "secret_names", "split_options", "commitment", "finished_payload"]

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
