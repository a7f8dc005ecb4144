"""openapi-python-client against the contract, as an outside team would use it: it generates a
Python client from ``service/contract/openapi.json`` (into a temporary folder, never the
repository) without a warning, and that client calls every GET operation, creates a game and
takes a seat against a real ``donjon serve``, each answer parsed into the generated models (not
``None``, not a bag of unknown fields). The TypeScript generator (openapi-typescript under strict
tsc) and ``@asyncapi/parser`` are run by the JavaScript client's tests
(``clients/js/test/contract.test.js``), where their npm packages are installed.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import requests

from tests.service.contract import document
from tests.service.serving import donjon_serve

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "donjon_generated"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The generated client package, importable for this module's tests only."""
    folder = tmp_path_factory.mktemp("generated")
    run = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--meta", "none",
         "--path", str(ROOT / "service" / "contract" / "openapi.json"), "--output-path", str(folder / PACKAGE)],
        capture_output=True, text=True, timeout=300, cwd=folder,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    said = run.stdout + run.stderr
    assert "warning" not in said.lower() and "could not" not in said.lower(), said  # a schema it dropped
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def served(embedded_redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with donjon_serve(embedded_redis_url, tmp_path_factory.mktemp("serve")) as base:
        yield base


def _api(generated: ModuleType, operation_id: str) -> Any:
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in operation_id)
    return importlib.import_module(f"{PACKAGE}.api.default.{snake}")


def _models(generated: ModuleType) -> Any:
    return importlib.import_module(f"{PACKAGE}.models")


def test_the_generated_catalog_parses_to_real_objects(generated: ModuleType, served: str) -> None:
    models = _models(generated)
    client = generated.Client(base_url=served, raise_on_unexpected_status=True)
    catalog = _api(generated, "catalog").sync(client=client)
    assert isinstance(catalog, models.Catalog), catalog
    entries = {entry.id: entry for entry in catalog.games}
    assert set(entries) == {"carcassonne", "castle", "castle_panic"}
    carcassonne = entries["carcassonne"]
    assert isinstance(carcassonne, models.CatalogEntry) and carcassonne.min_seats >= 1
    option = carcassonne.options["inns_cathedrals"]
    assert isinstance(option, models.OptionSpec) and option.type_ == models.OptionSpecType.BOOL
    assert isinstance(carcassonne.bots, list) and "random" in carcassonne.bots


def test_the_generated_client_plays_its_part_against_donjon_serve(generated: ModuleType, served: str) -> None:
    """Create a game (options, a fractional clock, a spectator delay in seconds), take both seats,
    then every GET operation of the document, each answer one of the generated models, and a
    rematch asked too early (commands travel by websocket, which generated HTTP clients lack)."""
    models = _models(generated)
    client = generated.Client(base_url=served, raise_on_unexpected_status=True)
    body = models.CreateGame.from_dict({
        "game": "carcassonne", "seats": 2, "options": {"inns_cathedrals": True},
        "clock": {"initial_s": 600.5, "increment_s": 2.5}, "on_timeout": "forfeit", "undo": False,
        "spectator_delay": {"seconds": 1.5},
    })
    assert isinstance(body.clock, models.FischerClock) and isinstance(body.spectator_delay, models.SecondsDelay)
    created = _api(generated, "createGame").sync(client=client, body=body)
    assert isinstance(created, models.Created), created
    seated = [
        _api(generated, "takeSeat").sync(created.id, client=client, body=models.TakeSeat(name=name))
        for name in ("Ada", "Grace")
    ]
    assert all(isinstance(seat, models.Seated) for seat in seated), seated
    assert [seat.seat for seat in seated] == [0, 1] and seated[1].status == models.SeatedStatus.ACTIVE
    seat0 = generated.AuthenticatedClient(base_url=served, token=seated[0].token, raise_on_unexpected_status=True)
    calls = _every_get(created.id, client, seat0)
    documented = {
        operation["operationId"] for item in document("openapi.json")["paths"].values()
        for method, operation in item.items() if method == "get"
    }
    assert set(calls) == documented, "a GET operation of openapi.json this test does not call"
    for operation_id, (call, expected) in calls.items():
        answer = call(_api(generated, operation_id))
        parsed = answer.parsed
        assert parsed is not None, f"{operation_id}: {answer.status_code} parsed to None"
        kind = getattr(models, expected) if expected not in ("str", "Any") else (str if expected == "str" else object)
        assert isinstance(parsed, kind), f"{operation_id}: {type(parsed).__name__}, not {expected}"
    game = _api(generated, "getGame").sync(created.id, client=seat0)
    assert isinstance(game, models.Game) and game.seat == 0 and isinstance(game.view, models.View)
    assert all(isinstance(command, models.Command) for command in game.view.legal) and game.view.legal
    assert isinstance(game.view.clock, models.Clock) and game.view.clock.running == 0
    assert game.spectators == 0  # no spectator socket on this node: a count, typed
    early = _api(generated, "rematch").sync(created.id, client=seat0)  # commands travel by websocket only
    assert isinstance(early, models.Error) and early.error.code == models.ErrorCode.NOT_OVER


def _every_get(game_id: str, client: Any, seat: Any) -> dict[str, tuple[Callable[[Any], Any], str]]:
    """operationId -> (how to call its module, the model its answer parses to)."""
    return {
        "healthz": (lambda api: api.sync_detailed(client=client), "Health"),
        "readyz": (lambda api: api.sync_detailed(client=client), "Ready"),
        "metrics": (lambda api: api.sync_detailed(client=client), "str"),
        "openapi": (lambda api: api.sync_detailed(client=client), "OpenApiDocument"),
        "asyncapi": (lambda api: api.sync_detailed(client=client), "AsyncApiDocument"),
        "catalog": (lambda api: api.sync_detailed(client=client), "Catalog"),
        "keys": (lambda api: api.sync_detailed(client=client), "Keys"),
        "ledger": (lambda api: api.sync_detailed(client=client, limit=5), "Ledger"),
        "listGames": (lambda api: api.sync_detailed(client=client), "Lobby"),
        "getGame": (lambda api: api.sync_detailed(game_id, client=seat), "Game"),
        "getEvents": (lambda api: api.sync_detailed(game_id, client=seat, from_=1, limit=10), "EventsPage"),
        "getState": (lambda api: api.sync_detailed(game_id, client=client, at=1), "State"),
        "websocket": (lambda api: api.sync_detailed(game_id, client=client), "Error"),  # a plain GET: 400
        "getGameAssets": (lambda api: api.sync_detailed("carcassonne", client=client), "GameAssets"),
        "getExport": (lambda api: api.sync_detailed(game_id, client=client), "Error"),  # not finished: 409
        "appLobby": (lambda api: api.sync_detailed(client=client), "str"),
        "appGame": (lambda api: api.sync_detailed(game_id, client=client), "str"),
        "appStatic": (lambda api: api.sync_detailed("app.css", client=client), "str"),
        "appClient": (lambda api: api.sync_detailed("index.js", client=client), "str"),
    }


def test_a_refusal_parses_to_the_generated_error_with_its_code(generated: ModuleType, served: str) -> None:
    models = _models(generated)
    client = generated.Client(base_url=served)
    refused = _api(generated, "createGame").sync(client=client, body=models.CreateGame(game="chess"))
    assert isinstance(refused, models.Error) and refused.error.code == models.ErrorCode.UNKNOWN_GAME
    assert requests.get(f"{served}/healthz", timeout=5).status_code == 200
