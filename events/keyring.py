"""The deployment's keyring in the store: one key, ``donjon:keys``, holding one JSON document.

What the document says (its keys, sealed private halves, their statuses) is the service's
business (:mod:`service.fairness.deployment_keys`); this module only keeps it, atomically, on one
Valkey or on a Cluster (one key lives in one slot, so each script below runs on one master):

- :meth:`StoredKeyring.create` writes the document only when there is none (``SET NX``) and
  answers the one stored, so that of two nodes starting at once on a new store both end with the
  first one's keyring;
- :meth:`StoredKeyring.replace` writes a new document only if the stored one is still the one the
  caller read (a compare-and-set script), so two rotations at once cannot both win.

>>> KEYRING_KEY
'donjon:keys'
"""

from __future__ import annotations

from events.server import Server

__all__ = ["KEYRING_KEY", "StoredKeyring"]

KEYRING_KEY = "donjon:keys"

_CREATE_LUA = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return ARGV[1] end
return redis.call('GET', KEYS[1])
"""

_REPLACE_LUA = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""


def _text(reply: object) -> str | None:
    if reply is None:
        return None
    return reply.decode() if isinstance(reply, bytes) else str(reply)


class StoredKeyring:
    """The keyring document on the store's server, as text (JSON, written by the service)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._create = server.script(_CREATE_LUA)
        self._replace = server.script(_REPLACE_LUA)

    async def read(self) -> str | None:
        """The stored document; ``None`` when the deployment has none yet."""
        async with self.server.call():
            return _text(await self.server.redis.get(KEYRING_KEY))

    async def create(self, document: str) -> str:
        """Store ``document`` unless a keyring exists; the stored one either way."""
        stored = _text(await self._create([KEYRING_KEY], [document]))
        assert stored is not None  # SET NX failed only because a document is there
        return stored

    async def replace(self, expected: str, document: str) -> bool:
        """Store ``document`` if the stored one is ``expected``; whether it was stored."""
        return bool(await self._replace([KEYRING_KEY], [expected, document]))
