"""``donjon verify FILE --ledger FILE|URL``: the game of an export is in the public ledger, at its place.

The ledger is a saved ``GET /ledger`` answer (a page, or ``?game=ID``'s) or the URL of the route
(``/ledger``: the verifier asks ``?game=ID`` and follows ``next`` to the head). The check, in
this order, each failure a ``ledger: ...`` problem:

1. the export names its place (``ledger: {"position", "hash"}``, which its signature covers);
2. **missing entry**: the ledger has an entry at that position;
3. **broken entry**: that entry is this game's (``id``, ``game``), with the public options, the
   ``seed_commitment`` and the time of its ``game.created``, and its hash is the one the export names;
   no other entry names the game (a game dealt twice);
4. **chain**: every entry's hash is ``sha256(prev_hash || canonical JSON)`` of its fields, each
   linked to the one before, positions in a row, from the game's entry to the head;
5. **head**: the head is the last entry, and its Ed25519 signature is valid (by the key given
   with ``--key``, when given).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from events.ledger import entry_hash
from service.fairness.signing import check_signature

__all__ = ["LedgerUnreadable", "ledger_problem", "load_ledger"]

_PAGES = 10_000
"""Pages a URL is followed for at most (ten million entries)."""


class LedgerUnreadable(Exception):
    """The ledger named on the command line could not be read (a file or a URL): exit 2."""


def load_ledger(source: str, game_id: str, timeout: float = 10.0) -> Any:
    """The ledger ``source`` names, as the check reads it: a file's JSON, or a URL's answers to
    ``?game=ID`` and its next pages merged into one (the last page's head)."""
    if not source.startswith(("http://", "https://")):
        try:
            with open(source, encoding="utf-8") as file:
                return json.load(file)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise LedgerUnreadable(f"cannot read the ledger {source!r}: {exc}") from None
    first = _fetch(_with_query(source, {"game": game_id}), timeout)
    if first is None:
        return {"entries": []}
    entries: list[Any] = _entries_of(first)
    head, following = first.get("head"), first.get("next")
    for _ in range(_PAGES):
        if not isinstance(following, int):
            break
        page = _fetch(_with_query(source, {"from": str(following), "limit": "1000"}), timeout) or {}
        head, following = page.get("head"), page.get("next")
        entries += _entries_of(page)
    return {"entries": entries, "head": head}


def _entries_of(page: Mapping[str, Any]) -> list[Any]:
    entries = page.get("entries")
    return list(entries) if isinstance(entries, list) else []


def _with_query(url: str, query: Mapping[str, str]) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def _fetch(url: str, timeout: float) -> dict[str, Any] | None:
    """The JSON object at ``url``; ``None`` when the ledger answers 404 (it has no such game)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise LedgerUnreadable(f"the ledger at {url!r} answered {exc.code}") from None
    except (OSError, ValueError) as exc:
        raise LedgerUnreadable(f"cannot read the ledger at {url!r}: {exc}") from None
    if not isinstance(answer, dict):
        raise LedgerUnreadable(f"the ledger at {url!r} did not answer a JSON object")
    return answer


def ledger_problem(
    export: Mapping[str, Any], created: Mapping[str, Any], ledger: Any, key: str | None
) -> str | None:
    """``None`` when the export's game is in ``ledger`` at its place (the module's checks);
    else the first problem. ``created`` is the export's ``game.created``: its payload with the
    time it was recorded (``ts``, which the entry's ``created`` is)."""
    place = export.get("ledger") if isinstance(export, Mapping) else None
    if not isinstance(place, dict) or not isinstance(place.get("position"), int):
        return "ledger: the export names no place in the ledger (a game recorded before the ledger?)"
    entries = ledger.get("entries") if isinstance(ledger, dict) else None
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        return "ledger: the ledger file has no list of entries"
    position = place["position"]
    at = [index for index, entry in enumerate(entries) if entry.get("position") == position]
    if not at:
        return f"ledger: missing entry: the ledger has no entry at position {position} (the game was dropped)"
    problem = _entry_problem(entries[at[0]], export, created, place) or _twice(entries, export.get("id"), position)
    return problem or _chain_problem(entries[at[0]:]) or _head_problem(entries[-1], ledger.get("head"), key)


def _entry_problem(
    entry: Mapping[str, Any], export: Mapping[str, Any], created: Mapping[str, Any], place: Mapping[str, Any]
) -> str | None:
    position = place["position"]
    expected = {"id": export.get("id"), "game": export.get("game"), "options": created.get("options"),
                "seed_commitment": created.get("seed_commitment"), "created": created.get("ts"),
                "hash": place.get("hash")}
    for name, value in expected.items():
        if entry.get(name) != value:
            return (f"ledger: broken entry: the entry at position {position} has {name} {entry.get(name)!r}, "
                    f"the export {value!r}")
    return None


def _twice(entries: list[dict[str, Any]], game_id: Any, position: int) -> str | None:
    for entry in entries:
        if entry.get("id") == game_id and entry.get("position") != position:
            return f"ledger: broken entry: the game has a second entry, at position {entry.get('position')} (re-dealt)"
    return None


def _chain_problem(entries: list[dict[str, Any]]) -> str | None:
    """The first link that breaks from the game's entry on, ``None`` when every one holds."""
    for index, entry in enumerate(entries):
        prev_hash, digest, position = entry.get("prev_hash"), entry.get("hash"), entry.get("position")
        if not isinstance(prev_hash, str) or not prev_hash.isascii() or _hash_of(prev_hash, entry) != digest:
            return f"ledger: chain: the entry at position {position!r} does not hash to its hash"
        before = entries[index - 1] if index else None
        if before is not None and (prev_hash != before.get("hash") or not _follows(position, before.get("position"))):
            return f"ledger: chain: the entry at position {position!r} does not follow the one before"
    return None


def _hash_of(prev_hash: str, entry: Mapping[str, Any]) -> str | None:
    """The entry's hash; ``None`` for one that has no canonical JSON (a lone surrogate in a string)."""
    try:
        return entry_hash(prev_hash, entry)
    except (ValueError, TypeError):
        return None


def _follows(position: Any, before: Any) -> bool:
    return isinstance(position, int) and isinstance(before, int) and position == before + 1


def _head_problem(last: Mapping[str, Any], head: Any, key: str | None) -> str | None:
    if not isinstance(head, dict):
        return "ledger: head: the ledger file has no signed head"
    if head.get("position") != last.get("position") or head.get("hash") != last.get("hash"):
        return (f"ledger: head: the entries end at position {last.get('position')}, the signed head is at "
                f"{head.get('position')!r} (page on to the head, or the chain was cut)")
    problem = check_signature(head, key)
    return None if problem is None else f"ledger: head: {problem}"
