"""Wire formats and typed client frames.

Two codecs carry the same frames: JSON text frames (the default) and msgpack binary frames
(when the client asks for the ``donjon.msgpack`` websocket subprotocol). Incoming frames are
decoded, then parsed into one of the typed messages below; anything else is a
:class:`~service.errors.ServiceError` with a stable code (``bad_json``, ``bad_frame``,
``unknown_frame``). Outgoing frames are built by the ``*_frame`` helpers so that their shape
lives in one place (docs/protocol.md describes each).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
import orjson

from service.errors import ErrorCode, ServiceError

__all__ = [
    "JSON",
    "MSGPACK",
    "MSGPACK_SUBPROTOCOL",
    "ClientFrame",
    "Codec",
    "CommandFrame",
    "Hello",
    "ack_frame",
    "decode_json",
    "dumps_json",
    "error_frame",
    "parse_frame",
    "readable_command_id",
    "refuse_unknown_fields",
]

MSGPACK_SUBPROTOCOL = "donjon.msgpack"
MAX_ID_LENGTH = 128
MAX_TOKEN_LENGTH = 256
MAX_DEPTH = 32
"""Deepest nesting of arrays and objects a client frame or request body may have. Commands
nest three or four levels; the bound keeps a hostile document from reaching Python's recursion
limit anywhere later (decoding, ``repr`` in a message, re-encoding into the store)."""
HELLO_FIELDS = frozenset({"type", "token", "since"})
COMMAND_FRAME_FIELDS = frozenset({"type", "id", "command", "expected_version"})
COMMAND_FIELDS = frozenset({"type", "args"})


def _check_depth(value: Any, what: str, data: str | bytes | None = None) -> Any:
    """``value`` unchanged, or ``bad_json`` when it nests deeper than :data:`MAX_DEPTH`.

    When the document ``data`` it came from opens at most :data:`MAX_DEPTH` arrays and objects
    in all (every client frame in practice), it cannot nest deeper, and the walk is skipped."""
    if data is not None and _openings(data) <= MAX_DEPTH:
        return value
    level = [value]
    for _ in range(MAX_DEPTH):
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return value
    raise ServiceError(ErrorCode.BAD_JSON, f"the {what} nests arrays or objects deeper than {MAX_DEPTH} levels")


def _openings(data: str | bytes) -> int:
    """How many ``{`` and ``[`` the document holds (inside strings too: an upper bound of its depth)."""
    if isinstance(data, str):
        return data.count("{") + data.count("[")
    return data.count(b"{") + data.count(b"[")


def decode_json(data: str | bytes, what: str = "frame") -> Any:
    """Parse JSON from a client (a frame, an HTTP body); ``bad_json`` for anything else.

    orjson parses; what it refuses goes to the standard library's parser, which decides (it
    also reads what orjson does not: integers beyond 64 bits, ``NaN``, lone surrogates), so the
    documents accepted and the values they give are exactly those of ``json.loads``. A
    document nested past the parser's recursion limit is ``bad_json`` like any other
    unreadable one, not a crash."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise ServiceError(ErrorCode.BAD_JSON, f"the {what} is not valid JSON: {exc}") from None
    return _check_depth(value, what, data)


def dumps_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
    gives it (non-string keys become strings), at orjson's speed; the standard library's
    encoder takes what orjson cannot (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def refuse_unknown_fields(obj: dict[str, Any], known: frozenset[str], what: str, code: ErrorCode) -> None:
    """A field this server does not know is never ignored: a typo must not pass for a default."""
    unknown = sorted(str(key) for key in obj if key not in known)
    if unknown:
        raise ServiceError(code, f"{what} has unknown field(s) {unknown!r}; known: {sorted(known)!r}")


class Codec:
    """Turns frames into websocket payloads and back. One instance per format.

    ``encode`` returns the payload bytes (UTF-8 for JSON), so that a frame encoded once is sent
    to many sockets without another encoding step; ``binary`` says which websocket opcode
    carries it (binary for msgpack, text for JSON).
    """

    name: str
    binary: bool

    def encode(self, frame: dict[str, Any]) -> bytes:
        raise NotImplementedError

    def ack(self, command_id: str, version: int, duplicate: bool) -> bytes:
        """The payload of :func:`ack_frame`, which every accepted command gets."""
        return self.encode(ack_frame(command_id, version, duplicate))

    def decode(self, data: str | bytes) -> Any:
        raise NotImplementedError

    def encode_part(self, value: dict[str, Any]) -> bytes:
        """``value`` encoded as a part of a frame (:meth:`encode_with_view`)."""
        return self.encode(value)

    def encode_with_view(self, frame: dict[str, Any], shared: bytes, own: dict[str, Any]) -> bytes:
        """``frame`` with a ``"view"`` that is the map ``shared`` (encoded by :meth:`encode_part`
        once, for every viewer) and ``own`` together; their keys are apart. The same bytes as
        encoding the whole frame, but for the order of the view's keys."""
        return self.merge((self.encode(frame), self.entry("view", self.merge((shared, self.encode(own))))))

    def merge(self, maps: tuple[bytes, ...]) -> bytes:
        """One encoded map of every entry of the encoded maps ``maps`` (keys apart), in order."""
        raise NotImplementedError

    def entry(self, key: str, value: bytes) -> bytes:
        """The encoded map of one entry, ``key`` and the encoded ``value``."""
        raise NotImplementedError


class _JsonCodec(Codec):
    name = "json"
    binary = False

    def encode(self, frame: dict[str, Any]) -> bytes:
        return dumps_json(frame)

    def ack(self, command_id: str, version: int, duplicate: bool) -> bytes:
        # Spliced rather than encoded: the one variable string is encoded on its own.
        flag = b"true" if duplicate else b"false"
        return b'{"type":"ack","id":%s,"version":%d,"duplicate":%s}' % (orjson.dumps(command_id), version, flag)

    def decode(self, data: str | bytes) -> Any:
        return decode_json(data)

    def merge(self, maps: tuple[bytes, ...]) -> bytes:
        bodies = [part[1:-1] for part in maps if len(part) > 2]  # "{...}" without its braces; "{}" adds nothing
        return b"{" + b",".join(bodies) + b"}"

    def entry(self, key: str, value: bytes) -> bytes:
        return b"{" + orjson.dumps(key) + b":" + value + b"}"


class _MsgpackCodec(Codec):
    name = "msgpack"
    binary = True

    def encode(self, frame: dict[str, Any]) -> bytes:
        packed: bytes = msgpack.packb(frame, use_bin_type=True)
        return packed

    def decode(self, data: str | bytes) -> Any:
        if isinstance(data, str):
            raise ServiceError(ErrorCode.BAD_JSON, "msgpack sockets take binary frames, got a text frame")
        try:
            value = msgpack.unpackb(data, raw=False, strict_map_key=True)
        except Exception as exc:  # msgpack raises several unrelated types for garbage (StackError when too deep)
            reason = str(exc) or type(exc).__name__
            raise ServiceError(ErrorCode.BAD_JSON, f"the frame is not valid msgpack: {reason}") from None
        return _check_depth(value, "frame", data if len(data) <= MAX_DEPTH else None)

    def merge(self, maps: tuple[bytes, ...]) -> bytes:
        count, bodies = 0, []
        for part in maps:
            size, start = _map_header(part)
            count += size
            bodies.append(part[start:])
        return _map_prefix(count) + b"".join(bodies)

    def entry(self, key: str, value: bytes) -> bytes:
        packed_key: bytes = msgpack.packb(key, use_bin_type=True)
        return b"\x81" + packed_key + value


def _map_header(data: bytes) -> tuple[int, int]:
    """A msgpack map's entry count and where its entries start (fixmap, map 16, map 32)."""
    first = data[0]
    if first & 0xF0 == 0x80:
        return first & 0x0F, 1
    if first == 0xDE:
        return int.from_bytes(data[1:3], "big"), 3
    if first == 0xDF:
        return int.from_bytes(data[1:5], "big"), 5
    raise ValueError(f"not a msgpack map (first byte {first:#x})")


def _map_prefix(count: int) -> bytes:
    if count < 16:
        return bytes((0x80 | count,))
    if count < 1 << 16:
        return b"\xde" + count.to_bytes(2, "big")
    return b"\xdf" + count.to_bytes(4, "big")


JSON: Codec = _JsonCodec()
MSGPACK: Codec = _MsgpackCodec()


@dataclass(frozen=True, slots=True)
class Hello:
    """``{"type": "hello", "token"?: str, "since"?: int}``: who is watching, and from where."""

    token: str | None
    since: int | None
    type: Literal["hello"] = "hello"


@dataclass(frozen=True, slots=True)
class CommandFrame:
    """``{"type": "command", "id": str, "command": {...}, "expected_version"?: int}``."""

    id: str
    command: dict[str, Any]
    expected_version: int | None
    type: Literal["command"] = "command"


ClientFrame = Hello | CommandFrame


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional_version(frame: dict[str, Any], key: str) -> int | None:
    value = frame.get(key)
    if value is None:
        return None
    if not _is_int(value) or value < 0:
        raise ServiceError(ErrorCode.BAD_FRAME, f"{key!r} must be a non-negative int, got {value!r}")
    return int(value)


def parse_command(raw: Any) -> dict[str, Any]:
    """A command object as engines take it: ``{"type": str, "args": dict}`` (args default ``{}``
    when left out; ``null`` is not an object and is refused, as any other non-object)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str) or not raw["type"]:
        raise ServiceError(ErrorCode.BAD_FRAME, f"'command' must be an object with a string 'type', got {raw!r}")
    args = raw.get("args", {})
    if not isinstance(args, dict):  # null too: args are left out when there are none
        raise ServiceError(
            ErrorCode.BAD_COMMAND, f"command 'args' must be an object (leave it out for none), got {args!r}"
        )
    refuse_unknown_fields(raw, COMMAND_FIELDS, "'command'", ErrorCode.BAD_FRAME)
    return {"type": raw["type"], "args": args}


def parse_frame(obj: Any) -> ClientFrame:
    """Check a decoded client frame and type it; raise ``bad_frame``/``unknown_frame``."""
    if not isinstance(obj, dict):
        raise ServiceError(ErrorCode.BAD_FRAME, f"a frame is an object with a 'type', got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ServiceError(ErrorCode.BAD_FRAME, f"a frame needs a string 'type', got {kind!r}")
    if kind == "hello":
        refuse_unknown_fields(obj, HELLO_FIELDS, "a hello frame", ErrorCode.BAD_FRAME)
        token = obj.get("token")
        if token is not None and (not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH):
            raise ServiceError(ErrorCode.BAD_FRAME, "'token' must be a string (the one POST /games/{id}/seats gave)")
        return Hello(token=token or None, since=_optional_version(obj, "since"))
    if kind == "command":
        refuse_unknown_fields(obj, COMMAND_FRAME_FIELDS, "a command frame", ErrorCode.BAD_FRAME)
        frame_id = obj.get("id")
        if not isinstance(frame_id, str) or not 0 < len(frame_id) <= MAX_ID_LENGTH:
            raise ServiceError(
                ErrorCode.BAD_FRAME,
                f"a command frame needs an 'id': a string of 1-{MAX_ID_LENGTH} chars, got {frame_id!r}",
            )
        return CommandFrame(
            id=frame_id,
            command=parse_command(obj.get("command")),
            expected_version=_optional_version(obj, "expected_version"),
        )
    raise ServiceError(ErrorCode.UNKNOWN_FRAME, f"unknown frame type {kind!r}; expected 'hello' or 'command'")


def readable_command_id(obj: Any) -> str | None:
    """The ``id`` of a decoded command frame when it is a valid one, whatever else is wrong
    with the frame: every error answering that frame carries it, so the client knows which
    command was refused."""
    if isinstance(obj, dict) and obj.get("type") == "command":
        frame_id = obj.get("id")
        if isinstance(frame_id, str) and 0 < len(frame_id) <= MAX_ID_LENGTH:
            return frame_id
    return None


def error_frame(error: ServiceError, command_id: str | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "error", "code": error.code, "message": error.message}
    if command_id is not None:
        frame["id"] = command_id
    return frame


def ack_frame(command_id: str, version: int, duplicate: bool = False) -> dict[str, Any]:
    return {"type": "ack", "id": command_id, "version": version, "duplicate": duplicate}
