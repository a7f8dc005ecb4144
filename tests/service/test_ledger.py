"""The public ledger (issue 22, item 5): every game created is listed in creation order in a hash
chain whose head is signed; ``GET /ledger`` pages through it; an export names its place; and
``donjon verify --ledger`` finds a game dropped from the ledger or re-dealt under its id.

The tests that tamper with the ledger run on a Valkey of their own (the ``valkey`` fixture), so
the session's shared ledger stays whole for the others."""

from __future__ import annotations

import asyncio
import copy
import json
import random
from pathlib import Path
from typing import Any

import games
from events.keys import cmds_key, events_key, meta_key
from events.ledger import GENESIS, entry_hash, games_key, ledger_key
from service.edge.keys import STORE
from service.fairness.ledger_check import ledger_problem
from service.fairness.signing import NodeKey, check_signature
from service.run.app import create_app
from service.run.cli import main
from tests.service.conftest import (
    ENGINES,
    TEST_SIGNING_KEY,
    command,
    create_tiny,
    expect_reply,
    hello,
    settings_for,
    started_tiny,
)
from tests.service.contract import CheckedWebSocket, openapi_trace

PUBLIC_KEY = NodeKey(bytes.fromhex(TEST_SIGNING_KEY)).public_hex


async def ledger(client: Any, **query: Any) -> tuple[int, dict[str, Any]]:
    response = await client.get("/ledger", params={name: str(value) for name, value in query.items()})
    return response.status, await response.json()


async def created_payload(client: Any, game_id: str) -> dict[str, Any]:
    body = await (await client.get(f"/games/{game_id}/events", params={"from": "1", "limit": "1"})).json()
    return body["events"][0]["payload"]


def assert_chained(entries: list[dict[str, Any]]) -> None:
    for before, entry in zip([None, *entries], entries, strict=False):
        assert entry["hash"] == entry_hash(entry["prev_hash"], entry)
        if before is not None:
            assert entry["prev_hash"] == before["hash"] and entry["position"] == before["position"] + 1


async def finished_tiny(client: Any) -> tuple[str, list[str]]:
    """A tiny game ended by seat 0's resignation."""
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await command(ws, "bye", {"type": "resign", "args": {}})
    reply, _ = await expect_reply(ws, "bye")
    assert reply["type"] == "ack", reply
    await ws.close()
    return game_id, tokens


async def saved_export(client: Any, game_id: str, folder: Path) -> Path:
    response = await client.get(f"/games/{game_id}/export")
    assert response.status == 200, await response.text()
    path = folder / f"{game_id}.json"
    path.write_text(await response.text(), encoding="utf-8")
    return path


async def verify(capsys: Any, export: Path, source: str) -> tuple[int, str]:
    """``donjon verify EXPORT --ledger SOURCE --key <the tests' key>`` (in a thread: a URL is read
    from the test's own server, on this loop); its exit code and output."""
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["verify", str(export), "--ledger", source, "--key", PUBLIC_KEY], ENGINES)
    return code, capsys.readouterr().out


async def test_every_game_is_listed_in_creation_order_chained_to_a_signed_head(make_node):
    node_a, node_b = await make_node(), await make_node()
    ids = [await create_tiny(node, target=7) for node in (node_a, node_b, node_a)]
    status, answer = await ledger(node_b, game=ids[0])
    assert status == 200
    entries = answer["entries"]
    first = answer["entry"]["position"]
    assert [entry["id"] for entry in entries[:3]] == ids
    assert [entry["position"] for entry in entries[:3]] == [first, first + 1, first + 2]
    assert_chained(entries)
    head = answer["head"]
    assert (head["position"], head["hash"]) == (entries[-1]["position"], entries[-1]["hash"])
    assert answer["next"] is None and check_signature(head, PUBLIC_KEY) is None
    assert set(head) == {"position", "hash", "signed_at", "signature"}
    for entry, game_id in zip(entries, ids, strict=False):
        created = await created_payload(node_a, game_id)
        assert entry["game"] == "tiny" and entry["options"] == created["options"]
        assert entry["seed_commitment"] == created["seed_commitment"] and isinstance(entry["created"], int)
    forged = {**head, "position": head["position"] + 1}
    assert check_signature(forged, PUBLIC_KEY) is not None


async def test_games_created_at_once_on_two_nodes_each_get_one_place_in_one_chain(make_node):
    nodes = [await make_node(), await make_node()]
    ids = await asyncio.gather(*(create_tiny(nodes[index % 2]) for index in range(24)))
    places = [(await ledger(nodes[0], game=game_id))[1]["entry"]["position"] for game_id in ids]
    assert len(set(places)) == len(ids)
    _, page = await ledger(nodes[1], **{"from": min(places), "limit": 1000})
    assert_chained(page["entries"])
    assert set(ids) <= {entry["id"] for entry in page["entries"]}


async def test_pages_follow_each_other_and_bad_values_are_refused(client):
    ids = [await create_tiny(client) for _ in range(3)]
    _, answer = await ledger(client, game=ids[0])
    first = answer["entry"]["position"]
    status, page = await ledger(client, **{"from": first, "limit": 2})
    assert status == 200 and [entry["id"] for entry in page["entries"]] == ids[:2]
    assert page["next"] == first + 2
    _, rest = await ledger(client, **{"from": page["next"]})
    assert rest["entries"][0]["id"] == ids[2] and rest["entries"][0]["prev_hash"] == page["entries"][-1]["hash"]
    _, beyond = await ledger(client, **{"from": 2**40})
    assert beyond["entries"] == [] and beyond["next"] is None
    _, whole = await ledger(client)
    assert whole["entries"][0]["position"] == 1 and whole["entries"][0]["prev_hash"] == GENESIS
    assert len(whole["entries"]) <= 100
    for query in ({"limit": 0}, {"limit": 1001}, {"limit": "x"}, {"from": 0}, {"from": "-1"}, {"from": "1e3"},
                  {"limit": " 5"}, {"game": ids[0], "from": 1}):
        status, body = await ledger(client, **query)
        assert status == 400 and body["error"]["code"] == "bad_request", (query, body)
    status, body = await ledger(client, game="no-such-game")
    assert status == 404 and body["error"]["code"] == "not_found"
    _, after = await ledger(client, **{"from": first})
    assert after["head"]["position"] == rest["head"]["position"]  # the refusals changed nothing


async def test_secret_options_are_not_in_the_ledger(make_client):
    node = await make_client(engines=games.default_engines())
    order = ["V", "E", "U", "B", "D"]
    created = await node.post("/games", json={"game": "carcassonne", "seats": 2, "options": {"tile_order": order}})
    game_id = (await created.json())["id"]
    _, answer = await ledger(node, game=game_id)
    entry = answer["entry"]
    assert "tile_order" not in entry["options"] and entry["options"] == (await created_payload(node, game_id))["options"]
    text = json.dumps(answer)
    assert "tile_order" not in text and json.dumps(order) not in text and '"V", "E"' not in text


async def test_an_export_names_its_place_and_verifies_against_the_ledger(client, capsys, tmp_path):
    game_id, _ = await finished_tiny(client)
    export = await saved_export(client, game_id, tmp_path)
    place = json.loads(export.read_text())["ledger"]
    _, answer = await ledger(client, game=game_id)
    assert place == {"position": answer["entry"]["position"], "hash": answer["entry"]["hash"]}
    code, out = await verify(capsys, export, str(client.make_url("/ledger")))
    assert code == 0 and f"ledger position {place['position']}" in out, out
    saved = tmp_path / "ledger.json"
    saved.write_text(json.dumps(answer))
    code, out = await verify(capsys, export, str(saved))
    assert code == 0, out
    assert (await verify(capsys, export, str(tmp_path / "no-such-file.json")))[0] == 2
    stale = tmp_path / "stale.json"  # a page that stops before the head it is signed with
    await create_tiny(client)  # one more entry after the game's
    _, page = await ledger(client, **{"from": place["position"], "limit": 1})
    assert page["next"] == place["position"] + 1
    stale.write_text(json.dumps(page))
    code, out = await verify(capsys, export, str(stale))
    assert code == 1 and out.startswith("MISMATCH  ledger: head"), out
    code, out = await verify(capsys, export, str(client.make_url("/ledger")))  # the URL pages on to the head
    assert code == 0, out


async def own_node(aiohttp_client: Any, url: str) -> Any:
    return await aiohttp_client(
        create_app(settings_for(url), engines=ENGINES), ws_response_class=CheckedWebSocket,
        trace_configs=[openapi_trace()],
    )


async def delete_game(store: Any, game_id: str) -> None:
    for key in (events_key(game_id), meta_key(game_id), cmds_key(game_id)):
        await store.redis.delete(key)


async def test_a_game_dropped_from_the_ledger_is_a_mismatch(aiohttp_client, valkey, capsys, tmp_path):
    node = await own_node(aiohttp_client, valkey)
    before = await create_tiny(node)
    game_id, _ = await finished_tiny(node)
    after = await create_tiny(node)
    export = await saved_export(node, game_id, tmp_path)
    code, _ = await verify(capsys, export, str(node.make_url("/ledger")))
    assert code == 0
    # The operator deletes the game and writes the ledger again without it, re-chained and re-signed.
    store = node.app[STORE]
    kept = [entry for entry in (await ledger(node))[1]["entries"] if entry["id"] != game_id]
    await delete_game(store, game_id)
    await store.redis.delete(ledger_key(), games_key())
    for entry in kept:
        fields = {name: entry[name] for name in ("game", "options", "seed_commitment", "created")}
        await store.ledger.record(entry["id"], fields)
    assert [entry["id"] for entry in (await ledger(node))[1]["entries"]] == [before, after]
    code, out = await verify(capsys, export, str(node.make_url("/ledger")))
    assert code == 1 and out.startswith("MISMATCH  ledger: missing entry"), out
    saved = tmp_path / "ledger.json"
    saved.write_text(json.dumps((await ledger(node))[1]))
    code, out = await verify(capsys, export, str(saved))
    assert code == 1 and out.startswith("MISMATCH  ledger: broken entry"), out


async def test_a_game_re_dealt_under_its_id_is_a_mismatch(aiohttp_client, valkey, capsys, tmp_path):
    node = await own_node(aiohttp_client, valkey)
    game_id, _ = await finished_tiny(node)
    first_export = await saved_export(node, game_id, tmp_path)
    assert (await verify(capsys, first_export, str(node.make_url("/ledger"))))[0] == 0
    # The operator deletes the game and deals it again under the same id, with another seed.
    await delete_game(node.app[STORE], game_id)
    dealer = await own_node(aiohttp_client, valkey)  # a fresh node: nothing of the old game cached
    from service.edge.keys import SERVICE

    await dealer.app[SERVICE].seating.create_game("tiny", {}, 2, game_id=game_id)
    tokens = []
    for name in ("ann", "bob"):
        seat = await dealer.post(f"/games/{game_id}/seats", json={"name": name})
        tokens.append((await seat.json())["token"])
    ws, _ = await hello(dealer, game_id, tokens[0])
    await command(ws, "bye", {"type": "resign", "args": {}})
    await expect_reply(ws, "bye")
    await ws.close()
    redealt = await saved_export(dealer, game_id, tmp_path / "..")
    assert json.loads(redealt.read_text())["seed"] != json.loads(first_export.read_text())["seed"]
    code, out = await verify(capsys, redealt, str(dealer.make_url("/ledger")))
    assert code == 1 and out.startswith("MISMATCH  ledger: broken entry"), out
    assert "seed_commitment" in out


ODD_VALUES = [None, True, 0, -1, 2**70, 1.5, "", "zz", "\udcff", [], {}, [1], {"a": None}]


def mutated(document: Any, rng: random.Random) -> Any:
    """``document`` with one value somewhere in it replaced by an odd one, or one member removed."""
    copied = copy.deepcopy(document)
    node, path = copied, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return rng.choice(ODD_VALUES)
    parent, key = path[-1]
    if isinstance(parent, dict) and rng.random() < 0.2:
        del parent[key]
    else:
        parent[key] = rng.choice(ODD_VALUES)
    return copied


async def test_a_mangled_ledger_or_export_place_is_a_mismatch_never_a_crash(client):
    game_id, _ = await finished_tiny(client)
    export = await (await client.get(f"/games/{game_id}/export")).json()
    _, answer = await ledger(client, game=game_id)
    created = {**(await created_payload(client, game_id)), "ts": answer["entry"]["created"]}
    assert ledger_problem(export, created, answer, PUBLIC_KEY) is None
    rng = random.Random(22)
    for _ in range(1500):
        problem = ledger_problem(mutated(export, rng), created, mutated(answer, rng), PUBLIC_KEY)
        assert problem is None or problem.startswith("ledger: ")
