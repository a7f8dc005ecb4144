"""The rules' outputs are pinned: a sha256 over everything each engine says while seeded bots play
whole games through the public :class:`games.base.Engine` API must stay the one recorded here.

A refactoring of ``games/`` (modules split, engines rebuilt) changes no rule output: every event,
state view (whole and split), legal move list, waiting seat, clock seat, timeout answer, redaction,
reveal flag, refusal and summary of these games is hashed in order. Any change to any of them moves
a fingerprint. A rule change that is meant must re-record them (``python -m
tests.games.test_fingerprints`` prints the new table) and say so in its commit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from games import find_engine
from games.base import SPECTATOR, Engine, Event, RuleError, derive_dealer, owing_seat
from games.carcassonne import bots as carcassonne_bots
from games.castle import bots as castle_bots
from games.castle_panic import bots as castle_panic_bots
from games.draw import Draw, seed_from_int

BOTS: Mapping[str, Mapping[str, Any]] = {
    "carcassonne": carcassonne_bots.BOTS,
    "castle": castle_bots.BOTS,
    "castle_panic": castle_panic_bots.BOTS,
}

# (game, seats, options, seed, draw scheme): every game's variants, under donjon-draw-2 (deals)
# and donjon-draw-1 (draws per decision), each with all of the game's bots seated in turn.
CASES: list[tuple[str, int, dict[str, Any], int, str]] = [
    ("carcassonne", 2, {}, 1, "deal"),
    ("carcassonne", 3, {"farmers": False, "tiny_city_points": 2}, 2, "draw1"),
    ("carcassonne", 5, {"inns_cathedrals": True, "junction_inn": "east_west"}, 3, "deal"),
    ("carcassonne", 6, {"inns_cathedrals": True}, 4, "draw1"),
    ("castle", 2, {}, 1, "deal"),
    ("castle", 2, {"ties": "both"}, 2, "draw1"),
    ("castle", 2, {"falcon": True}, 3, "deal"),
    ("castle", 2, {"falcon": True, "halt_at_gates": True, "ties": "both"}, 4, "draw1"),
    ("castle_panic", 1, {}, 1, "deal"),
    ("castle_panic", 2, {}, 2, "draw1"),
    ("castle_panic", 3, {"overlord": True}, 3, "deal"),
    ("castle_panic", 4, {"hidden_hands": True, "master_slayer": False, "all_for_one": True}, 4, "deal"),
    ("castle_panic", 3, {"my_home_is_my_castle": True, "heroic_powers": True, "boss_moves_self": True}, 5, "draw1"),
    ("castle_panic", 5, {"easier_battles": True, "dwindling_resources": True, "under_construction": True}, 6,
     "deal"),
]
CASES += [(game, seats, {}, seed, scheme) for game, seats in (("carcassonne", 4), ("castle", 2), ("castle_panic", 2))
          for seed in (101, 102, 103) for scheme in ("deal", "draw1")]

FINGERPRINTS: dict[str, str] = {
    'carcassonne-2-default-1-deal': 'f3aeba70aa5d660c00fe93fedbc571e03c0a7b1e8b6abe369c24be7b87e7d164',
    'carcassonne-3-farmers=False,tiny_city_points=2-2-draw1': '67c035cf7e4a09b65c666ae5cc499824fc27ae92c9e2a685620b288ea7728de9',
    'carcassonne-5-inns_cathedrals=True,junction_inn=east_west-3-deal': '1c08c6e0ed53e6315682fa86bda28aec3b75be53cfff5bccc2e3f1a71e48cbfe',
    'carcassonne-6-inns_cathedrals=True-4-draw1': '366ac33deaa1772b0f2a2ed7a11754b02d648dee768987a43771b86c058e2415',
    'castle-2-default-1-deal': '19401b21adb12936bcf119edf88bb7eeab46cc4b22b17f8f4b049484d3a62b74',
    'castle-2-ties=both-2-draw1': 'fd0a060929f82acbffc88f2a71051d677dabc71715b8aa2e7b2da88bd6e477bd',
    'castle-2-falcon=True-3-deal': 'b9540c8f62667b851c98f71577ed7f697256a7eec27b7d340d0b186886004cc0',
    'castle-2-falcon=True,halt_at_gates=True,ties=both-4-draw1': '487afd219c45934989bf64ac18f1f5913c3d47ae9fcec4fbe783c5719aecfcd9',
    'castle_panic-1-default-1-deal': '5850c5d7da7bc7e94003e28826358a193233b959c9f0c85ba879ffd371bda20a',
    'castle_panic-2-default-2-draw1': 'a5b54c9141cc4b2ae3fc5056082dd66aed17c4b8f6e680e7b8bc41b836b1ee58',
    'castle_panic-3-overlord=True-3-deal': 'dc5c02a62bf83bc5be7ac068ba1a06aed7dcfd878a43b612283fbfb503acd0b7',
    'castle_panic-4-all_for_one=True,hidden_hands=True,master_slayer=False-4-deal': 'd356dae765534d34af0d8798780d4170cbf910ebf6be78a0125295363ce39a9d',
    'castle_panic-3-boss_moves_self=True,heroic_powers=True,my_home_is_my_castle=True-5-draw1': '115995d9fb710a9336a4d9ff78b6ffb5a5f57b3c5ad999e520ed0e43decf35a8',
    'castle_panic-5-dwindling_resources=True,easier_battles=True,under_construction=True-6-deal': '8d3fe4065f894ba034a14b905149e8370c187cc99aa67593b0c7b8c126ee7da1',
    'carcassonne-4-default-101-deal': 'f0ddf3903c6be43b1ee811d0cc2e844119d6cd26fe3aa04fe4061217d1af6954',
    'carcassonne-4-default-101-draw1': '408f97eb911fa6f4c023915dac36a0eeb58c5f2ac952607d355a3893fe7d255c',
    'carcassonne-4-default-102-deal': '731f6f6872e3e1288aad6893fa1efca570d303505f9eb1cf8a752da94e62cab4',
    'carcassonne-4-default-102-draw1': 'dea2d33514f152f4386cb14b16b710d6ba4e20b45dbe00dbd77dfce315591b3c',
    'carcassonne-4-default-103-deal': 'c75202b5ac38bcb17174b9ed46fb1c5d928503024517530e0ad45495de925598',
    'carcassonne-4-default-103-draw1': '4e50e899c0cec37c785b32d9ee9bbeeeb5ea29a733a2b88ec4738f945a930496',
    'castle-2-default-101-deal': 'c2266730993922d378adc1cb09939843efb9ca9a9a7bea9671d1ffdfd4a81340',
    'castle-2-default-101-draw1': 'e1a0d1f4e7b8977286d605140d0deaafbfb73d020a610e53ba493838e8830443',
    'castle-2-default-102-deal': 'da4ddddf161b2f6ccce0d0bf3b980af2037801499530628489ca0a32e03e21fe',
    'castle-2-default-102-draw1': 'a561a45f65155f721c098675734f3f21de6636bfd2c2a590a2fefaf23a8725aa',
    'castle-2-default-103-deal': 'd84005cda1b0d2f6a25fb1bf7a0dbd54ab96e5d6ed4e411e0f798277df0ce3ca',
    'castle-2-default-103-draw1': 'efc3e918627d620cead3c608655f04bcb718adf49259808ee59fa2ad11c3f8be',
    'castle_panic-2-default-101-deal': '4aa0da76c0ba561b1bc63f36351c58947f28720c3a3843e7b9d335ff1d6852e5',
    'castle_panic-2-default-101-draw1': '8aba11fd5edd1710fac60777c5dac1494f4b8fc367982fc0c0a4b6aa23969cea',
    'castle_panic-2-default-102-deal': 'be2e3f978f518f8d5d134004379de51192d22af3678355bdffd1e5184e55260b',
    'castle_panic-2-default-102-draw1': 'd8533ca6c0c6d2791f9d878be7d11d109daf69e2d0228ed69f8050632795f470',
    'castle_panic-2-default-103-deal': '1c960ebfc276996ce64db75d0a43701a64ee71a53ef9a73454c736793c781a4a',
    'castle_panic-2-default-103-draw1': '2180726a7a24c343a2d18c9a57077ada639eb6a2c102508fa46209fb58d91b16',
}
"""Case id -> sha256 of :func:`trace`, recorded before the games' redesign of issue 25."""


def case_id(case: tuple[str, int, dict[str, Any], int, str]) -> str:
    game, seats, options, seed, scheme = case
    flags = ",".join(f"{k}={v}" for k, v in sorted(options.items())) or "default"
    return f"{game}-{seats}-{flags}-{seed}-{scheme}"


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode()


def _event(event: Event | None) -> Any:
    return None if event is None else [event.type, event.payload]


def _refusal(engine: Engine, state: Any, seat: int, cmd: dict[str, Any], rng: Any) -> Any:
    try:
        return ["accepted", [_event(e) for e in engine.decide(state, seat, cmd, rng)]]
    except RuleError as error:
        return [error.code, error.message]


def trace(game: str, seats: int, options: dict[str, Any], seed: int, scheme: str) -> Iterator[Any]:
    """Everything the engine says while its bots play the game, in order."""
    engine = find_engine(game)
    bots = list(BOTS[game].values())
    players = [bots[seat % len(bots)] for seat in range(seats)]
    rng: Any = (derive_dealer(seed_from_int(seed), f"fp-{game}") if scheme == "deal"
                else Draw(seed.to_bytes(4, "big"), f"fp-{game}", 1))
    viewers = [*range(seats), SPECTATOR]
    normal = engine.normalize_options(options, seats)
    yield ["catalog", engine.catalog_entry(), normal, engine.cooperative(normal)]
    state = engine.initial_state()
    events = engine.setup(normal, seats, rng)
    counted = 0
    for step in range(2000):
        for event in events:
            yield ["event", _event(event), engine.reveals(state, event),
                   [_event(engine.redact(event, viewer)) for viewer in viewers]]
            state = engine.evolve(state, event)
        counted += len(events)
        waiting = engine.waiting_for(state)
        yield ["state", engine.is_terminal(state), waiting, engine.clock_seat(state),
               [engine.timeout_answer(state, seat) for seat in waiting], engine.summary(state)]
        for viewer in viewers:
            yield ["view", viewer, engine.view(state, viewer)]
            if hasattr(engine, "public_view"):
                yield ["split", engine.public_view(state), engine.private_view(state, viewer)]  # type: ignore[attr-defined]
        for seat in range(seats):
            yield ["legal", seat, engine.legal_moves(state, seat)]
        owing = owing_seat(engine, state, seats)
        if owing is None:
            yield ["end", step, engine.is_terminal(state)]
            return
        seat = owing
        cmd = players[seat].choose(state, seat, rng.stream(f"bot:{seat}", counted))
        other = (seat + 1) % seats
        yield ["command", seat, cmd, _refusal(engine, state, other, cmd, rng) if other != seat else None,
               _refusal(engine, state, seat, {"type": "no_such_command", "args": {}}, rng),
               _refusal(engine, state, seat, {"type": cmd["type"], "args": {**cmd.get("args", {}), "zz": 1}}, rng)]
        events = engine.decide(state, seat, cmd, rng)
    yield ["unfinished"]


def fingerprint(case: tuple[str, int, dict[str, Any], int, str]) -> str:
    digest = hashlib.sha256()
    for item in trace(*case):
        digest.update(_json(item))
        digest.update(b"\n")
    return digest.hexdigest()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_rules_say_what_they_said_when_recorded(case: tuple[str, int, dict[str, Any], int, str]) -> None:
    assert fingerprint(case) == FINGERPRINTS[case_id(case)]


if __name__ == "__main__":  # re-record (see the module docstring)
    for case in CASES:
        print(f"    {case_id(case)!r}: {fingerprint(case)!r},")
