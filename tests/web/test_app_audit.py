"""The audit panel re-checks a finished game's export in the browser: passes on an honest game, fails on
a tampered file (a changed byte; a re-chained log whose revealed seed no longer matches its commitment)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import msgpack
import pytest

from events.chain import link_hash
from tests.web.conftest import finished_bot_game, new_served, open_game

ROOT = Path(__file__).resolve().parents[2]

# The key the exports of clients/js/test/data are signed with (tests/service/conftest.py's TEST_SIGNING_KEY).
TEST_SIGNING_KEY = "51" * 32
ORDER = ["D", "E", "B", "K", "H", "E", "L", "J"]


def verdict(page):
    page.wait_for_function("document.querySelector('#audit')?.dataset.auditResult")
    return page.get_attribute("#audit", "data-audit-result"), page.inner_text("#audit-result")


def load_file(page, exported, name):
    page.set_input_files("#audit-file", {"name": name, "mimeType": "application/json",
                                         "buffer": json.dumps(exported).encode()})


def rechained(exported, change):
    """The export with ``change(bodies)`` applied to the decoded bodies and every hash recomputed."""
    bodies = [msgpack.unpackb(base64.b64decode(e["body"]), raw=False) for e in exported["events"]]
    change(bodies)
    prev, events = exported["chain"]["genesis"], []
    for body in bodies:
        raw = msgpack.packb(body, use_bin_type=True)
        digest = link_hash(prev, raw, "sha256" if len(prev) == 64 else "sha1")
        encoded = base64.b64encode(raw).decode()
        events.append({"version": body["version"], "body": encoded, "prev_hash": prev, "hash": digest})
        prev = digest
    return {**exported, "events": events, "chain": {**exported["chain"], "head": prev}}


def test_the_audit_panel_passes_an_honest_game_with_secret_options_and_fails_tampered_files(served, page, shots):
    game_id = finished_bot_game(served, "carcassonne", tile_order=ORDER)
    exported = served.request("GET", f"/games/{game_id}/export")
    assert exported["secret_options"] == {"tile_order": ORDER}
    open_game(page, served, game_id)
    page.get_by_role("button", name="Verify this game's export").click()
    result, text = verdict(page)
    assert result == "pass", text
    # format, hash chain, scheme (no downgrade), batches, seed commitment, sealed parts (the tile order's
    # among them), seat contributions, draws (the revealed order), signature (by a key GET /keys lists)
    checked = page.locator("#audit-result ul.audit-checked li.pass")
    assert checked.count() == 9 and page.locator("#audit-result li.fail").count() == 0
    assert [checked.nth(i).get_attribute("data-check") for i in range(9)] == [
        "format", "hash chain", "scheme", "batches", "seed commitment", "sealed parts", "seat contributions", "draws",
        "signature"]
    assert "sealed parts, each opened" in page.inner_text("#audit-result li[data-check='sealed parts']")
    assert "tile_order 0: 8 of 8" in page.inner_text("#audit-result li[data-check='draws']")
    beyond = page.inner_text("#audit-result ul.audit-beyond")
    assert "every bot move re-runs" in beyond and "folds through the game's rules engine" in beyond
    key = served.request("GET", "/keys")["keys"][0]
    assert f"by key {key['id']}, one this deployment lists" in page.inner_text("#audit-result li[data-check='signature']")
    assert key["id"] in page.inner_text("#audit-result .audit-pinned")
    page.locator("#audit").screenshot(path=str(shots / "audit-pass.png"))

    flipped = json.loads(json.dumps(exported))
    raw = bytearray(base64.b64decode(flipped["events"][5]["body"]))
    raw[-3] ^= 0x01
    flipped["events"][5]["body"] = base64.b64encode(bytes(raw)).decode()
    load_file(page, flipped, "one-byte.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('one-byte.json')")
    result, text = verdict(page)
    assert result == "fail" and "event 6: hash" in text, text

    def new_seed(bodies):
        bodies[-1]["payload"]["seed"] = "11" * 32

    forged = rechained(exported, new_seed)
    forged["seed"] = "11" * 32
    load_file(page, forged, "forged-seed.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('forged-seed.json')")
    result, text = verdict(page)
    assert result == "fail" and "seed commitment" in text and "committed" in text, text
    assert page.locator("#audit-result li.pass[data-check='hash chain']").count() == 1
    page.locator("#audit").screenshot(path=str(shots / "audit-fail.png"))

    def swap(bodies):
        bodies[3]["version"], bodies[4]["version"] = 5, 4
        bodies[3], bodies[4] = bodies[4], bodies[3]

    load_file(page, rechained(exported, lambda b: b.__setitem__(2, {**b[2], "game_id": "other"})), "other-game.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('other-game.json')")
    assert "event 3: body names another game" in verdict(page)[1]
    swapped = rechained(exported, swap)
    swapped["events"][3], swapped["events"][4] = swapped["events"][4], swapped["events"][3]
    load_file(page, swapped, "swapped.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('swapped.json')")
    assert "event 4: found version 5" in verdict(page)[1]


def test_the_verifier_without_webcrypto_gives_the_same_results(served, page):
    game_id = finished_bot_game(served, "castle_panic")
    exported = served.request("GET", f"/games/{game_id}/export")
    open_game(page, served, game_id)
    results = page.evaluate(
        """async (exported) => {
            const { verifyExport } = await import("/app/client/audit.js");
            const tampered = structuredClone(exported);
            tampered.seed = "00".repeat(32);
            const run = async (file, subtle) => {
                const r = await verifyExport(file, { subtle });
                return [r.ok, r.hashes, r.checks.map((c) => c.detail)];
            };
            return [await run(exported, undefined), await run(exported, null),
                    await run(tampered, undefined), await run(tampered, null)];
        }""",
        exported,
    )
    (ok_web, src_web, detail_web), (ok_js, src_js, detail_js) = results[0], results[1]
    assert (ok_web, src_web, ok_js, src_js) == (True, "webcrypto", True, "fallback") and detail_web == detail_js
    assert results[2][0] is False and results[3][0] is False and results[2][2] == results[3][2]
    secure = page.evaluate("() => window.isSecureContext")
    assert secure and "WebCrypto" in page.inner_text("#audit")


@pytest.fixture
def served_with_test_key(tmp_path):
    """A service that signs with the key the fixtures of clients/js/test/data are signed with."""
    donjon = new_served(tmp_path, "keyed", DONJON_SIGNING_KEY=TEST_SIGNING_KEY)
    try:
        yield donjon
    finally:
        donjon.stop()


def test_the_audit_panel_lists_what_it_checked_for_each_game_and_calls_a_legacy_game_legacy(served_with_test_key, page):
    """Every draw of a donjon-draw-2 game of each game is checked in the browser; a file of a game
    recorded before donjon-draw-1 verifies only as "legacy: weaker guarantees", and its draws are
    listed as donjon verify's; a file naming a key twice is refused before any check."""
    served = served_with_test_key
    games = {name: finished_bot_game(served, name) for name in ("castle", "castle_panic")}
    open_game(page, served, games["castle"])
    for name, game_id in games.items():
        load_file(page, served.request("GET", f"/games/{game_id}/export"), f"{name}.json")
        page.wait_for_function(f"document.querySelector('#audit-result').innerText.includes('{name}.json')")
        result, text = verdict(page)
        assert result == "pass" and "✔" in text, text
        draws = page.inner_text("#audit-result li[data-check='draws']")
        assert "each the one the seed deals" in draws
        assert ("wall_tiles 0" if name == "castle" else "cards 0") in draws, draws
    legacy = json.loads((ROOT / "clients" / "js" / "test" / "data" / "legacy-castle.json").read_text())
    load_file(page, legacy, "legacy.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('legacy.json')")
    result, text = verdict(page)
    assert result == "legacy" and "legacy: weaker guarantees" in text and "✔ legacy.json verifies." not in text
    assert page.locator("#audit-result li[data-check='draws']").count() == 0
    assert "every draw of this legacy game" in page.inner_text("#audit-result ul.audit-beyond")
    text = json.dumps(served.request("GET", f"/games/{games['castle']}/export"))
    page.set_input_files("#audit-file", {"name": "twice.json", "mimeType": "application/json",
                                         "buffer": text.replace('"seed": ', '"seed": "00", "seed": ', 1).encode()})
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('twice.json')")
    result, text = verdict(page)
    assert result == "fail" and 'the key "seed" appears twice in one object' in text, text


def test_the_audit_panel_refuses_a_file_signed_by_a_key_the_deployment_does_not_list_and_without_its_keys(served, page):
    """A loaded file is pinned to this deployment's GET /keys like the served export: re-signed by
    another key it is refused, and never called the deployment's; when GET /keys cannot be read,
    nothing is said to verify."""
    game_id = finished_bot_game(served, "carcassonne")
    exported = served.request("GET", f"/games/{game_id}/export")
    open_game(page, served, game_id)
    page.evaluate(
        """async (exported) => {
            const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
            const { canonicalJson, sha256, toHex } = await import("/app/client/fairness.js");
            const { signature, ...unsigned } = exported;
            const value = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey,
                new TextEncoder().encode(canonicalJson(unsigned))));
            const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
            window.foreign = { ...unsigned, signature: { algorithm: "ed25519", key_id: toHex(sha256(raw)).slice(0, 16),
                public_key: toHex(raw), value: btoa(String.fromCharCode(...value)) } };
        }""",
        exported,
    )
    foreign = page.evaluate("() => window.foreign")
    load_file(page, foreign, "foreign.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('foreign.json')")
    result, text = verdict(page)
    assert result == "fail", text
    assert f"signed by key {foreign['signature']['key_id']}, a key this deployment does not list" in text, text
    assert "this deployment lists" not in page.inner_text("#audit-result li[data-check='signature']")
    page.route("**/keys", lambda route: route.abort())
    load_file(page, exported, "genuine-without-keys.json")
    page.wait_for_function("document.querySelector('#audit-result').innerText.includes('genuine-without-keys.json')")
    result, text = verdict(page)
    assert result == "fail" and "GET /keys) could not be read" in text, text
