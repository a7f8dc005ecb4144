"""donjon-draw-1 against the test vectors of docs/fairness.md; no engine imports ``random``; every
game plays the same under any PYTHONHASHSEED."""

from __future__ import annotations

import ast
import hmac
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from games.draw import Dealer, DealMemo, Draw, PerDecisionDraw, canonical

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))


def test_the_blocks_are_hmac_sha256_of_label_version_and_counter():
    assert hmac.digest(KEY, b"g1\x007\x00" + bytes(8), "sha256").hex() == (
        "45af88f65296091e8dc804d8c9410fbfe71cb6c663a8b64fdcd804dd0a49a1d5"
    )
    assert hmac.digest(KEY, b"g1\x007\x00" + (1).to_bytes(8, "big"), "sha256").hex() == (
        "13df2b66b1a9706033889e272f805aa58bc4e354ddca24f663391a56ff3165fa"
    )


def test_the_call_sequence_of_the_docs_gives_its_outputs():
    draw = Draw(KEY, "g1", 7)
    assert [draw.below(6) for _ in range(3)] == [0, 1, 3]
    assert draw.randint(1, 6) == 6
    assert draw.choice(["A", "B", "C", "D", "E"]) == "B"
    cards = list(range(10))
    draw.shuffle(cards)
    assert cards == [3, 1, 8, 0, 6, 5, 7, 2, 4, 9]
    assert draw.sample(list("abcdefgh"), 3) == ["h", "a", "b"]
    assert draw.below(2**64) == 441911670789100493
    assert Draw(KEY, "g1", 7).secret_salt() == "6905346986fb5885d7ddea2908f20218"
    bot = Draw(KEY, "g1:bot:1", 7)
    assert [bot.below(100) for _ in range(4)] == [24, 93, 52, 7]


def test_a_word_at_or_above_the_limit_is_rejected_not_folded():
    first_block = hmac.digest(KEY, b"g1\x000\x00" + bytes(8), "sha256")
    assert int.from_bytes(first_block[:8], "big") == 0xB46A38FE6D38BB52 >= 2**63 + 1
    assert Draw(KEY, "g1", 0).below(2**63 + 1) == 7477941162714571365 == int.from_bytes(first_block[8:16], "big")


def test_the_doc_lists_the_same_vectors():
    doc = (ROOT / "docs" / "fairness.md").read_text()
    for value in ("45af88f65296091e8dc804d8c9410fbfe71cb6c663a8b64fdcd804dd0a49a1d5", "`[3,1,8,0,6,5,7,2,4,9]`",
                  "`441911670789100493`", "`6905346986fb5885d7ddea2908f20218`", "`24, 93, 52, 7`",
                  "`7477941162714571365`"):
        assert value in doc


def test_the_salt_draws_nothing_and_streams_differ_by_label_and_version():
    draw = Draw(KEY, "g1", 7)
    draw.secret_salt()
    assert draw.below(6) == 0
    assert Draw(KEY, "g1", 8).below(2**64) != Draw(KEY, "g1", 7).below(2**64) != Draw(KEY, "g2", 7).below(2**64)


@pytest.mark.parametrize("call", [lambda d: d.below(0), lambda d: d.below(2**64 + 1), lambda d: d.below(True),
                                  lambda d: d.sample([1, 2], 3), lambda d: d.choice([])])
def test_calls_outside_the_specification_are_refused(call):
    with pytest.raises((ValueError, IndexError)):
        call(Draw(KEY, "g", 0))


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_engine_bot_or_service_decision_imports_random():
    decisions = [ROOT / "service" / "play" / name for name in ("decisions.py", "batches.py", "own_commands.py")]
    checked = [*sorted((ROOT / "games").rglob("*.py")), *decisions]
    assert len(checked) > 20
    offenders = [str(path.relative_to(ROOT)) for path in checked if {"random", "secrets"} & _imports(path)]
    assert offenders == []


def test_the_import_check_does_see_an_import_of_random(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def f():\n    from random import choice\n    return choice\n")
    assert "random" in _imports(sneaky)


_PLAY = """
import hashlib, json, sys
import games
from games.base import play_out
from service.bots import bots_for
out = {}
for name in sorted(games.GAME_MODULES):
    engine = games.find_engine(name)
    bots = bots_for(engine)
    for bot in sorted(bots):
        state, commands = play_out(engine, 2, {}, bots[bot], b"hash-seed-check")
        text = json.dumps([commands, engine.summary(state)], sort_keys=True)
        out[f"{name}/{bot}"] = hashlib.sha256(text.encode()).hexdigest()
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.timeout(300)
def test_every_game_and_bot_plays_the_same_under_any_hash_seed():
    results = []
    for hash_seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", _PLAY], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=280, check=True)
        results.append(json.loads(done.stdout))
    assert len(results[0]) >= 6 and all(re.fullmatch(r"[0-9a-f]{64}", v) for v in results[0].values())
    assert results[0] == results[1] == results[2]


def test_a_prepared_key_draws_the_same_streams():
    from games.draw import DrawKey
    from service.fairness.draw_schemes import keyed_draw

    key = bytes(range(32))
    prepared = DrawKey(key)
    for version in range(20):
        plain, keyed, served = Draw(key, "g", version), Draw(prepared, "g", version), keyed_draw(key, "g", version)
        draws = [plain.below(1000) for _ in range(10)]  # more than one block
        assert [keyed.below(1000) for _ in range(10)] == draws == [served.below(1000) for _ in range(10)]
        assert Draw(prepared, "g", version).secret_salt() == Draw(key, "g", version).secret_salt()


# --- donjon-draw-2 ---------------------------------------------------------------------------


def test_a_deal_is_a_fisher_yates_of_the_sorted_contents_on_its_own_stream():
    contents = ("a", "a", "b", "c", "d")
    expected = list(contents)
    Draw(KEY, "g1:deal:cards", 2).shuffle(expected)
    assert list(Dealer(KEY, "g1").deal("cards", 2, contents)) == expected
    assert Dealer(KEY, "g1").stream("die", 4).randint(1, 6) == Draw(KEY, "g1:die", 4).randint(1, 6)
    assert Dealer(KEY, "g1").secret_salt() == Draw(KEY, "g1", 0).secret_salt()
    assert canonical([("orc#2", 1), ("orc#10", 1), ("b", 2)]) == ("b", "b", "orc#10", "orc#2")


def test_a_dealer_draws_nothing_per_decision():
    dealer = Dealer(KEY, "g1")
    for call in (lambda: dealer.randrange(6), lambda: dealer.randint(1, 6), lambda: dealer.choice("ab"),
                 lambda: dealer.shuffle([1, 2]), lambda: dealer.sample("ab", 1)):
        with pytest.raises(PerDecisionDraw, match="donjon-draw-2 draws nothing per decision"):
            call()


def test_the_deals_are_remembered_within_bounds():
    memo = DealMemo(2)
    dealer = Dealer(KEY, "g1", memo)
    first = dealer.deal("a", 0, tuple(range(50)))
    assert dealer.deal("a", 0, tuple(range(50))) is first and len(memo) == 1
    dealer.deal("b", 0, (1, 2))
    dealer.deal("c", 0, (1, 2))
    assert len(memo) == 2 and dealer.deal("a", 0, tuple(range(50))) == first  # dealt again, the same


def test_the_donjon_draw_2_vectors_of_the_docs():
    from tests.service.make_decks import vector_table, vectors

    doc = (ROOT / "docs" / "fairness.md").read_text()
    assert vector_table() in doc
    rows = {(what, call): result for what, call, result in vectors()}
    assert rows[("Carcassonne", "deal `tiles` 0 (71)")].startswith(
        "`Q`, `N`, `U`, `P`, `R`, `A`, ...; digest `eb18f98fcde8bb69db212dee3ea26aee19a81d1ecac901c1f780f7e7ef685716`")
    assert rows[("Castle Panic", "deal `setup_arcs` 0")] == "`[5, 1, 6, 2, 4, 3]`"
    assert rows[("Castle Panic", "rolls 0 to 7 (`randint(1, 6)` on `g1:die`, n)")] == "`[3, 4, 5, 2, 4, 5, 5, 4]`"
