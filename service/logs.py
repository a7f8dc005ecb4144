"""Structured logs: JSON lines in production, a readable console on a terminal.

``configure_logging`` is called once by the CLI (tests leave structlog's defaults alone). Log
lines bind ``game_id``, ``version``, ``command_id`` and ``latency_ms`` where they apply; the
event name is the first argument (``log.info("command.accepted", game_id=..., ...)``).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

__all__ = ["configure_logging", "get_logger"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure_logging(log_format: str = "auto", level: str = "info", stream: Any = None) -> None:
    """``log_format``: ``json``, ``console``, or ``auto`` (console when ``stream`` is a TTY)."""
    stream = stream or sys.stderr
    if log_format == "auto":
        log_format = "console" if getattr(stream, "isatty", lambda: False)() else "json"
    renderer: Any
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=getattr(stream, "isatty", lambda: False)())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=True,
    )


def get_logger(**bound: Any) -> Any:
    """A lazy logger: it takes the configuration in force when it first logs, not at import."""
    return structlog.get_logger("donjon", **bound)
