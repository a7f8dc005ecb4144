"""The node's Ed25519 key: it signs game exports, and ``GET /keys`` publishes its public half.

The private key is 32 bytes: ``DONJON_SIGNING_KEY`` (64 hex digits), else the file
``signing.key`` in the data folder, made on first use with mode 0600. Its id is the first 16 hex
digits of ``sha256(raw public key)``. An export's ``signature`` is::

    {"algorithm": "ed25519", "key_id": "<16 hex>", "public_key": "<64 hex>", "value": "<base64>"}

over the canonical JSON of every other top-level field of the export (sorted keys, no spaces,
UTF-8; :func:`service.fairness.export.signed_bytes`), so one byte changed anywhere in the file breaks it,
and a verifier given the node's public key (``donjon verify --key``) refuses a file signed by any other key.

>>> key = NodeKey(bytes(32))
>>> signed = key.sign_export({"format": "x", "events": []})
>>> check_signature(signed, key.public_hex) is None
True
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from service.fairness.export import signed_bytes
from service.fairness.key_files import setting_or_file_key

__all__ = [
    "ALGORITHM",
    "KEY_FILE",
    "NodeKey",
    "check_signature",
    "key_id",
    "load_or_create_signing_key",
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


def check_signature(export: dict[str, Any], pinned_key: str | None = None) -> str | None:
    """``None`` when ``export`` carries a valid Ed25519 signature (by ``pinned_key``, 64 hex
    digits, when given); else why not, in a few words."""
    signature = export.get(SIGNATURE)
    if not isinstance(signature, dict):
        return "the file is not signed"
    if signature.get("algorithm") != ALGORITHM:
        return f"the signature's algorithm is {signature.get('algorithm')!r}, not {ALGORITHM!r}"
    try:
        public = bytes.fromhex(str(signature.get("public_key")))
        value = base64.b64decode(str(signature.get("value")), validate=True)
        Ed25519PublicKey.from_public_bytes(public).verify(value, signed_bytes(export))
    except (ValueError, InvalidSignature):
        return "the signature does not match the file's contents"
    if pinned_key is not None and public.hex() != pinned_key.strip().lower():
        return f"the file is signed by key {key_id(public)}, not by the key given ({pinned_key[:16]}...)"
    return None


def load_or_create_signing_key(setting: str | None, data_dir: Path) -> NodeKey:
    """The node's key: the setting's 64 hex digits, else ``data_dir/signing.key`` (made, mode 0600,
    when missing). :class:`ValueError` naming the problem of a bad setting or file."""
    return NodeKey(setting_or_file_key(setting, "DONJON_SIGNING_KEY", Path(data_dir) / KEY_FILE))
