"""Stopping a background task for sure.

``task.cancel(); await task`` can hang for good on Python 3.11: redis-py sends each command under
``asyncio.wait_for``, which swallows a cancel that lands just as the send completes (CPython
gh-86296, fixed in 3.12), and a task whose loop runs forever then runs on. So the cancel is
repeated until the task has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["stop_task"]


async def stop_task(task: asyncio.Task[Any] | None, *, every: float = 0.05) -> None:
    """Cancel ``task`` (again every ``every`` seconds while it still runs) and wait for its end.
    Its own failure, if it had one, is not raised here."""
    if task is None:
        return
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=every)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()
