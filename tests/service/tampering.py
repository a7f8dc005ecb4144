"""The forgeries of the tampering matrix (tests/service/test_tampering.py): each case is a file an
attacker could hand an auditor, made from a real export, with the verdict every verifier must give.

A forger here can do anything but sign with a key it does not hold: it rewrites events and re-computes
the hash chain (SHA-256, or SHA-1 to downgrade), re-signs with a key of its own (``FOREIGN``), or,
as an operator would, with the deployment's own key (``node_key``), and writes the JSON however it
likes. The helpers re-implement the export's bytes from docs/fairness.md (canonical JSON, the chain
link, Ed25519) rather than call the service's code, so a drift of the service is caught too.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

FOREIGN = "f0" * 32
"""The private key of a forger: a key no deployment lists."""

ACCEPT, LEGACY, REFUSE = "accept", "legacy", "refuse"
"""Verdicts: fully verified and pinned; verified as "legacy: weaker guarantees"; refused."""

KEYS_BRANCH = "the keys branch (issue 21, server side) adds this check to donjon verify"

Export = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One file of the matrix: its text, and the verdict expected of every verifier (``python_xfail``:
    why today's ``donjon verify`` does not give it yet)."""

    name: str
    text: str
    expected: str
    python_xfail: str | None = None


def public_hex(private_hex: str) -> str:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_hex))
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


def key_id(public: str) -> str:
    return hashlib.sha256(bytes.fromhex(public)).hexdigest()[:16]


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed(export: Export, private_hex: str, *, claimed_id: str | None = None) -> Export:
    """``export`` signed with ``private_hex`` over every other field; ``claimed_id`` replaces the key_id."""
    unsigned = {k: v for k, v in export.items() if k != "signature"}
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_hex))
    public = public_hex(private_hex)
    value = base64.b64encode(key.sign(canonical(unsigned))).decode()
    return {**unsigned, "signature": {"algorithm": "ed25519", "key_id": claimed_id or key_id(public),
                                      "public_key": public, "value": value}}


def bodies_of(export: Export) -> list[dict[str, Any]]:
    return [msgpack.unpackb(base64.b64decode(e["body"]), raw=False) for e in export["events"]]


def link(prev: str, raw: bytes, algorithm: str) -> str:
    return hashlib.new(algorithm, prev.encode() + raw).hexdigest()


HIDDEN = b"donjon-hidden-1"
_FROM = "\x00sealed-at"  # a forger's note on a body: the (version, type) its sealed part is bound to


def _bound(game_id: str, version: int, kind: str) -> bytes:
    return b"\x00".join([HIDDEN, game_id.encode(), str(version).encode(), kind.encode()])


def _resealed(body: dict[str, Any], game_id: str, key: bytes) -> None:
    """The body's sealed part opened where it was bound and sealed again for its new place: the seed
    is revealed, so a forger holds the hiding key (docs/fairness.md, "Sealed at rest")."""
    version, kind = body.pop(_FROM)
    sealed = body["sealed"]
    plain = AESGCM(key).decrypt(sealed[:12], sealed[12:], _bound(game_id, version, kind))
    nonce = os.urandom(12)
    body["sealed"] = nonce + AESGCM(key).encrypt(nonce, plain, _bound(game_id, body["version"], body["type"]))


def rechained(export: Export, edit: Callable[[list[dict[str, Any]]], None], algorithm: str = "sha256") -> Export:
    """``export`` with ``edit(bodies)`` applied, versions renumbered 1.., every sealed part sealed again
    for its new place, every hash re-computed: what a forger holding the revealed seed can do."""
    tampered = copy.deepcopy(export)
    bodies = bodies_of(tampered)
    for body in bodies:
        if "sealed" in body:
            body[_FROM] = (body["version"], body["type"])
    edit(bodies)
    key = hmac.new(bytes.fromhex(str(export.get("seed"))), HIDDEN, hashlib.sha256).digest()
    prev = "0" * (64 if algorithm == "sha256" else 40)
    genesis, events = prev, []
    for version, body in enumerate(bodies, start=1):
        body["version"] = version
        if _FROM in body:
            _resealed(body, str(export["id"]), key)
        raw = msgpack.packb(body, use_bin_type=True)
        digest = link(prev, raw, algorithm)
        events.append({"version": version, "body": base64.b64encode(raw).decode(), "prev_hash": prev, "hash": digest})
        prev = digest
    tampered["events"] = events
    tampered["chain"] = {"algorithm": f"{algorithm}(prev_hash_hex || msgpack_body)", "genesis": genesis,
                         "version": len(events), "head": prev}
    return tampered


def text(export: Any) -> str:
    return json.dumps(export)


# --- the edits ------------------------------------------------------------------------------------


def _final_score(bodies: list[dict[str, Any]]) -> None:
    summary = bodies[-1]["payload"].setdefault("summary", {})
    scores = summary.get("scores")
    if isinstance(scores, list) and scores:
        scores[0] = (scores[0] if isinstance(scores[0], int) else 0) + 50
    else:
        summary["scores"] = [999]


def _downgrade_chain(bodies: list[dict[str, Any]]) -> None:
    bodies[0]["payload"].pop("chain", None)


def _drop_draw(bodies: list[dict[str, Any]]) -> None:
    bodies[0]["payload"].pop("draw", None)


def _fake_legacy(bodies: list[dict[str, Any]]) -> None:
    """Every mark of a new scheme taken out: what a game of before donjon-draw-1 looked like."""
    bodies[0]["payload"].pop("chain", None)
    bodies[0]["payload"].pop("draw", None)
    for body in bodies:
        if body["type"] == "game.seat_taken":
            body["payload"].pop("seed_contribution", None)
            body["payload"].pop("seed_contribution_from", None)


def _truncate(bodies: list[dict[str, Any]]) -> None:
    del bodies[len(bodies) // 2:]


def _reorder(bodies: list[dict[str, Any]]) -> None:
    """The last event of a batch from the middle of the game swapped with the command after it: an
    event moved into another batch. (Two events swapped inside one batch only the rules can tell
    apart: ``donjon verify`` re-runs them; docs/fairness.md says the browser does not.)"""
    at = next(i for i in range(len(bodies) // 2, len(bodies) - 1)
              if bodies[i]["command"] is None and bodies[i + 1]["command"] is not None)
    bodies[at], bodies[at + 1] = bodies[at + 1], bodies[at]


EXTRA_DRAW = {"carcassonne": ("tile_drawn", "tile_discarded"), "castle": ("tile_drawn", "tile_set_aside"),
              "castle_panic": ("monster_placed", "monster_placed")}
"""Per game, the event an inserted draw is copied from and the type it is given."""


def _insert_extra(game: str) -> Callable[[list[dict[str, Any]]], None]:
    """One more draw event after the setup, as a forger would add one (a copy of one of the game's, in
    the batch of the event it precedes): a discarded tile in Carcassonne (the crafted file of issue 21
    that made ``donjon verify`` crash), a tile set aside in The Castle, a monster in Castle Panic."""
    source, kind = EXTRA_DRAW[game]

    def insert(bodies: list[dict[str, Any]]) -> None:
        drawn = next(i for i, body in enumerate(bodies) if body["type"] == source)
        extra = {**copy.deepcopy(bodies[drawn]), "type": kind, "command": None}
        bodies.insert(drawn, extra)

    return insert


def _changed_seed(bodies: list[dict[str, Any]]) -> None:
    bodies[-1]["payload"]["seed"] = "11" * 32


def _changed_contribution(bodies: list[dict[str, Any]]) -> None:
    seat = next(body for body in bodies if body["type"] == "game.seat_taken")
    seat["payload"]["seed_contribution"] = "forged-contribution"


def _other_game_id(bodies: list[dict[str, Any]]) -> None:
    bodies[2]["game_id"] = "another-game"


def _unknown_draw(bodies: list[dict[str, Any]]) -> None:
    bodies[0]["payload"]["draw"] = "donjon-draw-0"


def _flipped_byte(export: Export) -> Export:
    flipped = copy.deepcopy(export)
    raw = bytearray(base64.b64decode(flipped["events"][4]["body"]))
    raw[-1] ^= 0x01
    flipped["events"][4]["body"] = base64.b64encode(bytes(raw)).decode()
    return flipped


def _loose_base64(export: Export) -> Export:
    tampered = copy.deepcopy(export)
    event = next(e for e in tampered["events"] if e["body"].endswith("=") and not e["body"].endswith("=="))
    body = event["body"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = len(body) - 2
    event["body"] = body[:last] + alphabet[alphabet.index(body[last]) ^ 1] + body[last + 1:]
    return tampered


# --- the cases ------------------------------------------------------------------------------------

GAMES = ("carcassonne", "castle", "castle_panic")


@dataclass(frozen=True)
class Forgery:
    """What the forger holds: a real export of each game, the deployment's private key (an operator's
    forgery) and the genuine fixtures of older schemes the deployment signed."""

    exports: dict[str, Export]
    node_key: str
    fixtures: dict[str, Export]

    @property
    def node_id(self) -> str:
        return key_id(public_hex(self.node_key))


@dataclass(frozen=True)
class Spec:
    """One case of the matrix: its name, its expected verdict, why ``donjon verify`` does not give it
    yet (or None), and how its file's text is made."""

    name: str
    expected: str
    python_xfail: str | None
    make: Callable[[Forgery], str]


def _by_node(game: str, edit: Callable[[list[dict[str, Any]]], None], algorithm: str = "sha256") -> Callable[[Forgery], str]:
    return lambda f: text(signed(rechained(f.exports[game], edit, algorithm), f.node_key))


def _game_specs(game: str) -> list[Spec]:
    def mine(f: Forgery) -> Export:
        return f.exports[game]

    node_forged = [
        ("chain removed, re-chained with SHA-1", _downgrade_chain, "sha1", KEYS_BRANCH),
        ("draw removed", _drop_draw, "sha256", None),
        ("made to look legacy (no draw, SHA-1, no contributions)", _fake_legacy, "sha1", None),
        ("truncated", _truncate, "sha256", None),
        ("an event moved into the next batch", _reorder, "sha256", None),
        ("an extra draw event inserted", _insert_extra(game), "sha256", None),
        ("the revealed seed changed", _changed_seed, "sha256", None),
        ("a seat contribution changed", _changed_contribution, "sha256", None),
        ("an event of another game", _other_game_id, "sha256", None),
        ("an unknown draw scheme", _unknown_draw, "sha256", None),
    ]
    return [
        Spec(f"{game}: genuine", ACCEPT, None, lambda f: text(mine(f))),
        Spec(f"{game}: final score changed, re-chained, re-signed with a foreign key", REFUSE, None,
             lambda f: text(signed(rechained(mine(f), _final_score), FOREIGN))),
        Spec(f"{game}: final score changed, re-signed with a foreign key naming the node's key_id", REFUSE, None,
             lambda f: text(signed(rechained(mine(f), _final_score), FOREIGN, claimed_id=f.node_id))),
        Spec(f"{game}: genuine but its key_id forged", REFUSE, KEYS_BRANCH,
             lambda f: text({**mine(f), "signature": {**mine(f)["signature"], "key_id": "0123456789abcdef"}})),
        Spec(f"{game}: one byte of an event flipped", REFUSE, None, lambda f: text(_flipped_byte(mine(f)))),
    ] + [Spec(f"{game}: {label}, re-signed with the node's key", REFUSE, xfail, _by_node(game, edit, algorithm))
         for label, edit, algorithm, xfail in node_forged]


def _field(name: str, value: Callable[[Export], Any]) -> Callable[[Forgery], str]:
    """The castle export with one top-level field replaced (the old signature kept)."""
    return lambda f: text({**f.exports["castle"], name: value(f.exports["castle"])})


def _resigned_field(name: str, value: Any) -> Callable[[Forgery], str]:
    return lambda f: text(signed({**f.exports["castle"], name: value}, f.node_key))


def _first_version_a_string(f: Forgery) -> str:
    tampered = copy.deepcopy(f.exports["castle"])
    tampered["events"][0]["version"] = "1"
    return text(tampered)


def _file_specs() -> list[Spec]:
    castle = lambda f: f.exports["castle"]  # noqa: E731 - a one-line accessor
    return [
        Spec("file: pretty-printed and keys reordered (the signature covers canonical JSON)", ACCEPT, None,
             lambda f: json.dumps(dict(reversed(list(castle(f).items()))), indent=2)),
        Spec("file: a real legacy game (before donjon-draw-1) the deployment signed", LEGACY,
             KEYS_BRANCH + ': every verifier line says "legacy: weaker guarantees"',
             lambda f: text(f.fixtures["legacy"])),
        Spec("file: a real donjon-draw-1 game the deployment signed", ACCEPT, None, lambda f: text(f.fixtures["draw1"])),
        Spec("file: a key twice in one object", REFUSE, None,
             lambda f: text(castle(f)).replace('"seed": ', '"seed": "00", "seed": ', 1)),
        Spec("file: an event's body in non-strict base64", REFUSE, None, lambda f: text(_loose_base64(castle(f)))),
        Spec("file: truncated text", REFUSE, None, lambda f: text(castle(f))[: len(text(castle(f))) // 2]),
        Spec("file: not JSON", REFUSE, None, lambda f: "donjon " + text(castle(f))),
        Spec("file: an event's version a string", REFUSE, None, _first_version_a_string),
        Spec("file: chain.version a string", REFUSE, None,
             _field("chain", lambda e: {**e["chain"], "version": str(e["chain"]["version"])})),
        Spec("file: events not a list", REFUSE, None, _field("events", lambda e: {"0": e["events"][0]})),
        Spec("file: the signature value a number", REFUSE, None, _field("signature", lambda e: {**e["signature"], "value": 12})),
        Spec("file: the signature value not strict base64", REFUSE, None,
             _field("signature", lambda e: {**e["signature"], "value": e["signature"]["value"].rstrip("=")})),
        Spec("file: unsigned", REFUSE, None, lambda f: text({k: v for k, v in castle(f).items() if k != "signature"})),
        Spec("file: the signature of another game", REFUSE, None,
             lambda f: text({**castle(f), "signature": f.exports["carcassonne"]["signature"]})),
        Spec("file: the signature's algorithm changed", REFUSE, None,
             _field("signature", lambda e: {**e["signature"], "algorithm": "ed448"})),
        Spec("file: an unknown format, re-signed with the node's key", REFUSE, None,
             _resigned_field("format", "donjon.export/9")),
        Spec("file: the export's id changed, re-signed with the node's key", REFUSE, None,
             _resigned_field("id", "another-game")),
        Spec("file: the export's seed not game.finished's, re-signed with the node's key", REFUSE, None,
             _resigned_field("seed", "22" * 32)),
    ]


SPECS: list[Spec] = [spec for game in GAMES for spec in _game_specs(game)] + _file_specs()
"""Every case of the matrix, in order (names are unique)."""
