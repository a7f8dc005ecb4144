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

from service.errors import ErrorCode, ServiceError

__all__ = [
    "MSGPACK_SUBPROTOCOL",
    "Codec",
    "JSON",
    "MSGPACK",
    "Hello",
    "CommandFrame",
    "ClientFrame",
    "parse_frame",
    "error_frame",
    "ack_frame",
]

MSGPACK_SUBPROTOCOL = "donjon.msgpack"
MAX_ID_LENGTH = 128
MAX_TOKEN_LENGTH = 256


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

    def decode(self, data: str | bytes) -> Any:
        raise NotImplementedError


class _JsonCodec(Codec):
    name = "json"
    binary = False

    def encode(self, frame: dict[str, Any]) -> bytes:
        return json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode()

    def decode(self, data: str | bytes) -> Any:
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ServiceError(ErrorCode.BAD_JSON, f"the frame is not valid JSON: {exc}") from None


class _MsgpackCodec(Codec):
    name = "msgpack"
    binary = True

    def encode(self, frame: dict[str, Any]) -> bytes:
        return msgpack.packb(frame, use_bin_type=True)

    def decode(self, data: str | bytes) -> Any:
        if isinstance(data, str):
            raise ServiceError(ErrorCode.BAD_JSON, "msgpack sockets take binary frames, got a text frame")
        try:
            return msgpack.unpackb(data, raw=False, strict_map_key=True)
        except Exception as exc:  # msgpack raises several unrelated types for garbage
            raise ServiceError(ErrorCode.BAD_JSON, f"the frame is not valid msgpack: {exc}") from None


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
    return value


def parse_command(raw: Any) -> dict[str, Any]:
    """A command object as engines take it: ``{"type": str, "args": dict}`` (args default ``{}``)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str) or not raw["type"]:
        raise ServiceError(ErrorCode.BAD_FRAME, f"'command' must be an object with a string 'type', got {raw!r}")
    args = raw.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ServiceError(ErrorCode.BAD_COMMAND, f"command 'args' must be an object, got {args!r}")
    extra = set(raw) - {"type", "args"}
    if extra:
        raise ServiceError(ErrorCode.BAD_FRAME, f"command has unexpected field(s) {sorted(extra)!r}")
    return {"type": raw["type"], "args": args}


def parse_frame(obj: Any) -> ClientFrame:
    """Check a decoded client frame and type it; raise ``bad_frame``/``unknown_frame``."""
    if not isinstance(obj, dict):
        raise ServiceError(ErrorCode.BAD_FRAME, f"a frame is an object with a 'type', got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ServiceError(ErrorCode.BAD_FRAME, f"a frame needs a string 'type', got {kind!r}")
    if kind == "hello":
        token = obj.get("token")
        if token is not None and (not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH):
            raise ServiceError(ErrorCode.BAD_FRAME, "'token' must be a string (the one POST /games/{id}/seats gave)")
        return Hello(token=token or None, since=_optional_version(obj, "since"))
    if kind == "command":
        frame_id = obj.get("id")
        if not isinstance(frame_id, str) or not 0 < len(frame_id) <= MAX_ID_LENGTH:
            raise ServiceError(
                ErrorCode.BAD_FRAME, f"a command frame needs an 'id': a string of 1-{MAX_ID_LENGTH} chars, got {frame_id!r}"
            )
        return CommandFrame(
            id=frame_id,
            command=parse_command(obj.get("command")),
            expected_version=_optional_version(obj, "expected_version"),
        )
    raise ServiceError(ErrorCode.UNKNOWN_FRAME, f"unknown frame type {kind!r}; expected 'hello' or 'command'")


def error_frame(error: ServiceError, command_id: str | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "error", "code": error.code, "message": error.message}
    if command_id is not None:
        frame["id"] = command_id
    return frame


def ack_frame(command_id: str, version: int, duplicate: bool = False) -> dict[str, Any]:
    return {"type": "ack", "id": command_id, "version": version, "duplicate": duplicate}
