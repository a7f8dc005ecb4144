"""Secret options: recorded in a game's first event with a salted commitment, redacted for every viewer."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from games.base.rng import Rng
from games.base.values import Event

__all__ = ["SECRET_SALT", "redact_secrets", "secret_digest", "secret_fields"]


SECRET_SALT = "secret_salt"
"""Payload key of the salt of every commitment in an event made by :func:`secret_fields`."""


def secret_digest(value: Any, salt: str) -> str | None:
    """The commitment to a secret option's value: sha256 of ``salt``, a colon and the value as
    compact JSON with sorted keys; ``None`` when the option is not set.

    The salt keeps a short value (a puzzle's five tiles) from being found by trying every
    possibility against the published digest.

    >>> secret_digest(["E", "U"], "ab") == hashlib.sha256(b'ab:["E","U"]').hexdigest()
    True
    """
    if value is None:
        return None
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{salt}:{text}".encode()).hexdigest()


def secret_fields(secret: frozenset[str], options: Mapping[str, Any], rng: Rng) -> dict[str, Any]:
    """Payload fields recording the secret options of a game's first event: per option its
    value and ``<name>_sha256`` (:func:`secret_digest`), and the salt under
    :data:`SECRET_SALT` (``None`` when no secret is set).

    The salt is ``rng.secret_salt()``, made without drawing from it: a secret option changes no
    other random outcome, and the salt is as secret as the game's seed.
    """
    fields: dict[str, Any] = {name: options.get(name) for name in sorted(secret)}
    salt = None
    if any(value is not None for value in fields.values()):
        salt = rng.secret_salt()
    for name in sorted(secret):
        fields[f"{name}_sha256"] = secret_digest(fields[name], salt or "")
    fields[SECRET_SALT] = salt
    return fields


def redact_secrets(event: Event, secret: frozenset[str]) -> Event:
    """``event`` with the values of the secret options and their salt replaced by ``None``; the
    commitments stay. Events without secret fields come back as they are."""
    payload = event.payload
    hidden = [name for name in (*secret, SECRET_SALT) if payload.get(name) is not None]
    if not hidden:
        return event
    return Event(event.type, {**payload, **dict.fromkeys(hidden)})
