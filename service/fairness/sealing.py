"""Sealed at rest: the store keeps of each event what a spectator may see, and seals the rest.

A game whose ``game.created`` says ``"hidden": "donjon-hidden-1"`` (every game created since)
stores each event's body with its *clear part* (what :func:`projections.views.visible_part`
shows a spectator, less the fields the engine lists in ``sealed_at_rest``) and, when that is not
the whole event, a *sealed part* under the body's tenth key ``sealed``::

    hiding key  = HMAC-SHA256(server seed, "donjon-hidden-1")
    sealed      = nonce (12 random bytes) || AES-256-GCM(hiding key, nonce, plaintext, associated data)
    associated  = "donjon-hidden-1" || 0x00 || utf8(game id) || 0x00 || ascii(version) || 0x00 || utf8(stored type)
                  (the body's own game id, version and type: the chain check ties the body to its game)
    plaintext   = msgpack map of what the clear part leaves out, each key only when it does:
                  "type" (the event's type, when a spectator sees another), "payload" (the whole
                  payload) and, on a batch's first event, "command" (the whole command; the
                  stored one is then {})

A command is never shown to a spectator, so it is sealed, except the service's own commands whose
every argument their events publish (:data:`PUBLIC_COMMANDS`: seats, bot seats, rematch, resign,
undo). An event hidden from spectators altogether is stored as type :data:`HIDDEN_TYPE` with an
empty payload. The hash chain covers the stored bytes, sealed part included, as before.

The hiding key is as secret as the server seed (kept sealed in the meta, :mod:`service.fairness.seed_vault`)
and revealed with it by ``game.finished``: until then a copy of the store shows what a spectator
sees and no more; after it, anyone can open every sealed part (``donjon verify``, the JS
verifier). Games recorded before sealing name no ``hidden`` and keep their bodies in clear.

>>> from tests.tinygame import TINY
>>> sealer = Sealer("g1", bytes(32))
>>> [stored], command = sealer.seal(TINY, [Event("moved", {"n": 1})], 3, {"type": "move", "args": {"n": 1}}, HIDDEN)
>>> command, stored.payload
({}, {'n': 1})
>>> envelope = Envelope("g1", 3, stored.type, 1, stored.payload, None, 0, 0, "", "", command, stored.sealed)
>>> sealer.open(envelope).command
{'type': 'move', 'args': {'n': 1}}
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from events.envelope import Envelope
from games.base import Engine, Event
from projections.views import visible_part
from service.play.decisions import HIDDEN, PUBLIC_COMMANDS

__all__ = [
    "HIDDEN",
    "HIDDEN_TYPE",
    "PUBLIC_COMMANDS",
    "SealedPartError",
    "Sealer",
    "StoredEvent",
    "associated_data",
    "clear_part",
    "hiding_key",
    "open_log",
]

HIDDEN_TYPE = "hidden"
"""The stored type of an event a spectator does not see at all."""
NONCE_BYTES = 12
NONCE_POOL = NONCE_BYTES * 341
"""Random bytes read at once for nonces (about 4 KiB)."""
_PLAINTEXT_KEYS = frozenset({"type", "payload", "command"})


class SealedPartError(ValueError):
    """A sealed part that the game's hiding key does not open, or that does not say what it hides."""


def hiding_key(server_seed: bytes) -> bytes:
    """The key of a game's sealed parts: ``HMAC-SHA256(server seed, "donjon-hidden-1")``."""
    return hmac.digest(server_seed, HIDDEN.encode("ascii"), "sha256")


def associated_data(game_id: str, version: int, kind: str) -> bytes:
    """What a sealed part is bound to: its game, its version and its stored type."""
    return b"\x00".join((HIDDEN.encode("ascii"), game_id.encode(), str(version).encode("ascii"), kind.encode()))


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as the store keeps it: the clear type and payload, and the sealed part."""

    type: str
    payload: dict[str, Any]
    schema: int = 1
    sealed: bytes | None = None


def clear_part(
    engine: Engine[Any], kind: str, payload: dict[str, Any], command: dict[str, Any] | None
) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """What the store keeps in clear of an event (and of its batch's ``command``, on the first):
    what a spectator may see of it, less the engine's :attr:`~games.base.EngineBase.sealed_at_rest`
    fields; ``{}`` for a command that is not one of :data:`PUBLIC_COMMANDS`."""
    visible = visible_part(engine, kind, payload, None)
    clear_kind, clear_payload = (HIDDEN_TYPE, {}) if visible is None else visible
    extra = (getattr(engine, "sealed_at_rest", None) or {}).get(kind)
    if extra:
        clear_payload = {name: value for name, value in clear_payload.items() if name not in extra}
    clear_command = command
    if command is not None and not (isinstance(command, dict) and command.get("type") in PUBLIC_COMMANDS):
        clear_command = {}
    return clear_kind, clear_payload, clear_command


def _left_out(
    kind: str, payload: dict[str, Any], command: dict[str, Any] | None, clear: tuple[str, dict[str, Any], Any]
) -> dict[str, Any]:
    """The plaintext of a sealed part: what ``clear`` leaves out of the event."""
    clear_kind, clear_payload, clear_command = clear
    hidden: dict[str, Any] = {}
    if clear_kind != kind:
        hidden["type"] = kind
    if clear_payload is not payload and clear_payload != payload:
        hidden["payload"] = payload
    if clear_command is not command and clear_command != command:
        hidden["command"] = command
    return hidden


class _Nonces:
    """Random nonces cut from one ``os.urandom`` read of :data:`NONCE_POOL` bytes at a time:
    the same randomness as a read per nonce, at a system call per 341 nonces instead of one
    each (a seal per command otherwise paid ~2 % of a trivial command for its ``getrandom``).
    The pool is emptied in a forked child, so no two processes ever cut the same bytes."""

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0

    def take(self) -> bytes:
        at = self._at
        if at + NONCE_BYTES > len(self._pool):
            self._pool, at = os.urandom(NONCE_POOL), 0
        self._at = at + NONCE_BYTES
        return self._pool[at : at + NONCE_BYTES]

    def forget(self) -> None:
        self._pool, self._at = b"", 0


_NONCES = _Nonces()
os.register_at_fork(after_in_child=_NONCES.forget)


class Sealer:
    """Seals the events of one game as the store keeps them, and opens them again."""

    __slots__ = ("_aead", "game_id")

    def __init__(self, game_id: str, server_seed: bytes) -> None:
        self.game_id = game_id
        self._aead = AESGCM(hiding_key(server_seed))

    def seal(
        self,
        engine: Engine[Any],
        events: Sequence[Event],
        first_version: int,
        command: dict[str, Any] | None,
        hidden: str | None,
    ) -> tuple[list[StoredEvent], dict[str, Any] | None]:
        """The events of one append as the store keeps them (the first at ``first_version``),
        and the command to record with them; as they are in a game that seals nothing
        (``hidden``, its ``game.created``'s, is ``None``)."""
        if hidden is None:
            return [StoredEvent(e.type, e.payload, getattr(e, "schema", 1)) for e in events], command
        stored, stored_command = [], command
        for i, event in enumerate(events):
            first = command if i == 0 else None
            clear = clear_part(engine, event.type, event.payload, first)
            left_out = _left_out(event.type, event.payload, first, clear)
            sealed = self._seal(first_version + i, clear[0], left_out) if left_out else None
            # What nothing is left out of is kept as it is (a service event's fields in its own order).
            payload = clear[1] if "payload" in left_out else event.payload
            stored.append(StoredEvent(clear[0], payload, getattr(event, "schema", 1), sealed))
            if i == 0 and "command" in left_out:
                stored_command = clear[2]
        return stored, stored_command

    def _seal(self, version: int, kind: str, left_out: dict[str, Any]) -> bytes:
        nonce = _NONCES.take()
        plaintext = msgpack.packb(left_out, use_bin_type=True)
        return nonce + self._aead.encrypt(nonce, plaintext, associated_data(self.game_id, version, kind))

    def opened_part(self, game_id: str, version: int, kind: str, sealed: bytes) -> dict[str, Any]:
        """The plaintext of the sealed part of the body of ``game_id`` at ``version`` (the body's
        own: the chain check ties it to the game) whose stored type is ``kind``;
        :class:`SealedPartError` when it does not open, or is not a map of ``type``, ``payload``
        and ``command``."""
        try:
            bound = associated_data(game_id, version, kind)
            plaintext = self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], bound)
            part = msgpack.unpackb(plaintext, raw=False)
        except (InvalidTag, ValueError, msgpack.UnpackException):
            raise SealedPartError(
                f"game {game_id!r} version {version}: the sealed part does not open with the game's hiding key"
            ) from None
        if not isinstance(part, dict) or not part or not set(part) <= _PLAINTEXT_KEYS:
            raise SealedPartError(f"game {game_id!r} version {version}: the sealed part is not a map of "
                                  f"{sorted(_PLAINTEXT_KEYS)}")
        return part

    def open(self, envelope: Envelope) -> Envelope:
        """``envelope`` with its sealed part opened (the whole type, payload and command, and no
        ``sealed``); as it is when it has none."""
        e = envelope
        if e.sealed is None:
            return e
        part = self.opened_part(e.game_id, e.version, e.type, e.sealed)
        # Made directly, not by dataclasses.replace (twice as slow): a node opens every sealed event.
        return Envelope(
            e.game_id, e.version, part.get("type", e.type), e.schema, part.get("payload", e.payload), e.command_id,
            e.actor, e.ts, e.prev_hash, e.hash, part.get("command", e.command), None,
        )

    def open_all(self, envelopes: Iterable[Envelope]) -> list[Envelope]:
        """Every envelope opened (:meth:`open`), in order."""
        return [envelope if envelope.sealed is None else self.open(envelope) for envelope in envelopes]


def _same(a: Any, b: Any) -> bool:
    """Equal as the store reads them back (msgpack turns tuples into lists; maps in any order)."""
    def read_back(value: Any) -> Any:
        return msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False)

    return bool(read_back(a) == read_back(b))


def open_log(
    engine: Engine[Any], game_id: str, server_seed: bytes | None, envelopes: Sequence[Envelope]
) -> tuple[list[Envelope] | None, list[str]]:
    """A whole log opened with the game's hiding key, and what is wrong with its sealing: a part
    that does not open, a sealed part in a game that names no sealing (``hidden``), and, in a
    game that seals, an event whose stored clear part is not exactly what a spectator may see of
    it (so the store kept more in clear, or less) or that is sealed with nothing to seal. The
    opened log is ``None`` when a part cannot be opened (without ``server_seed``, none can)."""
    hidden = envelopes[0].payload.get("hidden") if envelopes else None
    problems: list[str] = []
    if hidden not in (None, HIDDEN):
        return None, [f"game.created names the sealing {hidden!r}, not {HIDDEN!r}"]
    if server_seed is None:
        first = next((e for e in envelopes if e.sealed is not None), None)
        if first is None:
            return list(envelopes), problems
        return None, [f"version {first.version}: a sealed part, and no seed to open it with"]
    sealer, opened = Sealer(game_id, server_seed), []
    for envelope in envelopes:
        try:
            event = sealer.open(envelope)
        except SealedPartError as exc:
            return None, [*problems, str(exc)]
        opened.append(event)
        if hidden is None:
            if envelope.sealed is not None:
                problems.append(f"version {envelope.version}: a sealed part in a game whose game.created names none")
            continue
        clear = clear_part(engine, event.type, event.payload, event.command)
        if not _same(clear, (envelope.type, envelope.payload, envelope.command)):
            problems.append(f"version {envelope.version}: the stored clear part is not what a spectator may see")
        elif envelope.sealed is not None and not _left_out(event.type, event.payload, event.command, clear):
            problems.append(f"version {envelope.version}: sealed with nothing to seal")
    return opened, problems
