"""Seeds at rest: a game's server seed is kept in its meta sealed with the node key, never in clear.

Whoever reads the store (an operator's ``redis-cli``, a backup, a leaked dump) would otherwise
compute a running game's future draws. The meta field ``seed_sealed`` holds
``v1:<hex(nonce || AES-256-GCM ciphertext and tag)>`` of the 32-byte seed, with the associated
data ``"donjon-seed" || 0x00 || game id`` (a sealed seed copied to another game does not open).

The key is 32 bytes: ``DONJON_SEED_KEY`` (64 hex digits; every node sharing a store needs the same
one), else the file ``seed.key`` in the data folder, made on first use with mode 0600. Games
stored before sealing keep their ``seed`` field in clear and still load. ``game.finished``
reveals the seed as before, so nothing about verification changes (``docs/fairness.md``, "Trust
model").

>>> vault = SeedVault(bytes(32))
>>> vault.open("g1", vault.seal("g1", b"s" * 32)) == b"s" * 32
True
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from service.key_files import setting_or_file_key

__all__ = ["KEY_FILE", "SEALED_FIELD", "SealedSeedError", "SeedVault", "load_or_create_key", "seed_of_meta"]

SEALED_FIELD = "seed_sealed"
"""The meta field of a sealed seed; ``seed`` (hex, in clear) in metas written before sealing."""
KEY_FILE = "seed.key"
_PREFIX = "v1:"
_NONCE = 12


class SealedSeedError(ValueError):
    """A sealed seed that this key does not open (another node's key, or a damaged field)."""


class SeedVault:
    """Seals and opens the seeds of games with one node key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError(f"a seed key is 32 bytes, got {len(key)}")
        self._aead = AESGCM(key)

    @staticmethod
    def _context(game_id: str) -> bytes:
        return b"donjon-seed\x00" + game_id.encode()

    def seal(self, game_id: str, seed: bytes) -> str:
        nonce = secrets.token_bytes(_NONCE)
        return _PREFIX + (nonce + self._aead.encrypt(nonce, seed, self._context(game_id))).hex()

    def open(self, game_id: str, sealed: str) -> bytes:
        if not isinstance(sealed, str) or not sealed.startswith(_PREFIX):
            raise SealedSeedError(f"game {game_id!r}: the sealed seed is not a {_PREFIX}... value")
        try:
            raw = bytes.fromhex(sealed[len(_PREFIX) :])
            return self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], self._context(game_id))
        except (ValueError, InvalidTag):
            raise SealedSeedError(
                f"game {game_id!r}: this node's seed key does not open its seed "
                "(is DONJON_SEED_KEY the same on every node?)"
            ) from None

    def meta_fields(self, game_id: str, seed: bytes) -> dict[str, str]:
        """The meta fields that keep ``seed``: sealed, never in clear."""
        return {SEALED_FIELD: self.seal(game_id, seed)}


def seed_of_meta(game_id: str, meta: Mapping[str, Any], vault: SeedVault | None) -> bytes | None:
    """The server seed a game's meta keeps (sealed, or in clear in older metas); ``None`` when it
    keeps none. :class:`SealedSeedError` when it is sealed and ``vault`` cannot open it."""
    sealed = meta.get(SEALED_FIELD)
    if sealed is not None:
        if vault is None:
            raise SealedSeedError(f"game {game_id!r}: its seed is sealed and no seed key was given")
        return vault.open(game_id, sealed)
    clear = meta.get("seed")
    return bytes.fromhex(clear) if isinstance(clear, str) else None


def load_or_create_key(setting: str | None, data_dir: Path) -> bytes:
    """The node's seed key: the setting's 64 hex digits, else ``data_dir/seed.key`` (made, mode
    0600, when missing). :class:`ValueError` naming the problem of a bad setting or file."""
    return setting_or_file_key(setting, "DONJON_SEED_KEY", Path(data_dir) / KEY_FILE)
