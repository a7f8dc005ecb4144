"""Secrets at rest: a game's server seed, secret options and seat key are kept in its meta sealed
with the node key, never in clear.

Whoever reads the store (an operator's ``redis-cli``, a backup, a leaked dump) would otherwise
compute a running game's future draws, read its scripted future (a ``tile_order``) or open the
events sealed with the game's hiding key (:mod:`service.fairness.sealing`, derived from the seed). Each
sealed meta field holds ``v1:<hex(nonce || AES-256-GCM ciphertext and tag)>`` with the
associated data ``"donjon-" || purpose || 0x00 || game id`` (a sealed value copied to another
game, or to another field, does not open):

=========================  ===========  =========================================================
field                      purpose      plaintext
=========================  ===========  =========================================================
``seed_sealed``            ``seed``     the 32-byte server seed
``secret_options_sealed``  ``options``  msgpack map of the secret options (``options`` keeps the
                                        public ones)
``seat_key_sealed``        ``seat-key`` the 32-byte seat key (:mod:`service.play.auth`)
=========================  ===========  =========================================================

The key is 32 bytes: ``DONJON_SEED_KEY`` (64 hex digits; every node sharing a store needs the same
one), else the file ``seed.key`` in the keys folder (``DONJON_KEYS_DIR``, by default
``donjon-keys`` beside the data folder, :mod:`service.fairness.key_files`), made on first use
with mode 0600. It also seals the deployment's signing keys in the store
(:mod:`service.fairness.deployment_keys`). Metas
stored before sealing keep ``seed``, the full ``options`` and ``seat_key`` in clear and still
load (:func:`opened_meta`). ``game.finished`` reveals the seed and the secret options as before,
so nothing about verification changes (``docs/fairness.md``, "Trust model").

>>> vault = SeedVault(bytes(32))
>>> vault.open("g1", vault.seal("g1", b"s" * 32)) == b"s" * 32
True
>>> opened_meta("g1", vault.meta_fields("g1", b"s" * 32, {"tile_order": ["A"]}), vault)["secret_options"]
{'tile_order': ['A']}
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgpack
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from service.fairness.key_files import moved_out_of_data, setting_or_file_key

__all__ = [
    "KEY_FILE",
    "SEALED_FIELD",
    "SEALED_OPTIONS_FIELD",
    "SEALED_SEAT_KEY_FIELD",
    "SealedSeedError",
    "SeedVault",
    "load_or_create_key",
    "opened_meta",
    "seed_of_meta",
]

SEALED_FIELD = "seed_sealed"
"""The meta field of a sealed seed; ``seed`` (hex, in clear) in metas written before sealing."""
SEALED_OPTIONS_FIELD = "secret_options_sealed"
"""The meta field of the sealed secret options; older metas keep every option in ``options``."""
SEALED_SEAT_KEY_FIELD = "seat_key_sealed"
"""The meta field of the sealed seat key; ``seat_key`` (hex, in clear) in older metas."""
KEY_FILE = "seed.key"
_PREFIX = "v1:"
_NONCE = 12


class SealedSeedError(ValueError):
    """A sealed value that this key does not open (another node's key, or a damaged field)."""


class SeedVault:
    """Seals and opens the secrets of games (seed, secret options, seat key) with one node key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError(f"a seed key is 32 bytes, got {len(key)}")
        self._aead = AESGCM(key)

    @staticmethod
    def _context(game_id: str, purpose: str) -> bytes:
        return b"donjon-" + purpose.encode() + b"\x00" + game_id.encode()

    def seal(self, game_id: str, seed: bytes, purpose: str = "seed") -> str:
        """``v1:<hex>`` of ``seed`` (any bytes) sealed for ``purpose`` in game ``game_id``."""
        nonce = secrets.token_bytes(_NONCE)
        return _PREFIX + (nonce + self._aead.encrypt(nonce, seed, self._context(game_id, purpose))).hex()

    def open(self, game_id: str, sealed: str, purpose: str = "seed") -> bytes:
        if not isinstance(sealed, str) or not sealed.startswith(_PREFIX):
            raise SealedSeedError(f"game {game_id!r}: the sealed {purpose} is not a {_PREFIX}... value")
        try:
            raw = bytes.fromhex(sealed[len(_PREFIX) :])
            return self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], self._context(game_id, purpose))
        except (ValueError, InvalidTag):
            raise SealedSeedError(
                f"game {game_id!r}: this node's seed key does not open its {purpose} "
                "(is DONJON_SEED_KEY the same on every node?)"
            ) from None

    def meta_fields(
        self, game_id: str, seed: bytes, secret_options: Mapping[str, Any] | None = None, seat_key: bytes | None = None
    ) -> dict[str, str]:
        """The meta fields that keep a game's secrets: sealed, never in clear (the secret options
        only when the game has some, the seat key when given)."""
        fields = {SEALED_FIELD: self.seal(game_id, seed)}
        if secret_options:
            packed = msgpack.packb(dict(secret_options), use_bin_type=True)
            fields[SEALED_OPTIONS_FIELD] = self.seal(game_id, packed, "options")
        if seat_key is not None:
            fields[SEALED_SEAT_KEY_FIELD] = self.seal(game_id, seat_key, "seat-key")
        return fields

    def open_meta(self, game_id: str, meta: Mapping[str, Any]) -> dict[str, Any]:
        """``meta`` with its sealed fields opened into the clear fields older metas keep: ``seed``
        (hex), every option in ``options`` (and the secret ones in ``secret_options``), ``seat_key``."""
        opened = dict(meta)
        sealed = opened.pop(SEALED_FIELD, None)
        if sealed is not None:
            opened["seed"] = self.open(game_id, sealed).hex()
        sealed = opened.pop(SEALED_OPTIONS_FIELD, None)
        if sealed is not None:
            secret = msgpack.unpackb(self.open(game_id, sealed, "options"), raw=False)
            opened["secret_options"] = secret
            opened["options"] = {**(opened.get("options") or {}), **secret}
        sealed = opened.pop(SEALED_SEAT_KEY_FIELD, None)
        if sealed is not None:
            opened["seat_key"] = self.open(game_id, sealed, "seat-key").hex()
        return opened


_SEALED_FIELDS = (SEALED_FIELD, SEALED_OPTIONS_FIELD, SEALED_SEAT_KEY_FIELD)


def opened_meta(game_id: str, meta: Mapping[str, Any], vault: SeedVault | None) -> dict[str, Any]:
    """A game's meta with its secrets in clear (:meth:`SeedVault.open_meta`); as it is when it
    seals none. :class:`SealedSeedError` when it seals some and ``vault`` is missing or cannot
    open them."""
    if not any(name in meta for name in _SEALED_FIELDS):
        return dict(meta)
    if vault is None:
        raise SealedSeedError(f"game {game_id!r}: its seed is sealed and no seed key was given")
    return vault.open_meta(game_id, meta)


def seed_of_meta(game_id: str, meta: Mapping[str, Any], vault: SeedVault | None) -> bytes | None:
    """The server seed a game's meta keeps (sealed, or in clear in older metas); ``None`` when it
    keeps none. :class:`SealedSeedError` when it is sealed and ``vault`` cannot open it."""
    clear = opened_meta(game_id, meta, vault).get("seed")
    return bytes.fromhex(clear) if isinstance(clear, str) else None


def load_or_create_key(setting: str | None, data_dir: Path, keys_dir: Path) -> bytes:
    """The node's seed key: the setting's 64 hex digits, else ``keys_dir/seed.key`` (moved there
    from ``data_dir``, where older versions kept it; made, mode 0600, when missing).
    :class:`ValueError` naming the problem of a bad setting or file."""
    if setting:
        return setting_or_file_key(setting, "DONJON_SEED_KEY", Path(keys_dir) / KEY_FILE)
    return setting_or_file_key(None, "DONJON_SEED_KEY", moved_out_of_data(KEY_FILE, data_dir, keys_dir))
