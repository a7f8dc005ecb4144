"""``donjon keys list`` and ``donjon keys rotate``: the deployment's signing keys, in the store.

``list`` prints what ``GET /keys`` answers (JSON); ``rotate`` retires the current key (its
``signed_until`` is now) and makes a new current one, which every node signs with within a few
seconds (:mod:`service.fairness.deployment_keys`); exports signed before keep verifying against
``GET /keys``, which still lists the retired key. Both read the store the settings name, as
``donjon replay`` does, and need the deployment's seed key (``DONJON_SEED_KEY`` or the keys
folder's ``seed.key``); exit 0, or 2 for a store or keyring that cannot be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.run.console import out

if TYPE_CHECKING:
    from events.protocol import Store

__all__ = ["add_keys_parser", "keys_command"]

WithStore = Callable[[Any, Callable[["Store"], Awaitable[int]]], Awaitable[int]]


def add_keys_parser(sub: Any) -> None:
    """``donjon keys list|rotate`` on the CLI's subcommands."""
    keys = sub.add_parser("keys", help="the deployment's signing keys: list them, or rotate the current one")
    keys.add_argument("action", choices=("list", "rotate"))
    keys.add_argument("--data-dir", type=Path, help="embedded server data folder (default ./donjon-data)")


async def keys_command(settings: Any, args: argparse.Namespace, with_store: WithStore) -> int:
    """Run ``donjon keys <action>`` on the store (``with_store`` is the CLI's way to reach it)."""
    from service.ops.logs import get_logger, logs_to_stderr
    from service.ops.settings import SettingsError
    from service.play.game_service import now_ms
    from service.run.app import node_vault, open_deployment_keys

    logs_to_stderr(settings)  # stdout is the listing
    try:
        vault = node_vault(settings)
    except SettingsError as exc:
        sys.stderr.write(f"donjon: {exc}\n")
        return 2

    async def work(store: Store) -> int:
        try:
            keys = await open_deployment_keys(settings, store, vault, now_ms)  # type: ignore[arg-type]
        except SettingsError as exc:
            sys.stderr.write(f"donjon: {exc}\n")
            return 2
        if args.action == "rotate":
            listing = await keys.rotate()
            get_logger().info("keys.rotated", key_id=listing["keys"][0]["id"], retired=listing["keys"][1]["id"])
        else:
            listing = await keys.listing()
        out(json.dumps(listing, indent=2))
        return 0

    return await with_store(settings, work)
