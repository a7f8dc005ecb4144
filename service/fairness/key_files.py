"""A node's 32-byte keys (the seed key; an old signing key): from a setting, else a private file
in the keys folder (``DONJON_KEYS_DIR``, by default ``donjon-keys`` beside the data folder, never
the data folder itself: a copy of the data folder alone must open nothing), made on first use
with mode 0600. A key file an older version left in the data folder is moved to the keys folder
(:func:`moved_out_of_data`, logged as ``keys.file_moved``).

>>> key_bytes("ab" * 32, "DONJON_X") == bytes([0xAB]) * 32
True
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

from service.ops.logs import get_logger

__all__ = ["key_bytes", "moved_out_of_data", "setting_or_file_key"]

log = get_logger()


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


def moved_out_of_data(name: str, data_dir: Path, keys_dir: Path) -> Path:
    """``keys_dir/name``, after moving there a file of that name found in ``data_dir`` (where
    older versions kept it). Several processes may start at once: the file is linked to its new
    place (which fails if it exists), then unlinked from the old one. :class:`ValueError` when
    both places hold different keys (which one sealed the store's seeds cannot be told here)."""
    old, new = Path(data_dir) / name, Path(keys_dir) / name
    if old.absolute() == new.absolute() or not old.exists():
        return new
    new.parent.mkdir(parents=True, exist_ok=True)
    try:
        _link_or_copy(old, new)
    except FileExistsError:
        if new.read_text().strip() != old.read_text().strip():
            raise ValueError(f"{old} and {new} hold different keys: keep the right one in {new.parent}") from None
    with contextlib.suppress(FileNotFoundError):  # another process moved it first
        old.unlink()
        log.warning("keys.file_moved", file=name, source=str(old.parent), to=str(new.parent))
    return new


def _link_or_copy(old: Path, new: Path) -> None:
    """``new`` made a hard link of ``old``, or a private copy when they are on two file systems."""
    try:
        os.link(old, new)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        draft = new.with_name(f".{new.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(old.read_text())
        try:
            os.link(draft, new)
        finally:
            draft.unlink()
