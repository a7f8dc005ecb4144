"""Ed25519 signing keys: one signs game exports, and ``GET /keys`` publishes the public halves.

The private key is 32 bytes, kept sealed in the store's keyring
(:mod:`service.fairness.deployment_keys`: one key per deployment). Its id is the first 16 hex
digits of ``sha256(raw public key)``; a signature whose ``key_id`` is not that of its
``public_key`` is refused (a file must not borrow another key's name). An export's ``signature`` is::

    {"algorithm": "ed25519", "key_id": "<16 hex>", "public_key": "<64 hex>", "value": "<base64>"}

over the canonical JSON of every other top-level field of the export (sorted keys, no spaces,
UTF-8; :func:`service.fairness.export.signed_bytes`), so one byte changed anywhere in the file breaks it,
and a verifier given the deployment's public keys (``donjon verify --key`` / ``--keys``) refuses a
file signed by any other key.

>>> key = NodeKey(bytes(32))
>>> signed = key.sign_export({"format": "x", "events": []})
>>> check_signature(signed, key.public_hex) is None
True
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from service.fairness.export import signed_bytes
from service.fairness.key_files import key_bytes, moved_out_of_data

__all__ = [
    "ALGORITHM",
    "KEY_FILE",
    "NodeKey",
    "check_signature",
    "strict_base64",
    "key_id",
    "old_signing_key",
]

ALGORITHM = "ed25519"
KEY_FILE = "signing.key"
SIGNATURE = "signature"


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()[:16]


class NodeKey:
    """One node's signing key."""

    def __init__(self, private_key: bytes) -> None:
        self._private = Ed25519PrivateKey.from_private_bytes(private_key)
        self.public = self._private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def public_hex(self) -> str:
        return self.public.hex()

    @property
    def id(self) -> str:
        return key_id(self.public)

    def describe(self) -> dict[str, str]:
        """The key as ``GET /keys`` lists it."""
        return {"id": self.id, "algorithm": ALGORITHM, "public_key": self.public_hex}

    def sign_export(self, export: dict[str, Any]) -> dict[str, Any]:
        """``export`` with its ``signature`` field (any earlier one replaced)."""
        value = self._private.sign(signed_bytes(export))
        signature = {"algorithm": ALGORITHM, "key_id": self.id, "public_key": self.public_hex,
                     "value": base64.b64encode(value).decode("ascii")}
        return {**{k: v for k, v in export.items() if k != SIGNATURE}, SIGNATURE: signature}


def check_signature(export: dict[str, Any], pinned_keys: str | Iterable[str] | None = None) -> str | None:
    """``None`` when ``export`` carries a valid Ed25519 signature whose ``key_id`` is its public
    key's (by ``pinned_keys``, one key or several of 64 hex digits each, when given); else why
    not, in a few words."""
    if isinstance(pinned_keys, str):
        pinned_keys = [pinned_keys]
    signature = export.get(SIGNATURE)
    if not isinstance(signature, dict):
        return "the file is not signed"
    if signature.get("algorithm") != ALGORITHM:
        return f"the signature's algorithm is {str(signature.get('algorithm'))[:40]!r}, not {ALGORITHM!r}"
    try:
        public = bytes.fromhex(_text(signature.get("public_key")))
        value = strict_base64(signature.get("value"))
        Ed25519PublicKey.from_public_bytes(public).verify(value, signed_bytes(export))
    except (ValueError, TypeError, InvalidSignature):
        return "the signature does not match the file's contents"
    if signature.get("key_id") != key_id(public):
        return f"the key_id {str(signature.get('key_id'))[:40]!r} is not {key_id(public)}, the id of the signing key"
    if pinned_keys is not None and public.hex() not in {key.strip().lower() for key in pinned_keys}:
        return f"the file is signed by key {key_id(public)}, which is not among the trusted keys given"
    return None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def strict_base64(text: Any) -> bytes:
    """The bytes of ``text`` in RFC 4648 base64 (``A-Z a-z 0-9 + /``, padded with ``=`` to a
    multiple of 4, no line breaks or spaces) written the one way those bytes encode (unused bits
    zero); :class:`ValueError` for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"not a base64 string: {type(text).__name__}")
    decoded = base64.b64decode(text, validate=True)
    if base64.b64encode(decoded).decode("ascii") != text:
        raise ValueError("not the canonical base64 of its bytes")
    return decoded


def old_signing_key(data_dir: Path, keys_dir: Path) -> bytes | None:
    """The ``signing.key`` an older version made (moved from the data folder to the keys folder),
    which becomes the deployment's first key so its exports keep verifying; ``None`` when there is none."""
    path = moved_out_of_data(KEY_FILE, data_dir, keys_dir)
    return key_bytes(path.read_text(), str(path)) if path.exists() else None
