"""``donjon verify`` on any input: over a thousand mutated exports of real games of all three
games (seeded, so a failure is replayed by its case number), each gets a verdict, never a
traceback or a hang; a mismatch names its check (``MISMATCH <check>: <why>``), and ``--json``
prints exactly one JSON object.

The mutations: the file's text truncated, a character changed, inserted or deleted, a key
written twice, arrays nested deeper than any parser recurses, a lone surrogate in a string; a value anywhere replaced by one of another type, or removed; a body in loose
base64 or not msgpack at all; and, re-chained and re-signed by the deployment's key (so the
checks after the chain run), an event's payload value changed, an event inserted, copied,
dropped, or two swapped.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgpack
import pytest

import games
from events.chain import link_hash
from service.fairness.signing import NodeKey
from service.fairness.verify import parse_export, verify_export
from service.run.cli import main
from tests.service.conftest import TEST_SIGNING_KEY

ROOT = Path(__file__).resolve().parents[2]
JS_DATA = ROOT / "clients" / "js" / "test" / "data"
ENGINES = games.default_engines()
NODE = NodeKey(bytes.fromhex(TEST_SIGNING_KEY))
SOURCES = ("draw2-carcassonne", "draw2-castle", "draw2-castle_panic", "legacy-castle")
CASES = 1040
CASE_SECONDS = 20
"""A case that takes longer is a hang (a whole re-run of the largest game takes under a second)."""
VERDICT = re.compile(r"^(format|chain|revealed|scheme|re-run|signature): \S")
ODD_VALUES: tuple[Any, ...] = (None, True, 0, -1, 2**70, 1.5, "", "x" * 3, "zz", [], [1, "a"], {}, {"a": None})


@pytest.fixture(scope="module")
def exports() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each source export, as text and parsed."""
    loaded = {}
    for name in SOURCES:
        text = (JS_DATA / f"{name}.json").read_text()
        loaded[name] = (text, parse_export(text))
    return loaded


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def hang(*_: Any) -> None:
        raise TimeoutError(f"no verdict within {seconds} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- mutations of the text ------------------------------------------------------------------------

def _truncated(rng: random.Random, text: str) -> str:
    return text[: rng.randrange(len(text))]


def _char_changed(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text))
    return text[:at] + rng.choice('{}[]",:0a\\=+/ \u00e9\x00') + text[at + 1:]


def _span_deleted(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text))
    return text[:at] + text[at + rng.randrange(1, 200):]


def _key_twice(rng: random.Random, text: str) -> str:
    keys = [match.start() for match in re.finditer(r'"[a-z_]+": ?', text)]
    at = rng.choice(keys)
    key = re.match(r'"[a-z_]+": ?', text[at:]).group(0)
    return text[:at] + key + json.dumps(rng.choice(ODD_VALUES)) + ", " + text[at:]


def _nested_deep(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text))
    return text[:at] + "[" * rng.choice([100, 100_000]) + text[at:]


def _lone_surrogate(rng: random.Random, text: str) -> str:
    """A string of the file given a character no UTF-8 output can carry as it is."""
    starts = [match.end() for match in re.finditer(r'": "', text)]
    at = rng.choice(starts)
    return text[:at] + "\\ud800" + text[at:]


TEXT_MUTATIONS: list[Callable[[random.Random, str], str]] = [
    _truncated, _char_changed, _span_deleted, _key_twice, _nested_deep, _lone_surrogate,
]


# --- mutations of the structure -------------------------------------------------------------------

def _walk(rng: random.Random, node: Any) -> tuple[Any, Any]:
    """A random container inside ``node`` and one of its keys (or indexes)."""
    parent, key = None, None
    while isinstance(node, dict | list) and node and (parent is None or rng.random() < 0.7):
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        parent, node = node, node[key]
    return parent, key


def _value_replaced(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    parent, key = _walk(rng, export)
    if parent is not None:
        parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return export


def _value_removed(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    parent, key = _walk(rng, export)
    if parent is not None:
        del parent[key]
    return export


def _loose_body(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    event = rng.choice(export["events"])
    body = event["body"]
    event["body"] = rng.choice([body + "\n", body.rstrip("="), body.replace("+", "-").replace("/", "_") + "-_",
                                " " + body, body + "====", body[:-1]])
    return export


def _bodies(export: dict[str, Any]) -> list[Any]:
    return [msgpack.unpackb(base64.b64decode(event["body"]), raw=False) for event in export["events"]]


def rechained(export: dict[str, Any], bodies: list[Any]) -> dict[str, Any]:
    """``export`` with ``bodies`` (anything msgpack packs) as its events, numbered in order where
    they are maps, every hash recomputed, re-signed by the deployment's key: only the checks after
    the chain can refuse it."""
    algorithm = "sha256" if len(export["chain"]["genesis"]) == 64 else "sha1"
    prev, events = export["chain"]["genesis"], []
    for version, body in enumerate(bodies, start=1):
        if isinstance(body, dict) and "version" in body:
            body["version"] = version
        raw = msgpack.packb(body, use_bin_type=True)
        hash_ = link_hash(prev, raw, algorithm)
        events.append({"version": version, "body": base64.b64encode(raw).decode(), "prev_hash": prev, "hash": hash_})
        prev = hash_
    export["events"] = events
    export["chain"].update(version=len(events), head=prev)
    return NODE.sign_export(export)


def _not_msgpack(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    bodies = _bodies(export)
    bodies[rng.randrange(len(bodies))] = rng.choice([[1, 2], 7, "event", {"type": 3}, {"game_id": export["id"]}])
    return rechained(export, bodies)


def _payload_changed(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    bodies = _bodies(export)
    body = rng.choice(bodies)
    parent, key = _walk(rng, body)
    if parent is not None:
        packable = [value for value in ODD_VALUES if value != 2**70]  # msgpack holds 64 bits
        parent[key] = copy.deepcopy(rng.choice([*packable, {"seat": 0}]))
    return rechained(export, bodies)


def _event_inserted(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    """A copy of an event, or a made-up engine event (a ``tile_discarded``), put somewhere else."""
    bodies = _bodies(export)
    made = copy.deepcopy(rng.choice(bodies[1:-1]))
    if rng.random() < 0.4:
        made.update(type="tile_discarded", payload={"seat": 0, "tile": "A", "remaining": 3}, command=None)
    bodies.insert(rng.randrange(1, len(bodies)), made)
    return rechained(export, bodies)


def _event_dropped(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    bodies = _bodies(export)
    del bodies[rng.randrange(len(bodies))]
    return rechained(export, bodies)


def _events_swapped(rng: random.Random, export: dict[str, Any]) -> dict[str, Any]:
    bodies = _bodies(export)
    a, b = rng.sample(range(len(bodies)), 2)
    bodies[a], bodies[b] = bodies[b], bodies[a]
    return rechained(export, bodies)


FAST_MUTATIONS = [_value_replaced, _value_removed, _loose_body, _not_msgpack]
RECHAINED_MUTATIONS = [_payload_changed, _event_inserted, _event_dropped, _events_swapped]
"""Mutations that reach the re-run (the costly check): one case in eight."""


def mutated(case: int, exports: dict[str, tuple[str, dict[str, Any]]]) -> tuple[str, str]:
    """Case ``case``: which mutation it is, and the mutated file's text."""
    rng = random.Random(case)
    text, parsed = exports[SOURCES[case % len(SOURCES)]]
    if case % 8 == 0:
        mutation: Any = rng.choice(RECHAINED_MUTATIONS)
        return mutation.__name__, json.dumps(mutation(rng, copy.deepcopy(parsed)))
    if case % 2:
        mutation = rng.choice(TEXT_MUTATIONS)
        return mutation.__name__, mutation(rng, text)
    mutation = rng.choice(FAST_MUTATIONS)
    return mutation.__name__, json.dumps(mutation(rng, copy.deepcopy(parsed)))


def _verdict_of_text(text: str) -> Any:
    try:
        export = parse_export(text)
    except (ValueError, RecursionError):
        return None  # the CLI's "format: not JSON without repeated keys" (checked on the sampled cases)
    return verify_export(export, ENGINES)


@pytest.mark.timeout(1200)
def test_a_thousand_mutated_exports_each_get_a_verdict_and_never_a_traceback(exports):
    refused = 0
    for case in range(CASES):
        name, text = mutated(case, exports)
        with time_limit(CASE_SECONDS):
            report = _verdict_of_text(text)
        if report is None or not report.ok:
            refused += 1
        if report is not None and not report.ok:
            assert VERDICT.match(report.problems[0]), (case, name, report.problems[0])
    assert refused > CASES * 0.9, f"only {refused} of {CASES} mutations were refused"


@pytest.mark.parametrize("case", range(0, CASES, 65))
def test_the_cli_prints_one_json_object_for_a_mutated_export(exports, case, tmp_path, capsys):
    name, text = mutated(case, exports)
    path = tmp_path / "mutated.json"
    path.write_text(text)
    with time_limit(CASE_SECONDS):
        code = main(["verify", str(path), "--json", "--key", NODE.public_hex])
    verdict = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and verdict["ok"] is (code == 0), (case, name, verdict)
    assert code == 0 or VERDICT.match(verdict["problems"][0]), (case, name, verdict["problems"])
    with time_limit(CASE_SECONDS):
        code = main(["verify", str(path)])
    out = capsys.readouterr().out
    assert code in (1, 3) and (code == 3 or out.startswith("MISMATCH  ")), (case, name, out)


def test_an_inserted_tile_discarded_re_chained_is_a_mismatch_of_the_re_run(exports, capsys, tmp_path):
    """Issue 21's crash: an extra ``tile_discarded`` in a Carcassonne game, the chain rewritten."""
    _, parsed = exports["draw2-carcassonne"]
    bodies = _bodies(copy.deepcopy(parsed))
    drawn = next(body for body in bodies if body["type"] == "tile_drawn")
    extra = {**copy.deepcopy(drawn), "type": "tile_discarded"}
    bodies.insert(bodies.index(drawn), extra)
    forged = rechained(copy.deepcopy(parsed), bodies)
    report = verify_export(forged, ENGINES, key=NODE.public_hex)
    assert report.problems and report.problems[0].startswith("re-run: "), report.problems
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    assert main(["verify", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"][0].startswith("re-run: ")


@pytest.mark.parametrize("mutation", [_nested_deep, _lone_surrogate, _key_twice, _truncated])
def test_the_cli_gives_a_verdict_on_files_no_parser_likes(exports, mutation, tmp_path, capsys):
    text, _ = exports["draw2-castle"]
    for seed in range(3):
        path = tmp_path / "odd.json"
        path.write_text(mutation(random.Random(seed), text), encoding="utf-8")
        assert main(["verify", str(path)]) == 1
        assert capsys.readouterr().out.startswith("MISMATCH  ")
        assert main(["verify", str(path), "--json"]) == 1
        assert json.loads(capsys.readouterr().out)["outcome"] == "mismatch"
