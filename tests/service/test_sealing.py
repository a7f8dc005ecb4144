"""Sealed at rest (service/fairness/sealing.py), without a server: what the store keeps in clear is what a
spectator may see, the rest opens only with the game's hiding key and only in its own place, and
the fold refuses an event whose sealed part is still closed."""

from __future__ import annotations

import dataclasses
import hmac
import os
from pathlib import Path
from typing import Any

import msgpack
import pytest

import games
from events.envelope import Envelope
from games.base import Event
from games.draw import DRAW_VERSION
from projections.game import GameProjection, ProjectionError
from projections.views import event_for
from service.fairness.draw_schemes import rng_for
from service.fairness.sealing import (
    HIDDEN_TYPE,
    SealedPartError,
    Sealer,
    associated_data,
    clear_part,
    hiding_key,
    open_log,
)
from service.play import decisions
from service.play.decisions import HIDDEN
from tests.tinygame import TINY, TinyEngine

ENGINES = games.default_engines()
SEED = bytes(range(32))


def stored_envelopes(game_id: str, engine: Any, events: list[Event], command: dict[str, Any] | None,
                     first_version: int = 1, seed: bytes = SEED) -> list[Envelope]:
    """The envelopes the store would return for one sealed append."""
    stored, kept = Sealer(game_id, seed).seal(engine, events, first_version, command, HIDDEN)
    return [
        Envelope(game_id, first_version + i, e.type, e.schema, e.payload, "c1", 0, 1, "", "",
                 kept if i == 0 else None, e.sealed)
        for i, e in enumerate(stored)
    ]


def test_the_hiding_key_is_the_hmac_of_the_server_seed_and_the_part_binds_game_version_and_type():
    assert hiding_key(SEED) == hmac.digest(SEED, b"donjon-hidden-1", "sha256")
    assert associated_data("g1", 12, "drew") == b"donjon-hidden-1\x00g1\x0012\x00drew"


def test_a_drawn_card_is_kept_as_spectators_see_it_and_the_seat_gets_it_back():
    (stored,) = stored_envelopes("g1", TINY, [Event("drew", {"seat": 0, "card": 3})], {"type": "draw", "args": {}})
    assert (stored.payload, stored.command) == ({"seat": 0}, {})  # the spectator's copy; the command sealed
    assert stored.payload == event_for(TINY, dataclasses.replace(stored, payload={"seat": 0, "card": 3}), None)[
        "payload"]
    opened = Sealer("g1", SEED).open(stored)
    assert (opened.payload, opened.command, opened.sealed) == ({"seat": 0, "card": 3}, {"type": "draw", "args": {}},
                                                               None)


def test_what_spectators_see_whole_is_kept_in_clear_as_it_is_with_no_sealed_part():
    created = decisions.game_created("tiny", TINY, {"target": 6}, 2, SEED)
    seat = Event("game.seat_taken", {"seat": 0, "name": "ann", "seed_contribution": "x", "seed_contribution_from": "seat"})
    stored = stored_envelopes("g1", TINY, [created, seat], decisions.seat_command("ann", "x"))
    assert [(e.payload, e.sealed) for e in stored] == [(created.payload, None), (seat.payload, None)]
    assert list(stored[0].payload) == list(created.payload)  # the very payload, in its own order
    assert stored[0].command == {"type": "take_seat", "args": {"name": "ann", "client_seed": "x"}}


@pytest.mark.parametrize(("game", "order"), [("carcassonne", ["D", "E", "B"]), ("castle", ["B01", "B02", "B03"])])
def test_a_scripted_tile_order_and_its_salt_are_sealed_and_only_the_commitment_stays(game, order):
    engine = ENGINES[game]
    options = engine.normalize_options({"tile_order": order}, 2)
    events = engine.setup(options, 2, rng_for(DRAW_VERSION, SEED, "g1", 2))
    stored = stored_envelopes("g1", engine, list(events), None, first_version=3)
    started = next(e for e in stored if e.type == "game_started")
    assert started.payload["tile_order"] is None and started.payload["secret_salt"] is None
    assert started.payload["tile_order_sha256"] and started.sealed is not None
    assert Sealer("g1", SEED).open(stored[stored.index(started)]).payload["tile_order"] == order
    assert all(e.sealed is None for e in stored if e is not started)  # the draws are public when made


def test_the_overlords_hand_is_sealed_and_only_its_size_stays():
    engine = ENGINES["castle_panic"]
    event = Event("overlord_drew", {"seat": 3, "tokens": ["goblin#1", "orc#2"], "plays": 1})
    (stored,) = stored_envelopes("g1", engine, [event], None)
    assert stored.payload == {"seat": 3, "count": 2, "plays": 1}
    assert stored.sealed is not None and b"goblin#1" not in msgpack.packb(stored.payload) + stored.sealed
    assert Sealer("g1", SEED).open(stored).payload == event.payload


def test_a_part_opens_only_with_its_games_key_in_its_own_place():
    (stored,) = stored_envelopes("g1", TINY, [Event("drew", {"seat": 0, "card": 3})], None)
    with pytest.raises(SealedPartError, match="does not open with the game's hiding key"):
        Sealer("g1", bytes(32)).open(stored)  # another seed
    for moved in ({"version": 2}, {"game_id": "g2"}, {"type": "passed"}):
        with pytest.raises(SealedPartError):
            Sealer("g1", SEED).open(dataclasses.replace(stored, **moved))
    with pytest.raises(SealedPartError):
        Sealer("g1", SEED).open(dataclasses.replace(stored, sealed=stored.sealed[:-1] + b"\x00"))


class Secretive(TinyEngine):
    """Tiny, but spectators see no ``passed`` at all and a ``played`` as ``moved``, and the store
    must also seal a ``played``'s card and an ``ended``'s winner (the engine's ``sealed_at_rest``)."""

    sealed_at_rest = {"played": frozenset({"card"}), "ended": frozenset({"winner"})}

    def redact(self, event: Event, viewer: int | None) -> Event | None:
        if viewer is None and event.type == "passed":
            return None
        if viewer is None and event.type == "played":
            return Event("moved", dict(event.payload))
        return super().redact(event, viewer)


def test_an_event_hidden_or_renamed_for_spectators_and_an_engines_own_fields_are_sealed_too():
    engine = Secretive()
    events = [Event("played", {"seat": 0, "card": 2}), Event("ended", {"winner": 0}), Event("passed", {"seat": 1})]
    stored = stored_envelopes("g1", engine, events, {"type": "play", "args": {"card": 2}})
    # the spectator's type, less the fields the engine lists under the event's own type
    assert [(e.type, e.payload) for e in stored] == [("moved", {"seat": 0}), ("ended", {}), (HIDDEN_TYPE, {})]
    assert clear_part(engine, "played", {"seat": 0, "card": 2}, None) == ("moved", {"seat": 0}, None)
    opened = Sealer("g1", SEED).open_all(stored)
    assert [(e.type, e.payload) for e in opened] == [(e.type, e.payload) for e in events]
    assert opened[0].command == {"type": "play", "args": {"card": 2}}


def test_a_game_that_names_no_sealing_is_stored_as_before():
    stored, command = Sealer("g1", SEED).seal(TINY, [Event("drew", {"seat": 0, "card": 3})], 5, {"type": "draw"},
                                              None)
    assert [(e.type, e.payload, e.sealed) for e in stored] == [("drew", {"seat": 0, "card": 3}, None)]
    assert command == {"type": "draw"}


def test_the_fold_refuses_an_event_whose_sealed_part_is_still_closed():
    created = decisions.game_created("tiny", TINY, {"target": 6}, 2, SEED)
    setup = [Event("started", {"target": 6}), Event("dealt", {"seat": 0, "card": 1})]
    log = stored_envelopes("g1", TINY, [created], None) + stored_envelopes("g1", TINY, setup, None, first_version=2)
    with pytest.raises(ProjectionError, match="version 3: the event's sealed part is not open"):
        GameProjection.fold("g1", TINY, log)
    assert GameProjection.fold("g1", TINY, Sealer("g1", SEED).open_all(log)).version == 3


def test_open_log_names_what_the_store_kept_in_clear_that_spectators_may_not_see():
    created = decisions.game_created("tiny", TINY, {"target": 6}, 2, SEED)
    honest = stored_envelopes("g1", TINY, [created], None) + stored_envelopes(
        "g1", TINY, [Event("drew", {"seat": 0, "card": 3})], {"type": "draw", "args": {}}, first_version=2)
    opened, problems = open_log(TINY, "g1", SEED, honest)
    assert problems == [] and opened is not None and opened[1].payload["card"] == 3
    in_clear = [honest[0], dataclasses.replace(honest[1], payload={"seat": 0, "card": 3}, sealed=None)]
    assert open_log(TINY, "g1", SEED, in_clear)[1] == ["version 2: the stored clear part is not what a spectator may see"]
    assert open_log(TINY, "g1", None, honest) == (None, ["version 2: a sealed part, and no seed to open it with"])
    unsealed_game = [dataclasses.replace(honest[0], payload={k: v for k, v in created.payload.items() if k != "hidden"}),
                     honest[1]]
    assert open_log(TINY, "g1", SEED, unsealed_game)[1] == [
        "version 2: a sealed part in a game whose game.created names none"]


VECTOR_KEY = "8f40ba255e43643204154482daf830bf25a6ca08b8da509a1061788ad671e935"
VECTOR_PART = (
    "000000000000000000000000d3ec561e1b50e8e54eacde9f24738a0dc67ed3c7a9582d03279976e7f267b5fa92953c59d360b4b2e30f"
    "d0ca6a4ed0dff91dae3a9ba34fe5fb693898889101"
)


def test_the_test_vector_of_docs_fairness_md():
    assert hiding_key(bytes(32)).hex() == VECTOR_KEY
    part = Sealer("g1", bytes(32)).opened_part("g1", 7, "drew", bytes.fromhex(VECTOR_PART))
    assert part == {"payload": {"seat": 0, "card": 3}, "command": {"type": "draw", "args": {}}}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "fairness.md").read_text()
    assert VECTOR_KEY in doc and VECTOR_PART in doc


def test_nonces_never_repeat_across_many_seals_and_a_forked_child_cuts_its_own():
    from service.fairness import sealing

    sealer = Sealer("g1", bytes(32))
    nonces = [sealer._seal(version, "drew", {"payload": {"card": version}})[: sealing.NONCE_BYTES]
              for version in range(1, 2001)]  # several pools' worth
    assert len(set(nonces)) == len(nonces)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child cuts from a pool of its own, not from the parent's remaining bytes
        os.write(write, sealing._NONCES.take())
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read, 64) != sealing._NONCES.take()
