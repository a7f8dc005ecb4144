"""The keys a verifier trusts: ``donjon verify --key PUBKEY`` or ``--keys FILE|URL`` (a saved ``GET /keys``).

A file signed by a key that is not listed is refused; so is one whose ``exported_at`` is later
than the listed key's retirement (``signed_until``: a retired key signs nothing more), and a
``donjon.export/1`` file signed by a key the keyring made (one with a ``signed_from``: made by a
version that writes only ``/2`` files). ``legacy_games_before`` of the listing bounds which games
may claim legacy schemes (:mod:`service.fairness.verify`).

>>> trusted = TrustedKeys.from_key("ab" * 32)
>>> trusted.refusal("ab" * 32, "donjon.export/2", 5) is None
True
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["TrustedKeys", "TrustedKeysError"]

_FETCH_TIMEOUT_S = 10
_MAX_LISTING_BYTES = 1 << 20


class TrustedKeysError(ValueError):
    """The trusted keys given cannot be read (a usage error: nothing was verified)."""


def _public_key(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) != 64:
        raise TrustedKeysError(f"{where}: a public key is 64 hex digits")
    try:
        bytes.fromhex(value)
    except ValueError:
        raise TrustedKeysError(f"{where}: a public key is 64 hex digits") from None
    return value.lower()


def _optional_ms(value: Any, where: str) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise TrustedKeysError(f"{where}: a time is an integer of ms, or null")
    return value


@dataclass(frozen=True, slots=True)
class _Trusted:
    public_key: str
    signed_from: int | None
    signed_until: int | None


@dataclass(frozen=True, slots=True)
class TrustedKeys:
    keys: tuple[_Trusted, ...]
    legacy_games_before: int | None = None

    @classmethod
    def from_key(cls, public_key: str) -> TrustedKeys:
        """One key (``--key``), trusted for every file."""
        return cls((_Trusted(_public_key(public_key.strip(), "--key"), None, None),))

    @classmethod
    def from_listing(cls, listing: Any, where: str = "--keys") -> TrustedKeys:
        """A ``GET /keys`` answer; :class:`TrustedKeysError` for anything else."""
        if not isinstance(listing, dict) or not isinstance(listing.get("keys"), list) or not listing["keys"]:
            raise TrustedKeysError(f"{where}: not a GET /keys answer (an object with a non-empty 'keys' list)")
        keys = []
        for entry in listing["keys"]:
            if not isinstance(entry, dict):
                raise TrustedKeysError(f"{where}: every key is an object")
            keys.append(_Trusted(_public_key(entry.get("public_key"), where),
                                 _optional_ms(entry.get("signed_from"), where),
                                 _optional_ms(entry.get("signed_until"), where)))
        return cls(tuple(keys), _optional_ms(listing.get("legacy_games_before"), where))

    @classmethod
    def load(cls, source: str) -> TrustedKeys:
        """The listing saved in the file ``source``, or served at the ``http(s)://`` URL ``source``."""
        try:
            if source.startswith(("http://", "https://")):
                with urllib.request.urlopen(source, timeout=_FETCH_TIMEOUT_S) as answer:
                    text = answer.read(_MAX_LISTING_BYTES).decode("utf-8")
            else:
                text = Path(source).read_text(encoding="utf-8")
            listing = json.loads(text)
        except (OSError, ValueError) as exc:
            raise TrustedKeysError(f"--keys {source}: cannot read a key listing ({exc})") from None
        return cls.from_listing(listing, f"--keys {source}")

    def public_keys(self) -> list[str]:
        return [key.public_key for key in self.keys]

    def refusal(self, public_key: str, export_format: Any, exported_at: Any) -> str | None:
        """Why a file of ``export_format`` exported at ``exported_at`` cannot have been signed by
        the listed ``public_key``; ``None`` when it can."""
        entry = next((key for key in self.keys if key.public_key == public_key.lower()), None)
        if entry is None:
            return "the signing key is not among the trusted keys given"
        if export_format == "donjon.export/1":
            if entry.signed_from is not None:
                return "a key made since donjon.export/2 signs no donjon.export/1 file"
            return None
        if entry.signed_from is not None and (not isinstance(exported_at, int) or exported_at < entry.signed_from):
            return f"the file's exported_at {exported_at!r} is before its signing key existed ({entry.signed_from})"
        if entry.signed_until is not None and (not isinstance(exported_at, int) or exported_at > entry.signed_until):
            return (f"the signing key was retired at {entry.signed_until}, before the file's "
                    f"exported_at {exported_at!r}")
        return None
