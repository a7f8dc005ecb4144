"""The one place where envelopes become msgpack bytes and back, plus the upcaster registry.

A stream entry holds three fields: ``b``, the msgpack *body* (every envelope field except the two
hashes), ``p``, the previous event's hash, and ``h``, this event's hash, which the append script
computes as ``sha1(p + b)``. The body is a msgpack map whose keys always come in this order::

    game_id, version, type, schema, payload, command_id, actor, ts, command

so that re-encoding a decoded envelope gives back the very bytes that were hashed; that is what
lets an auditor verify an exported log without the store (:func:`encode_body`,
:mod:`events.chain`). A body with a *sealed part* has one more key after those nine, ``sealed``
(msgpack bin): what its ``payload`` and ``command`` leave out, sealed by the service
(:mod:`service.fairness.sealing`); the store keeps and returns it as it is and never opens it.

Payloads must be msgpack/JSON-safe: ``str``, ``int``, ``bool``, ``None``, lists and dicts with
``str`` keys. Floats and bytes are refused so that a payload reads the same in JSON and msgpack.

When an event's payload shape changes, bump its ``schema`` for new events and register an
upcaster from the old schema; readers then only ever see the newest shape::

    @UPCASTERS.register("tile_placed", 1)
    def _tile_placed_v1_v2(payload):
        return {**payload, "rotation": 0}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import msgpack

from events.envelope import Envelope, NewEvent
from events.errors import InvalidEvent

__all__ = [
    "BODY_KEYS",
    "SEALED_KEY",
    "Upcasters",
    "UPCASTERS",
    "check_safe",
    "encode_new",
    "encode_body",
    "decode_body",
    "decode_entry",
    "entry_id",
    "version_of_entry_id",
    "dump_log",
    "load_log",
]

BODY_KEYS = ("game_id", "version", "type", "schema", "payload", "command_id", "actor", "ts", "command")
"""The body map's keys, in the order they are always written (the hashed bytes depend on it)."""
SEALED_KEY = "sealed"
"""The optional tenth key of a body, after the nine: its sealed part (bytes), when it has one."""

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class Upcasters:
    """Payload upgrade steps keyed by (event type, schema it upgrades from) to schema + 1."""

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}

    def register(self, event_type: str, from_schema: int) -> Callable[[Upcaster], Upcaster]:
        """Decorator: ``fn(payload) -> payload`` turns ``from_schema`` into ``from_schema + 1``."""

        def add(fn: Upcaster) -> Upcaster:
            key = (event_type, from_schema)
            if key in self._steps:
                raise ValueError(f"an upcaster for {event_type!r} schema {from_schema} exists already")
            self._steps[key] = fn
            return fn

        return add

    def upcast(self, event_type: str, schema: int, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Apply every registered step from ``schema`` on; the newest (schema, payload)."""
        while (step := self._steps.get((event_type, schema))) is not None:
            payload = step(payload)
            schema += 1
        return schema, payload

    def __len__(self) -> int:
        return len(self._steps)


UPCASTERS = Upcasters()
"""The registry the store uses unless given another. Empty: no event schema has changed yet."""


def check_safe(value: Any, where: str = "payload") -> None:
    """Raise :class:`InvalidEvent` naming the path of the first value that is not msgpack/JSON-safe.

    >>> check_safe({"tiles": [1, 2], "who": None})
    >>> check_safe({"x": 1.5})
    Traceback (most recent call last):
    ...
    events.errors.InvalidEvent: payload['x'] is a float (1.5); allowed: str, int, bool, None, list, dict with str keys
    """
    if not _is_safe(value):
        _raise_unsafe(value, where)


_PLAIN = (str, bool, type(None))


def _is_safe(value: Any) -> bool:
    """Whether ``value`` is msgpack/JSON-safe, without naming any path: every event of every
    append passes here, and building each element's path (a format and a ``repr`` per item)
    made the check cost as much as encoding a large payload. Only a failure names its path."""
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, int):
        return _INT_MIN <= value <= _INT_MAX
    if isinstance(value, (list, tuple)):
        return all(map(_is_safe, value))
    if isinstance(value, dict):
        return all(isinstance(key, str) for key in value) and all(map(_is_safe, value.values()))
    return False


def _raise_unsafe(value: Any, where: str) -> None:
    """Raise :class:`InvalidEvent` naming the path of the first unsafe value in ``value``."""
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise InvalidEvent(f"{where} is an int out of msgpack's range ({value})")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _raise_unsafe(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidEvent(f"{where} has a non-str key {key!r}")
            _raise_unsafe(item, f"{where}[{key!r}]")
        return
    raise InvalidEvent(
        f"{where} is a {type(value).__name__} ({value!r}); "
        "allowed: str, int, bool, None, list, dict with str keys"
    )


def _pack(value: Mapping[str, Any] | list[dict[str, Any]]) -> bytes:
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _body(
    game_id: str,
    version: int,
    type_: str,
    schema: int,
    payload: dict[str, Any],
    command_id: str | None,
    actor: int | None,
    ts: int,
    command: dict[str, Any] | None,
    sealed: bytes | None = None,
) -> bytes:
    values = (game_id, version, type_, schema, payload, command_id, actor, ts, command)
    body: dict[str, Any] = dict(zip(BODY_KEYS, values))
    if sealed is not None:
        body[SEALED_KEY] = sealed
    return _pack(body)


def encode_new(
    game_id: str,
    version: int,
    event: NewEvent,
    *,
    command_id: str | None,
    actor: int | None,
    ts: int,
    command: dict[str, Any] | None,
) -> bytes:
    """Validate ``event`` and encode the body it will have at ``version``."""
    type_ = getattr(event, "type", None)
    payload = getattr(event, "payload", None)
    schema = getattr(event, "schema", 1)
    sealed = getattr(event, "sealed", None)
    if not isinstance(type_, str) or not type_:
        raise InvalidEvent(f"event type must be a non-empty str, got {type_!r}")
    if not isinstance(payload, dict):
        raise InvalidEvent(f"{type_} payload must be a dict, got {type(payload).__name__}")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise InvalidEvent(f"{type_} schema must be an int >= 1, got {schema!r}")
    check_safe(payload, f"{type_} payload")
    if command is not None:
        check_safe(command, "command")
    if actor is not None and (not isinstance(actor, int) or isinstance(actor, bool)):
        raise InvalidEvent(f"actor must be a seat number or None, got {actor!r}")
    if command_id is not None and not isinstance(command_id, str):
        raise InvalidEvent(f"command_id must be a str or None, got {command_id!r}")
    if not isinstance(ts, int) or isinstance(ts, bool):
        raise InvalidEvent(f"ts must be an int (ms since epoch), got {ts!r}")
    if sealed is not None and (not isinstance(sealed, bytes) or not sealed):
        raise InvalidEvent(f"{type_} sealed part must be non-empty bytes or None, got {type(sealed).__name__}")
    return _body(game_id, version, type_, schema, payload, command_id, actor, ts, command, sealed)


def encode_body(envelope: Envelope) -> bytes:
    """The exact bytes the store hashed for ``envelope`` (when it was read with ``upcast=False``
    and its sealed part, if any, was not opened)."""
    e = envelope
    return _body(e.game_id, e.version, e.type, e.schema, e.payload, e.command_id, e.actor, e.ts, e.command, e.sealed)


def decode_body(
    body: bytes, prev_hash: str, hash_: str, *, upcasters: Upcasters | None = UPCASTERS
) -> Envelope:
    """An envelope from a stored body and its two hashes; upcast unless ``upcasters`` is None."""
    fields = msgpack.unpackb(body, raw=False)
    envelope = Envelope(
        game_id=fields["game_id"],
        version=fields["version"],
        type=fields["type"],
        schema=fields["schema"],
        payload=fields["payload"],
        command_id=fields.get("command_id"),
        actor=fields.get("actor"),
        ts=fields["ts"],
        prev_hash=prev_hash,
        hash=hash_,
        command=fields.get("command"),
        sealed=fields.get(SEALED_KEY),
    )
    if upcasters is not None and len(upcasters):
        schema, payload = upcasters.upcast(envelope.type, envelope.schema, envelope.payload)
        if schema != envelope.schema:
            envelope = replace(envelope, schema=schema, payload=payload)
    return envelope


def entry_id(version: int) -> str:
    """The stream entry id of the event at ``version``: ``"<version>-0"``."""
    return f"{version}-0"


def version_of_entry_id(entry: bytes | str) -> int:
    """The version an entry id stands for (its millisecond part)."""
    text = entry.decode() if isinstance(entry, bytes) else entry
    return int(text.partition("-")[0])


def decode_entry(
    entry: bytes | str, fields: Mapping[bytes, bytes], *, upcasters: Upcasters | None = UPCASTERS
) -> Envelope:
    """An envelope from one raw XRANGE/XREAD entry (id, {b"b": body, b"p": prev, b"h": hash})."""
    try:
        body = fields[b"b"]
        prev_hash = fields[b"p"].decode()
        hash_ = fields[b"h"].decode()
    except KeyError as missing:
        raise InvalidEvent(f"stream entry {entry!r} lacks field {missing}") from None
    return decode_body(body, prev_hash, hash_, upcasters=upcasters)


def dump_log(envelopes: Iterable[Envelope]) -> bytes:
    """An exported log: one msgpack array of envelope maps (body keys, then prev_hash, hash).

    Export envelopes read with ``upcast=False`` so that an auditor can re-encode the bodies.
    """
    return _pack([_log_item(e) for e in envelopes])


def _log_item(e: Envelope) -> dict[str, Any]:
    values = (e.game_id, e.version, e.type, e.schema, e.payload, e.command_id, e.actor, e.ts, e.command)
    item: dict[str, Any] = dict(zip(BODY_KEYS, values))
    if e.sealed is not None:
        item[SEALED_KEY] = e.sealed
    return {**item, "prev_hash": e.prev_hash, "hash": e.hash}


def load_log(data: bytes) -> list[Envelope]:
    """The envelopes of a :func:`dump_log` export, exactly as exported (no upcasting)."""
    return [
        Envelope(
            **{key: item.get(key) for key in BODY_KEYS},
            prev_hash=item["prev_hash"],
            hash=item["hash"],
            sealed=item.get(SEALED_KEY),
        )
        for item in msgpack.unpackb(data, raw=False)
    ]
