"""One signing key per deployment: kept in the store, sealed under the seed key, the same on every node.

Every node sharing a store signs exports with the keyring's current key and publishes the whole
keyring at ``GET /keys``, with no setting of its own beyond the seed key all nodes already share
(``DONJON_SEED_KEY``, :mod:`service.fairness.seed_vault`). The keyring is one JSON document in
the store (:mod:`events.keyring`, key ``donjon:keys``)::

    {"format": "donjon.keyring/1", "created": <ms>,
     "keys": [{"id": "<16 hex>", "algorithm": "ed25519", "public_key": "<64 hex>",
               "private_sealed": "v1:<hex>", "status": "current" | "retired",
               "signed_from": <ms | null>, "signed_until": <ms | null>}, ...]}

``private_sealed`` is the 32-byte Ed25519 private key sealed with the seed key for the purpose
``signing-key`` in the place of the key's id (:meth:`SeedVault.seal`): a store reader sees only
public halves. ``created`` is when the deployment first started with a keyring;
``GET /keys`` shows it as ``legacy_games_before`` (games created before it may have been recorded
under the legacy schemes). The first node to start creates the keyring (``SET NX``: of two
starting at once, both keep the first one's); ``donjon keys rotate`` retires the current key
(``signed_until`` = now) and makes a new current one in one compare-and-set, and every node
picks the new key up within :data:`REFRESH_MS`.

The first key is ``DONJON_SIGNING_KEY`` when set, else a ``signing.key`` left by an older version
(moved out of the data folder, :mod:`service.fairness.key_files`), else a fresh random key; a
key that came from a setting or a file may have signed before, so its ``signed_from`` is
``null``. ``DONJON_SIGNING_KEY`` imports its key as the current one when the keyring does not
hold it yet (a retirement of it by a later rotation holds).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from events.keyring import StoredKeyring
from events.server import Server
from service.fairness.seed_vault import SealedSeedError, SeedVault
from service.fairness.signing import ALGORITHM, NodeKey

__all__ = ["KEYRING_FORMAT", "REFRESH_MS", "DeploymentKeys", "KeyringError"]

KEYRING_FORMAT = "donjon.keyring/1"
REFRESH_MS = 2000
"""How long a node signs with the key it read before reading the keyring again."""
_PURPOSE = "signing-key"
_CURRENT, _RETIRED = "current", "retired"
_PUBLIC_FIELDS = ("id", "algorithm", "public_key", "status", "signed_from", "signed_until")


class KeyringError(ValueError):
    """The stored keyring cannot be used: not this format, or sealed under another seed key."""


def _monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


@dataclass(slots=True)
class _Loaded:
    document: str
    keyring: dict[str, Any]
    signer: NodeKey
    read_at: int


def _entry(vault: SeedVault, key: NodeKey, private: bytes, signed_from: int | None) -> dict[str, Any]:
    return {"id": key.id, "algorithm": ALGORITHM, "public_key": key.public_hex,
            "private_sealed": vault.seal(key.id, private, _PURPOSE), "status": _CURRENT,
            "signed_from": signed_from, "signed_until": None}


def _encoded(keyring: dict[str, Any]) -> str:
    return json.dumps(keyring, sort_keys=True, separators=(",", ":"))


def _parsed(document: str) -> dict[str, Any]:
    try:
        keyring = json.loads(document)
    except ValueError:
        keyring = None
    if not isinstance(keyring, dict) or keyring.get("format") != KEYRING_FORMAT:
        raise KeyringError(f"the store's donjon:keys is not a {KEYRING_FORMAT} keyring")
    return keyring


def _current(keyring: dict[str, Any]) -> dict[str, Any]:
    current = [entry for entry in keyring["keys"] if entry.get("status") == _CURRENT]
    if len(current) != 1:
        raise KeyringError(f"the store's keyring has {len(current)} current keys, not one")
    entry: dict[str, Any] = current[0]
    return entry


class DeploymentKeys:
    """The deployment's keyring as one node uses it: :meth:`signer` signs, :meth:`listing` publishes."""

    def __init__(self, server: Server, vault: SeedVault, clock: Callable[[], int]) -> None:
        self._stored = StoredKeyring(server)
        self._vault = vault
        self._clock = clock
        self._loaded: _Loaded | None = None

    @classmethod
    async def open(
        cls, server: Server, vault: SeedVault, clock: Callable[[], int], *,
        imported: bytes | None = None, migrated: bytes | None = None,
    ) -> DeploymentKeys:
        """The keyring of the store, made when there is none (first key: ``imported``, the
        ``DONJON_SIGNING_KEY``, else ``migrated``, an old ``signing.key``, else a fresh one), and
        ``imported`` made current when the keyring does not hold it. :class:`KeyringError` when
        the stored keyring does not open with this seed key."""
        keys = cls(server, vault, clock)
        first = imported or migrated
        private = first or secrets.token_bytes(32)
        entry = _entry(vault, NodeKey(private), private, None if first else clock())
        document = await keys._stored.create(_encoded({"format": KEYRING_FORMAT, "created": clock(),
                                                       "keys": [entry]}))
        keys._load(document)
        if imported is not None and NodeKey(imported).id not in keys._ids():
            await keys.rotate(imported)
        return keys

    def _ids(self) -> set[str]:
        assert self._loaded is not None
        return {entry["id"] for entry in self._loaded.keyring["keys"]}

    def _load(self, document: str) -> _Loaded:
        """``document`` parsed, its current key opened (kept as the node's until :data:`REFRESH_MS`)."""
        if self._loaded is not None and self._loaded.document == document:
            self._loaded.read_at = _monotonic_ms()
            return self._loaded
        keyring = _parsed(document)
        current = _current(keyring)
        try:
            signer = NodeKey(self._vault.open(current["id"], current["private_sealed"], _PURPOSE))
        except SealedSeedError:
            raise KeyringError(
                "the deployment's signing key does not open with this node's seed key "
                "(is DONJON_SEED_KEY the same on every node sharing the store?)"
            ) from None
        if signer.id != current["id"]:
            raise KeyringError(f"the keyring's current key is listed as {current['id']} but is {signer.id}")
        self._loaded = _Loaded(document, keyring, signer, _monotonic_ms())
        return self._loaded

    async def _fresh(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None and _monotonic_ms() - loaded.read_at < REFRESH_MS:
            return loaded
        document = await self._stored.read()
        if document is None:
            raise KeyringError("the store holds no keyring (donjon:keys was deleted)")
        return self._load(document)

    async def signer(self) -> NodeKey:
        """The current key (read again from the store when :data:`REFRESH_MS` have passed)."""
        return (await self._fresh()).signer

    async def listing(self) -> dict[str, Any]:
        """``GET /keys``: every key's public half, the current one first, then the retired ones,
        the last retired first; and ``legacy_games_before``."""
        keyring = (await self._fresh()).keyring
        entries = sorted(keyring["keys"], key=lambda e: (e["status"] != _CURRENT, -(e.get("signed_until") or 0)))
        return {"keys": [{name: entry.get(name) for name in _PUBLIC_FIELDS} for entry in entries],
                "legacy_games_before": keyring.get("created")}

    async def rotate(self, private: bytes | None = None) -> dict[str, Any]:
        """Retire the current key (``signed_until`` = now) and make ``private`` (else a fresh key)
        the current one, in one compare-and-set (retried when another node changed the keyring
        meanwhile; a ``private`` key some other node put in meanwhile is not put in twice); the
        new listing."""
        imported = private is not None
        private = private or secrets.token_bytes(32)
        new_id = NodeKey(private).id
        while True:
            document = await self._stored.read()
            if document is None:
                raise KeyringError("the store holds no keyring (donjon:keys was deleted)")
            keyring = _parsed(document)
            if imported and new_id in {entry["id"] for entry in keyring["keys"]}:
                self._load(document)  # another node imported the same key first: import it once
                return await self.listing()
            now = self._clock()
            for entry in keyring["keys"]:
                if entry.get("status") == _CURRENT:
                    entry.update(status=_RETIRED, signed_until=now)
            keyring["keys"].append(_entry(self._vault, NodeKey(private), private, now))
            new = _encoded(keyring)
            if await self._stored.replace(document, new):
                self._load(new)
                return await self.listing()
