"""Structured logs: JSON lines in production, a readable console on a terminal.

``configure_logging`` is called once by the CLI (the tests configure structlog their own way, into
the standard library's ``logging``, where pytest captures it: ``tests/conftest.py``). Log
lines bind ``game_id``, ``version``, ``command_id`` and ``latency_ms`` where they apply; the
event name is the first argument (``log.info("command.accepted", game_id=..., ...)``). Every
line carries ``node_id`` (``DONJON_NODE_ID``) when the CLI names it.

The service's own lines go from structlog straight to the stream. The records of the standard
library's loggers (aiohttp, asyncio, redis, ``warnings``, and an exception that ends the process)
go through a handler on the root logger
whose :class:`structlog.stdlib.ProcessorFormatter` renders them with the same renderer, so in
JSON mode every line on the stream, whoever logged it, is one JSON object; a record's traceback
becomes its ``exception`` field.
"""

from __future__ import annotations

import json
import logging
import sys
from types import TracebackType
from typing import Any, TextIO

import orjson
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

__all__ = ["configure_logging", "get_logger", "logs_to_stderr"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class _DonjonHandler(logging.StreamHandler[TextIO]):
    """The root handler :func:`configure_logging` installs (and replaces when called again)."""


def _node_id(node_id: str) -> Processor:
    def add(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
        event_dict.setdefault("node_id", node_id)
        return event_dict

    return add


def logs_to_stderr(settings: Any) -> None:
    """For a CLI command whose stdout is its result: log lines go to stderr (structlog's own
    default prints them to stdout), unless logging is configured already (a host that runs the
    command in its own process, such as a test, keeps its own)."""
    if not structlog.is_configured():
        configure_logging(settings.log_format, settings.log_level)


def configure_logging(
    log_format: str = "auto", level: str = "info", stream: TextIO | None = None, node_id: str | None = None
) -> logging.Handler:
    """``log_format``: ``json``, ``console``, or ``auto`` (console when ``stream`` is a TTY).

    Returns the handler installed on the root logger for the standard library's records.
    """
    out = stream or sys.stderr
    tty = bool(getattr(out, "isatty", lambda: False)())
    if log_format == "auto":
        log_format = "console" if tty else "json"
    renderer: Processor
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer(serializer=_dumps)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=tty)
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if node_id:
        shared.append(_node_id(node_id))
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        # One write per line (print() writes the newline apart), so the lines of several workers
        # sharing one stdout never interleave.
        logger_factory=structlog.WriteLoggerFactory(file=out),
        cache_logger_on_first_use=True,
    )
    return _route_stdlib(out, level, shared, renderer)


def _dumps(event_dict: EventDict, **_: Any) -> str:
    """One JSON line by orjson; a value it cannot encode is written as its ``repr``, as
    structlog's own renderer does (the standard library's encoder takes integers beyond 64 bits)."""
    try:
        return orjson.dumps(event_dict, default=repr, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(event_dict, default=repr)


def _route_stdlib(out: TextIO, level: str, shared: list[Processor], renderer: Processor) -> logging.Handler:
    handler = _DonjonHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _DonjonHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(_LEVELS[level])
    logging.captureWarnings(True)  # a warning is a record too, not a bare line on stderr
    sys.excepthook = _log_uncaught  # so is the traceback of an exception that ends the process
    return handler


def _log_uncaught(kind: type[BaseException], error: BaseException, traceback: TracebackType | None) -> None:
    logging.getLogger("donjon").critical("process.uncaught_exception", exc_info=(kind, error, traceback))


def get_logger(**bound: Any) -> Any:
    """A lazy logger: it takes the configuration in force when it first logs, not at import."""
    return structlog.get_logger("donjon", **bound)
