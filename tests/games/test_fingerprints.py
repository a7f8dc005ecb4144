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
    'carcassonne-2-default-1-deal': '9d36802a86d59cfdecf59cb72d428fb8225d3f2c314345fa2ec084cd07757f12',
    'carcassonne-3-farmers=False,tiny_city_points=2-2-draw1': 'f09c2cfa07e34522343de38cb0a6b1c0779c1581401476fd32050e9f3696db63',
    'carcassonne-5-inns_cathedrals=True,junction_inn=east_west-3-deal': 'c06e8be5e9ca577429529d5461a90ad0afb669c35e519571fc71f08eb7f3acbc',
    'carcassonne-6-inns_cathedrals=True-4-draw1': '3219241921940929af2dff7fb037f29ee6f2129b581ed40ec0805d7d4caea468',
    'castle-2-default-1-deal': 'e6788dbac1c1e7fdf30e952be2bbab3e03b608c3f79ffa107a17bdac59da3d20',
    'castle-2-ties=both-2-draw1': 'd48532491474025acc3c05759263fb2a6455d14ec41be96f64b65a8132ba669d',
    'castle-2-falcon=True-3-deal': '8696ea586d53946f9e7bc8f85731750bd0368bb5cdb0f05bee39ba8d85a8e305',
    'castle-2-falcon=True,halt_at_gates=True,ties=both-4-draw1': 'b196df279472e575065c3608346d13ed2a84b1d0f67194a9014a7671b0866070',
    'castle_panic-1-default-1-deal': '0dec878658df475baff63c3a5cd058f7eaf2251a8a413d472fec3ff3b2f6e476',
    'castle_panic-2-default-2-draw1': '45273ae86b61a3bd35906d05b51e6b70aba9b35aa6f68b8bd839b70ee8c8fc72',
    'castle_panic-3-overlord=True-3-deal': '4b98e6f33020e1ebaa92100fb2ff29ce32bc235efca9797e1f6d7aa2cf068eed',
    'castle_panic-4-all_for_one=True,hidden_hands=True,master_slayer=False-4-deal': '7eb83d4eda4fad1696ea1e7268cd9405a6f6f689cf41135f923a075305eb17cb',
    'castle_panic-3-boss_moves_self=True,heroic_powers=True,my_home_is_my_castle=True-5-draw1': '0dbfaf4e033aa75ac22da5c53e41e43aa9b11376c883643366cf47a8a8f69de1',
    'castle_panic-5-dwindling_resources=True,easier_battles=True,under_construction=True-6-deal': '88523239670abe7a7beedfcfcd060c40b78ee282a9de7cd804a03225b7174af1',
    'carcassonne-4-default-101-deal': '01c1bdaa19e1d09081032f3d36bfbdb8e7a89bce8c6715693310c3e7c8069b20',
    'carcassonne-4-default-101-draw1': '18eeff38b1527c300780f36900b4010f0af855a0f373757143fba4b791a3dfff',
    'carcassonne-4-default-102-deal': '63ad479bc83a18b005eac41b0ae9b0338e608807c9d8380d7715d0bf4be29cfa',
    'carcassonne-4-default-102-draw1': '298cbe332d3f0cac3c2a8dbe43aa3935c85affb5b1c277a5868ad617c25e630a',
    'carcassonne-4-default-103-deal': '06013016d07a1dffd45b0a01ad7413e2b1ecd64707dfc2ab0461b9f64ab8f427',
    'carcassonne-4-default-103-draw1': '763b2c8a76f85fbae624b11b37fb41d2a4837097502a7e8cf0c9cba8370f6de3',
    'castle-2-default-101-deal': 'c6b43b01fc2a8d8fed2fb7ff38bb2a354225ba80ed3e0b39213f331e3dae594b',
    'castle-2-default-101-draw1': 'b7400ae22712d6c39fc6e781fc09f52b12189333212a97d4933cf88bb07bd728',
    'castle-2-default-102-deal': '8072436e98e00af5ea013d038bc8e9e14939f4221be2b46160394c6b25cd57a6',
    'castle-2-default-102-draw1': '57ca8cc58569ebf4487ed03a68fa636d9770026796dc5caee95c8727ff8604c1',
    'castle-2-default-103-deal': '9e8054a1376caea7b44c0edcc4c7c8198aff7a723213f706106a71053428c4a4',
    'castle-2-default-103-draw1': 'c36a8476f1580309542c29e50726e29e045f3e3a0633c8d20159465af709851c',
    'castle_panic-2-default-101-deal': 'ecefd28df5ce66209687a82b388c8865f6d47c87f7d41a8fa4b039fd228a38b5',
    'castle_panic-2-default-101-draw1': 'ba84a615ec8bbdb27a0ac5f9accf8c967b01b8e6ca228b39bb3b0406c05f9df5',
    'castle_panic-2-default-102-deal': 'e6e8b2f96beb7b175b6d1e8bf0fb30cd934870e21e27465c068ca34d777999ea',
    'castle_panic-2-default-102-draw1': 'aa4bb3a10fd7987f619a0f0c3ba4dca87188e245df1346e84797d7220ae2aa14',
    'castle_panic-2-default-103-deal': '9ff200930906dd4f7483659155b423641543f653a3966f78e90d3bb907a3e1f4',
    'castle_panic-2-default-103-draw1': '012c764704f8f3f321bd8d8d9c43b83748535361c92ba8df27e7a581b3a8906a',
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
