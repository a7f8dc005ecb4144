"""The shared engine helpers of ``games.base``: option table, catalog entry, secrets, commands."""

from __future__ import annotations

import doctest
import hashlib
import importlib
import json
import re

import pytest

import games.base
from games import GAME_MODULES, find_engine
from games.base import (
    Arg,
    BadCommand,
    BadOptions,
    EngineBase,
    Event,
    GameOver,
    OptionSpec,
    RuleError,
    UnknownCommand,
    UnknownEvent,
    check_args,
    check_seats,
    fill_options,
    fold,
    int_arg,
    parse_command,
    play_out,
    redact_secrets,
    secret_digest,
    secret_fields,
    str_arg,
)
from games.draw import Draw, seed_from_int
from service.fairness.draw_schemes import LegacyRandom


class Puzzle(EngineBase):
    name, title, min_seats, max_seats = "puzzle", "Puzzle", 2, 4
    options = {
        "fast": OptionSpec("bool", False, "Fast."),
        "target": OptionSpec("int", 6, "Target.", minimum=1, maximum=20),
        "points": OptionSpec("choice", 4, "Points.", (4, 2)),
        "tile_order": OptionSpec("list", None, "Order.", items="tile ids"),
    }
    secret_options = frozenset({"tile_order"})
    notes = ("Up to 4 players.",)

    def seat_range(self, options):
        return (2, 4) if options["fast"] else (2, 3)

    def catalog_extras(self):
        return {"dataset": "v1"}


def test_options_are_filled_in_table_order_and_lists_become_lists():
    assert Puzzle().normalize_options({"tile_order": ("A", "B")}, 2) == {
        "fast": False, "target": 6, "points": 4, "tile_order": ["A", "B"],
    }


@pytest.mark.parametrize("options, needle", [
    ({"colour": "red"}, "puzzle has no option 'colour' (unknown option(s) ['colour']; options: fast, target, points, tile_order)"),
    ({"fast": 1}, "option 'fast' must be true or false, got 1"),
    ({"target": 21}, "option 'target' must be an integer from 1 to 20, got 21"),
    ({"target": True}, "option 'target' must be an integer from 1 to 20, got True"),
    ({"points": 3}, "option 'points' must be one of [4, 2], got 3"),
    ({"points": "4"}, "option 'points' must be one of [4, 2], got '4'"),
    ({"tile_order": "AB"}, "option 'tile_order' must be a list of tile ids, got 'AB'"),
])
def test_each_kind_of_option_refuses_a_bad_value_by_name(options, needle):
    with pytest.raises(BadOptions) as caught:
        Puzzle().normalize_options(options, 2)
    assert caught.value.message == needle


def test_seat_range_may_depend_on_the_options():
    assert Puzzle().normalize_options({"fast": True}, 4)["fast"] is True
    with pytest.raises(BadOptions, match=r"^puzzle takes 2 to 3 players with these options, got 4$"):
        Puzzle().normalize_options({}, 4)
    with pytest.raises(BadOptions, match=r"^solo is played by exactly 1 players, not 2$"):
        check_seats("solo", 2, 1, 1)
    with pytest.raises(BadOptions, match="got True"):
        check_seats("duo", True, 1, 2)


def test_int_options_say_their_bounds():
    assert OptionSpec("int", 1, "x", minimum=1).check("n", 5) == 5
    with pytest.raises(BadOptions, match=r"^option 'n' must be an integer of at least 1, got 0$"):
        OptionSpec("int", 1, "x", minimum=1).check("n", 0)
    with pytest.raises(BadOptions, match=r"^option 'n' must be an integer of at most 3, got 4$"):
        OptionSpec("int", 1, "x", maximum=3).check("n", 4)
    with pytest.raises(BadOptions, match=r"^option 'n' must be an integer, got 'a'$"):
        OptionSpec("int", 1, "x").check("n", "a")


def test_options_must_be_an_object():
    with pytest.raises(BadOptions, match=r"puzzle options must be an object, got \['fast'\]"):
        fill_options("puzzle", Puzzle.options, ["fast"])  # type: ignore[arg-type]  # the wrong type is the test


def test_catalog_entry_is_built_from_the_class_facts():
    entry = Puzzle().catalog_entry()
    assert entry == {
        "id": "puzzle", "title": "Puzzle", "min_seats": 2, "max_seats": 4,
        "options": {
            "fast": {"type": "bool", "default": False, "description": "Fast."},
            "target": {"type": "int", "default": 6, "description": "Target.", "minimum": 1, "maximum": 20},
            "points": {"type": "choice", "default": 4, "description": "Points.", "choices": [4, 2]},
            "tile_order": {"type": "list", "default": None, "description": "Order.", "items": "tile ids"},
        },
        "secret_options": ["tile_order"],
        "notes": ["Up to 4 players.", "Option tile_order is secret: keep it out of anything sent to clients."],
        "dataset": "v1",
    }
    json.dumps(entry)


def test_public_options_leave_out_the_secret_ones():
    assert Puzzle().public_options({"fast": True, "tile_order": ["A"]}) == {"fast": True}


def test_secret_fields_commit_to_the_value_with_a_salt_and_draw_nothing():
    rng = LegacyRandom(5)
    before = rng.getstate()
    fields = secret_fields(Puzzle.secret_options, {"tile_order": ["E", "U"]}, rng)
    assert rng.getstate() == before
    salt = fields["secret_salt"]
    assert len(salt) == 32 and fields["tile_order"] == ["E", "U"]
    assert fields["tile_order_sha256"] == hashlib.sha256(f'{salt}:["E","U"]'.encode()).hexdigest()
    assert secret_fields(Puzzle.secret_options, {"tile_order": ["E", "U"]}, LegacyRandom(6))["secret_salt"] != salt
    assert secret_fields(Puzzle.secret_options, {"tile_order": None}, rng) == {
        "tile_order": None, "tile_order_sha256": None, "secret_salt": None,
    }
    assert secret_digest(None, "x") is None


def test_redaction_keeps_the_commitment_and_hides_value_and_salt():
    fields = secret_fields(Puzzle.secret_options, {"tile_order": ["E"]}, LegacyRandom(1))
    event = Event("game_started", {"seats": 2, **fields})
    shown = redact_secrets(event, Puzzle.secret_options)
    assert shown.payload == {"seats": 2, "tile_order": None, "tile_order_sha256": fields["tile_order_sha256"],
                             "secret_salt": None}
    assert event.payload["tile_order"] == ["E"]  # the stored event is untouched
    plain = Event("tile_drawn", {"tile": "E"})
    assert redact_secrets(plain, Puzzle.secret_options) is plain


def test_parse_command_checks_the_envelope_only():
    assert parse_command({"type": "place", "args": {"x": 1}}) == ("place", {"x": 1})
    assert parse_command({"type": "pass"}) == ("pass", {})
    with pytest.raises(BadCommand, match=r"a command is \{'type': str, 'args': \{\.\.\.\}\}, got 'pass'"):
        parse_command("pass")
    with pytest.raises(BadCommand, match=r"args of 'pass' must be an object \(leave it out for none\), got 3"):
        parse_command({"type": "pass", "args": 3})
    with pytest.raises(BadCommand, match=r"args of 'pass' must be an object .*got None"):
        parse_command({"type": "pass", "args": None})  # protocol.md: args defaults to {} when left out


PLAY = {"card": Arg("str"), "with": Arg("strs", required=False), "target": Arg("str|int", required=False)}


@pytest.mark.parametrize(
    "args",
    [
        {"card": "tar#1"},
        {"card": "tar#1", "with": None, "target": None},
        {"card": "tar#1", "with": ["a", "b"], "target": "orc#1"},
        {"card": "tar#1", "target": 3},
    ],
)
def test_check_args_takes_what_the_table_lists(args):
    check_args("play_card", args, PLAY)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"card": "tar#1", "colour": "red"}, "play_card takes no arg 'colour' (it takes card, with, target)"),
        ({}, "play_card needs a string 'card', got None"),
        ({"card": None}, "play_card needs a string 'card', got None"),
        ({"card": 1.5}, "play_card needs a string 'card', got 1.5"),
        ({"card": {"id": "tar#1"}}, "play_card needs a string 'card', got {'id': 'tar#1'}"),
        ({"card": "tar#1", "target": True}, "play_card takes a string or an integer 'target' or none, got True"),
        ({"card": "tar#1", "target": 2.0}, "play_card takes a string or an integer 'target' or none, got 2.0"),
        ({"card": "tar#1", "with": "b"}, "play_card takes a list of strings 'with' or none, got 'b'"),
        ({"card": "tar#1", "with": ["b", 1]}, "play_card takes a list of strings 'with' or none, got ['b', 1]"),
    ],
)
def test_check_args_names_the_first_unknown_missing_or_mistyped_arg(args, message):
    with pytest.raises(BadCommand) as refused:
        check_args("play_card", args, PLAY)
    assert refused.value.message == message and refused.value.code == "bad_command"


def test_str_arg_reads_a_string_or_its_default_and_quotes_anything_else():
    assert str_arg({"card": "tar#1"}, "card", "play_card") == "tar#1"
    assert str_arg({}, "kind", "place_follower", "normal") == "normal"
    assert str_arg({"kind": "large"}, "kind", "place_follower", "normal") == "large"
    with pytest.raises(BadCommand, match=r"^play_card needs a string 'card', got None$"):
        str_arg({}, "card", "play_card")
    with pytest.raises(BadCommand, match=r"^play_card needs a string 'card', got 3$"):
        str_arg({"card": 3}, "card", "play_card")
    with pytest.raises(BadCommand, match=r"^place_follower needs a string 'kind', got None$"):
        str_arg({"kind": None}, "kind", "place_follower", "normal")


@pytest.mark.parametrize("value", [None, True, False, 1.0, "1", [1]])
def test_int_arg_refuses_bools_and_non_integers_quoting_them(value):
    with pytest.raises(BadCommand, match=rf"^place_tile needs an integer 'x', got {re.escape(repr(value))}$") as caught:
        int_arg({"x": value}, "x", "place_tile")
    assert caught.value.code == "bad_command"


def test_int_arg_reads_an_integer():
    assert int_arg({"x": -2, "y": 0}, "x", "place_tile") == -2
    assert int_arg({"x": -2, "y": 0}, "y", "place_tile") == 0


def test_the_games_base_docstring_examples_run():
    result = doctest.testmod(games.base)
    assert result.attempted > 0 and result.failed == 0


# --- play_out ---------------------------------------------------------------------------------


def _random_bot(name):
    import importlib

    from games import GAME_MODULES
    return importlib.import_module(f"{GAME_MODULES[name]}.bots").BOTS["random"]


@pytest.mark.parametrize("name", sorted(__import__("games").GAME_MODULES))
def test_play_out_ends_a_random_bot_game_of_every_engine_and_repeats_it_for_a_seed(name):
    from games import find_engine
    engine = find_engine(name)
    seats = min(max(2, engine.min_seats), engine.max_seats)
    bot = _random_bot(name)
    state, commands = games.base.play_out(engine, seats, {}, bot, b"seed-1")
    assert engine.is_terminal(state)
    assert commands and all(0 <= seat < seats for seat, _ in commands)
    again, replayed = games.base.play_out(engine, seats, {}, [bot] * seats, b"seed-1")
    assert replayed == commands and engine.summary(again) == engine.summary(state)
    other = games.base.play_out(engine, seats, {}, bot, b"seed-2")[1]
    assert other != commands


@pytest.mark.parametrize("name", sorted(__import__("games").GAME_MODULES))
def test_play_out_with_one_rng_is_the_game_its_int_seed_gives(name):
    from games import find_engine
    engine = find_engine(name)
    bot = _random_bot(name)
    by_rng = games.base.play_out(engine, 2, {}, bot, games.base.derive_dealer(seed_from_int(7), "bench"))[1]
    assert games.base.play_out(engine, 2, {}, bot, 7)[1] == by_rng
    assert games.base.play_out(engine, 2, {}, bot, seed_from_int(7))[1] == by_rng
    one_stream = games.base.play_out(engine, 2, {}, bot, Draw(seed_from_int(7), "bench", 0))[1]
    assert one_stream == games.base.play_out(engine, 2, {}, bot, Draw(seed_from_int(7), "bench", 0))[1]


def test_play_steps_shows_each_state_before_its_command_and_returns_the_last():
    from games.castle_panic import ENGINE
    from games.castle_panic.bots import RANDOM
    _, commands = games.base.play_out(ENGINE, 2, {}, RANDOM, b"s")
    steps = games.base.play_steps(ENGINE, 2, {}, RANDOM, b"s")
    seen = []
    while True:
        try:
            state, seat, cmd = next(steps)
        except StopIteration as done:
            final = done.value
            break
        assert games.base.owing_seat(ENGINE, state, 2) == seat and cmd in ENGINE.legal_moves(state, seat)
        seen.append((seat, cmd))
    assert seen == commands and ENGINE.is_terminal(final)
    assert games.base.owing_seat(ENGINE, final, 2) is None


def test_owing_seat_is_the_active_seat_at_the_start_of_the_castle():
    from games.castle import ENGINE
    state = games.base.fold(ENGINE, ENGINE.setup(ENGINE.normalize_options({}, 2), 2, LegacyRandom(1)))
    assert games.base.owing_seat(ENGINE, state, 2) == state.active == 0


@pytest.mark.parametrize(
    "name, seats, options",
    [
        ("carcassonne", 3, {"inns_cathedrals": True}),
        ("castle", 2, {"falcon": True}),
        ("castle_panic", 4, {"master_slayer": True}),
        ("castle_panic", 3, {"overlord": True}),
    ],
)
def test_waiting_for_names_seats_with_legal_moves_and_never_nobody_before_the_end(name, seats, options):
    from games import find_engine
    engine = find_engine(name)
    steps = games.base.play_steps(engine, seats, options, _random_bot(name), b"waiting")
    checked = 0
    for state, _, _ in steps:
        may_act = {seat for seat in range(seats) if engine.legal_moves(state, seat)}
        waiting = set(engine.waiting_for(state))
        assert waiting and waiting <= may_act, f"{name} at step {checked}: {waiting} vs {may_act}"
        checked += 1
    assert checked > 20


def test_play_out_refuses_a_bot_count_that_is_not_the_seat_count():
    from games.castle_panic import ENGINE
    from games.castle_panic.bots import RANDOM
    with pytest.raises(ValueError, match="2 seats need 2 bots, got 3"):
        games.base.play_out(ENGINE, 2, {}, [RANDOM] * 3, b"s")


def test_play_out_stops_a_game_longer_than_max_commands():
    from games.castle_panic import ENGINE
    from games.castle_panic.bots import RANDOM
    with pytest.raises(RuntimeError, match="castle_panic: the game did not end within 5 commands"):
        games.base.play_out(ENGINE, 2, {}, RANDOM, b"s", max_commands=5)


# --- one contract for every served engine -------------------------------------------------------

SERVED = sorted(GAME_MODULES)


def _finished_game(name: str):
    engine = find_engine(name)
    bot = importlib.import_module(f"{GAME_MODULES[name]}.bots").BOTS["random"]
    state, _ = play_out(engine, engine.min_seats, {}, bot, 7)
    assert engine.is_terminal(state)
    return engine, state


@pytest.mark.parametrize("name", SERVED)
def test_every_engine_refuses_to_fold_an_unknown_event_type_by_name(name):
    engine = find_engine(name)
    seats = engine.min_seats
    started = fold(engine, engine.setup(engine.normalize_options({}, seats), seats, LegacyRandom(1)))
    for state in (engine.initial_state(), started):
        with pytest.raises(UnknownEvent, match=rf"^{name} cannot fold unknown event type 'feature_scord'$") as caught:
            engine.evolve(state, Event("feature_scord", {}))  # a misspelt type
        assert caught.value.event_type == "feature_scord"
        assert not isinstance(caught.value, RuleError)  # a bug, never a rule outcome


@pytest.mark.parametrize("name", SERVED)
@pytest.mark.parametrize("cmd", [
    {"type": "pass"},
    {"type": "no_such_command"},
    {"type": 3},
    {"type": "pass", "args": 3},
    "pass",
])
def test_a_finished_game_answers_game_over_to_any_command_in_every_engine(name, cmd):
    engine, state = _finished_game(name)
    for seat in range(engine.min_seats):
        with pytest.raises(GameOver, match=r"^the game is over.*; no command is accepted$"):
            engine.decide(state, seat, cmd, LegacyRandom(0))


@pytest.mark.parametrize("name", SERVED)
def test_a_malformed_command_to_a_running_game_is_bad_command_before_its_type_or_seat(name):
    engine = find_engine(name)
    seats = engine.min_seats
    state = fold(engine, engine.setup(engine.normalize_options({}, seats), seats, LegacyRandom(1)))
    for seat in (0, seats + 5):
        with pytest.raises(BadCommand):
            engine.decide(state, seat, {"type": 3}, LegacyRandom(0))
        with pytest.raises(UnknownCommand):
            engine.decide(state, seat, {"type": "no_such_command"}, LegacyRandom(0))
