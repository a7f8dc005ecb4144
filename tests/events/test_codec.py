"""Unit tests of events.codec and events.chain: no server involved."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import codec
from events.chain import link_hash, verify_bodies, verify_envelopes
from events.envelope import GENESIS_HASH, Envelope, NewEvent
from events.errors import ChainBroken, InvalidEvent
from games.base import Event

safe_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
payloads = st.dictionaries(st.text(max_size=6), safe_values, max_size=5)


def body(game_id: str, version: int, event: NewEvent | Event, **kw: Any) -> bytes:
    defaults = {"command_id": "c1", "actor": 0, "ts": 1_700_000_000_000, "command": None}
    return codec.encode_new(game_id, version, event, **{**defaults, **kw})


def chain_of(game_id: str, events: list[NewEvent]) -> list[Envelope]:
    """Envelopes linked exactly as the append script links them."""
    out, prev = [], GENESIS_HASH
    for version, event in enumerate(events, start=1):
        raw = body(game_id, version, event)
        hash_ = link_hash(prev, raw)
        out.append(codec.decode_body(raw, prev, hash_, upcasters=None))
        prev = hash_
    return out


def test_body_is_a_map_with_keys_in_the_fixed_order() -> None:
    raw = body("g1", 3, NewEvent("tile_placed", {"x": 1}), command={"type": "place", "args": {}})
    fields = msgpack.unpackb(raw)
    assert list(fields) == list(codec.BODY_KEYS)
    assert fields == {
        "game_id": "g1", "version": 3, "type": "tile_placed", "schema": 1, "payload": {"x": 1},
        "command_id": "c1", "actor": 0, "ts": 1_700_000_000_000, "command": {"type": "place", "args": {}},
    }


@settings(deadline=None, max_examples=150)
@given(payload=payloads, actor=st.none() | st.integers(0, 5), command_id=st.none() | st.text(min_size=1, max_size=8))
def test_reencoding_a_decoded_envelope_gives_the_hashed_bytes(payload, actor, command_id) -> None:
    raw = body("g-prop", 7, NewEvent("moved", payload, schema=2), actor=actor, command_id=command_id)
    envelope = codec.decode_body(raw, GENESIS_HASH, link_hash(GENESIS_HASH, raw), upcasters=None)
    assert envelope.payload == payload
    assert codec.encode_body(envelope) == raw


@settings(deadline=None, max_examples=100)
@given(payload=payloads, sealed=st.binary(min_size=1, max_size=64))
def test_a_body_with_a_sealed_part_keeps_it_last_and_reencodes_to_its_bytes(payload, sealed) -> None:
    raw = body("g-seal", 4, NewEvent("drew", payload, sealed=sealed), command={})
    assert list(msgpack.unpackb(raw)) == [*codec.BODY_KEYS, codec.SEALED_KEY]
    envelope = codec.decode_body(raw, GENESIS_HASH, link_hash(GENESIS_HASH, raw), upcasters=None)
    assert (envelope.sealed, envelope.payload, envelope.command) == (sealed, payload, {})
    assert codec.encode_body(envelope) == raw
    (loaded,) = codec.load_log(codec.dump_log([envelope]))
    assert loaded == envelope and codec.encode_body(loaded) == raw


def test_a_body_without_a_sealed_part_has_the_nine_keys_only() -> None:
    envelope = codec.decode_body(body("g1", 1, NewEvent("moved", {})), GENESIS_HASH, "h", upcasters=None)
    assert envelope.sealed is None and codec.SEALED_KEY not in msgpack.unpackb(codec.dump_log([envelope]))[0]


@pytest.mark.parametrize("sealed", [b"", "text", 7])
def test_a_sealed_part_must_be_bytes(sealed) -> None:
    with pytest.raises(InvalidEvent, match="sealed part must be non-empty bytes"):
        body("g1", 1, NewEvent("drew", {}, sealed=sealed))


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"x": 1.5}, "moved payload['x'] is a float (1.5); allowed: str, int, bool, None, list, dict with str keys"),
        ({"a": [1, b"\x00"]}, "moved payload['a'][1] is a bytes (b'\\x00'); allowed: str, int, bool, None, list, dict with str keys"),
        ({"m": {1: "one"}}, "moved payload['m'] has a non-str key 1"),
        ({"big": 2**64}, "moved payload['big'] is an int out of msgpack's range (18446744073709551616)"),
    ],
)
def test_unsafe_payload_is_refused_naming_the_path(payload, message) -> None:
    with pytest.raises(InvalidEvent) as refused:
        body("g1", 1, NewEvent("moved", payload))
    assert str(refused.value) == message


def test_bad_event_type_and_schema_are_refused() -> None:
    with pytest.raises(InvalidEvent, match="event type must be a non-empty str, got ''"):
        body("g1", 1, NewEvent("", {}))
    with pytest.raises(InvalidEvent, match="moved schema must be an int >= 1, got 0"):
        body("g1", 1, NewEvent("moved", {}, schema=0))


def test_a_games_base_event_is_accepted_with_schema_one() -> None:
    raw = body("g1", 1, Event("drew", {"card": 3}))
    assert msgpack.unpackb(raw)["schema"] == 1
    assert msgpack.unpackb(raw)["payload"] == {"card": 3}


def test_entry_id_is_the_version() -> None:
    assert codec.entry_id(42) == "42-0"
    assert codec.version_of_entry_id(b"42-0") == 42
    assert codec.version_of_entry_id("7-0") == 7


def test_upcasters_chain_to_the_newest_schema_and_skip_when_disabled() -> None:
    upcasters = codec.Upcasters()

    @upcasters.register("tile_placed", 1)
    def _v1_v2(payload: dict) -> dict:
        return {**payload, "rotation": 0}

    @upcasters.register("tile_placed", 2)
    def _v2_v3(payload: dict) -> dict:
        return {"at": [payload["x"], payload["y"]], "rotation": payload["rotation"]}

    raw = body("g1", 1, NewEvent("tile_placed", {"x": 2, "y": -1}))
    upcast = codec.decode_body(raw, GENESIS_HASH, "h", upcasters=upcasters)
    assert (upcast.schema, upcast.payload) == (3, {"at": [2, -1], "rotation": 0})
    as_stored = codec.decode_body(raw, GENESIS_HASH, "h", upcasters=None)
    assert (as_stored.schema, as_stored.payload) == (1, {"x": 2, "y": -1})
    other = codec.decode_body(body("g1", 2, NewEvent("scored", {"x": 1})), "p", "h", upcasters=upcasters)
    assert (other.schema, other.payload) == (1, {"x": 1})
    with pytest.raises(ValueError, match="an upcaster for 'tile_placed' schema 1 exists already"):
        upcasters.register("tile_placed", 1)(_v1_v2)


def test_the_default_upcaster_registry_is_empty() -> None:
    assert len(codec.UPCASTERS) == 0


def test_exported_log_round_trips_and_verifies() -> None:
    log = chain_of("g-x", [NewEvent("a", {"n": 1}), NewEvent("b", {"n": 2}), NewEvent("c", {})])
    loaded = codec.load_log(codec.dump_log(log))
    assert loaded == log
    assert verify_envelopes(loaded) == log[-1].hash


def test_edited_payload_in_an_export_is_detected_at_its_version() -> None:
    log = chain_of("g-x", [NewEvent("a", {"n": 1}), NewEvent("b", {"n": 2}), NewEvent("c", {})])
    forged = [log[0], Envelope(**{**log[1].as_dict(), "payload": {"n": 20}}), log[2]]
    with pytest.raises(ChainBroken) as broken:
        verify_envelopes(forged)
    assert (broken.value.version, broken.value.reason) == (2, "hash does not match the event's bytes")


def test_dropped_event_is_detected_where_it_is_missing() -> None:
    log = chain_of("g-x", [NewEvent("a", {}), NewEvent("b", {}), NewEvent("c", {})])
    with pytest.raises(ChainBroken) as broken:
        verify_envelopes([log[0], log[2]])
    assert (broken.value.version, broken.value.reason) == (2, "found version 3 in its place")


def test_rehashed_event_with_wrong_predecessor_is_detected() -> None:
    log = chain_of("g-x", [NewEvent("a", {}), NewEvent("b", {})])
    raw = codec.encode_body(log[1])
    relinked = Envelope(**{**log[1].as_dict(), "prev_hash": "f" * 40, "hash": link_hash("f" * 40, raw)})
    with pytest.raises(ChainBroken, match=r"hash chain broken at version 2: prev_hash f{40} != hash of the event before"):
        verify_envelopes([log[0], relinked])


def test_event_copied_from_another_game_is_detected() -> None:
    raw = body("other", 1, NewEvent("a", {}))
    with pytest.raises(ChainBroken, match="version 1: body names another game or version"):
        verify_bodies("mine", [(1, raw, GENESIS_HASH, link_hash(GENESIS_HASH, raw))])


def test_a_suffix_verifies_from_a_known_hash() -> None:
    log = chain_of("g-x", [NewEvent("a", {}), NewEvent("b", {}), NewEvent("c", {})])
    assert verify_envelopes(log[1:], first_version=2, prev_hash=log[0].hash) == log[2].hash
