"""A node's 32-byte keys (the seed key, the signing key): from a setting, else a private file in
the data folder, made on first use with mode 0600.

>>> key_bytes("ab" * 32, "DONJON_X") == bytes([0xAB]) * 32
True
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = ["key_bytes", "setting_or_file_key"]


def key_bytes(text: str, source: str) -> bytes:
    """64 hex digits as 32 bytes; :class:`ValueError` naming ``source`` otherwise."""
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ValueError(f"{source} must be 64 hex digits (32 bytes)")
    return key


def setting_or_file_key(setting: str | None, setting_name: str, path: Path) -> bytes:
    """The key the setting names, else the one in ``path`` (made when missing: a fresh random key,
    readable by the owner only)."""
    if setting:
        return key_bytes(setting, setting_name)
    if not path.exists():
        _make_key_file(path)
    return key_bytes(path.read_text(), str(path))


def _make_key_file(path: Path) -> None:
    """Write a fresh key to ``path`` unless another process does first (the workers of
    ``donjon serve --workers N`` all start on a new data folder at once): the key is written whole
    to a file of this process's own, then linked to ``path``, which fails if ``path`` exists, so
    every process reads one whole key, and the same one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        with contextlib.suppress(FileExistsError):  # another process's key is the key
            os.link(draft, path)
    finally:
        draft.unlink()
