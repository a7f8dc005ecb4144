"""The machine-readable contract (``service/contract/openapi.json`` and ``asyncapi.json``) against
the service itself.

- Both documents are valid (OpenAPI 3.1 against its meta-schema; every AsyncAPI schema is a
  JSON Schema and every reference resolves) and are served as they are in the package.
- The app's router and ``openapi.json`` name the same routes, both ways (:data:`NOT_IN_OPENAPI`
  would list, with a reason, a route deliberately left out; it is empty).
- schemathesis sends property-based requests, valid and invalid, to every operation of a real
  ``donjon serve`` on the embedded Valkey, each once as generated and once aimed at a live game
  (its id, a seat's token), and every answer must match the document: status, content type,
  body schema, headers; no 5xx; invalid requests refused with a 4xx.
- Frames: every frame any websocket test receives is checked against ``asyncapi.json`` by
  :class:`tests.service.contract.CheckedWebSocket`; here, that the checker refuses what it must.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests
import schemathesis
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate as validate_openapi
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.specs.openapi import checks as openapi_checks

from service.contract import PROTOCOL_VERSION
from service.errors import ErrorCode
from tests.service.contract import check, check_server_frame, document, validator
from tests.service.serving import donjon_serve

OPENAPI = document("openapi.json")
ASYNCAPI = document("asyncapi.json")
SCHEMAS: dict[str, Any] = OPENAPI["components"]["schemas"]
SCHEMA_REF = "#/components/schemas/"
ROOT = Path(__file__).resolve().parents[2]

NOT_IN_OPENAPI: dict[tuple[str, str], str] = {}
"""(method, path) of a route deliberately absent from openapi.json -> why. Add a route to the
document instead whenever it is part of the API; a static tree is documented as
``/prefix/{path}`` (see :func:`router_routes`)."""

CHECKS = [
    schemathesis.checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.negative_data_rejection,
]
"""Every stateless check but ``positive_data_acceptance``: a request the schema allows may still
be refused with a documented 4xx, because what a game accepts (its options, seat counts, bots)
is data the service serves at ``/games/catalog``, not a static schema."""


def router_routes(app: web.Application) -> set[tuple[str, str]]:
    """Every (method, path template) the router answers, HEAD (implied by GET) left out."""
    routes = set()
    for route in app.router.routes():
        if route.method == "HEAD":
            continue
        resource = route.resource
        assert resource is not None
        path = resource.canonical
        if isinstance(resource, web.StaticResource):
            path = path.rstrip("/") + "/{path}"
        routes.add((route.method, path))
    return routes


def document_routes() -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in OPENAPI["paths"].items() for method in item}


def test_every_route_of_the_router_is_in_openapi_and_every_documented_route_is_routed(client):
    routed = router_routes(client.app)
    documented = document_routes()
    assert routed - documented - set(NOT_IN_OPENAPI) == set(), "routes missing from service/contract/openapi.json"
    assert documented - routed == set(), "openapi.json documents routes the app does not have"
    assert set(NOT_IN_OPENAPI) <= routed, "NOT_IN_OPENAPI names a route that no longer exists"


def test_openapi_is_a_valid_openapi_3_1_document():
    assert OPENAPI["openapi"].startswith("3.1.")
    validate_openapi(OPENAPI)


def test_every_asyncapi_schema_is_a_json_schema_and_every_reference_resolves():
    assert ASYNCAPI["asyncapi"].startswith("3.")
    for name, schema in ASYNCAPI["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema)
        validator(name).is_valid({})  # walks the schema's references; an unresolvable one raises
    references = [value for value in _walk(ASYNCAPI) if isinstance(value, str) and value.startswith("#/")]
    for reference in references:
        node: Any = ASYNCAPI
        for part in reference[2:].split("/"):
            node = node[part]  # a KeyError names a dangling local reference
    for message in ASYNCAPI["components"]["messages"].values():
        assert message["payload"]["$ref"].removeprefix("#/components/schemas/") in ASYNCAPI["components"]["schemas"]


def test_the_times_post_games_takes_are_numbers_so_generated_clients_may_send_fractions():
    """A generator types ``integer`` fields as whole numbers only; the service takes fractions of
    seconds (``0.5``), so those must be ``number``, and versions, which are counts, ``integer``."""
    properties = SCHEMAS["CreateGame"]["properties"]
    shapes = {
        name: {key: spec["type"] for shape in _shapes(properties[name]) for key, spec in shape.get("properties", {}).items()}
        for name in ("clock", "spectator_delay")
    }
    assert shapes == {
        "clock": {"initial_s": "number", "increment_s": "number", "per_move_s": "number"},
        "spectator_delay": {"versions": "integer", "seconds": "number"},
    }


def _shapes(field: dict[str, Any]) -> list[dict[str, Any]]:
    """The object shapes a ``oneOf`` field takes, each a named schema (generators name them)."""
    return [SCHEMAS[ref["$ref"].removeprefix(SCHEMA_REF)] for ref in field["oneOf"] if "$ref" in ref]


# --- what generators need (issue 27): their own runs are tests/service/test_generators.py -----


def test_the_documents_and_protocol_md_are_of_the_service_protocol_version():
    assert OPENAPI["info"]["version"] == ASYNCAPI["info"]["version"] == PROTOCOL_VERSION
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert f"protocol version **{PROTOCOL_VERSION}**" in protocol


def test_every_response_schema_is_a_named_open_schema():
    """Generators name a type after its schema (inline ones get made-up names, or none); and an
    answer may gain fields in a later version, so no response schema closes its properties."""
    for where, content in _response_contents():
        if where.endswith("application/json"):
            assert set(content["schema"]) == {"$ref"}, f"{where}: an inline response schema"
    for name in _reachable(OPENAPI["paths"], "responses") | _reachable(OPENAPI["components"]["responses"]):
        closed = [path for path, node in _nodes(SCHEMAS[name]) if node.get("additionalProperties") is False]
        assert not closed, f"response schema {name} is closed at {closed}"


def test_every_array_has_items_and_every_open_object_says_so():
    """``items`` missing, or an object with neither ``properties`` nor ``additionalProperties``,
    is ``unknown[]`` / ``Record<string, never>`` to openapi-typescript."""
    for document_name, doc in (("openapi.json", OPENAPI), ("asyncapi.json", ASYNCAPI)):
        for path, node in _nodes(doc):
            if node.get("type") == "array" or "array" in (node.get("type") or []):
                assert "items" in node or "prefixItems" in node, f"{document_name}{path}: an array without items"
            if node.get("type") == "object" and not {"properties", "additionalProperties", "$ref", "allOf", "oneOf", "anyOf"} & set(node):
                raise AssertionError(f"{document_name}{path}: an object of nothing (say additionalProperties)")


def test_request_fields_with_a_default_are_optional_and_enums_are_typed():
    """A ``default`` makes openapi-typescript's field required; a bare ``enum`` loses its type."""
    for name in _reachable(OPENAPI["paths"], "requestBody"):
        for field, spec in SCHEMAS[name].get("properties", {}).items():
            assert "default" not in spec, f"{name}.{field}: a default (say it in the description)"
    for path, node in _nodes(OPENAPI):
        if "enum" in node:
            assert node.get("type") == "string", f"openapi.json{path}: an enum that is not typed string"
    assert SCHEMAS["ErrorCode"]["type"] == "string"
    assert "required" not in SCHEMAS["TakeSeat"] and "by design" in SCHEMAS["TakeSeat"]["description"]


def _response_contents() -> Iterator[tuple[str, dict[str, Any]]]:
    responses = [
        (f"{path} {method} {status}", response)
        for path, item in OPENAPI["paths"].items()
        for method, operation in item.items()
        for status, response in operation["responses"].items()
    ]
    responses += [(f"components/responses/{name}", response) for name, response in OPENAPI["components"]["responses"].items()]
    for where, response in responses:
        for content_type, content in response.get("content", {}).items():
            yield f"{where} {content_type}", content


def _reachable(node: Any, under: str | None = None) -> set[str]:
    """Names of the schemas ``node`` refers to (within its ``under`` members), transitively."""
    found: set[str] = set()
    start = [value for path, value in _nodes(node) if under is None or path.endswith("/" + under)]
    pending = [value for root in start for value in _walk(root)] + start
    while pending:
        value = pending.pop()
        ref = value.get("$ref") if isinstance(value, dict) else None
        if isinstance(ref, str) and ref.startswith(SCHEMA_REF) and ref.removeprefix(SCHEMA_REF) not in found:
            found.add(ref.removeprefix(SCHEMA_REF))
            target = SCHEMAS[ref.removeprefix(SCHEMA_REF)]
            pending += [target, *_walk(target)]
    return found


def _nodes(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of ``node`` with its JSON-pointer-like path."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _nodes(value, f"{path}/{index}")


def _walk(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        for value in node.values():
            yield value
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_error_code_of_the_service_is_in_the_documents():
    known = SCHEMAS["ErrorCode"]["enum"]
    assert {code.value for code in ErrorCode} <= set(known)
    http_codes = {
        code
        for value in _walk(OPENAPI)
        if isinstance(value, dict) and "enum" in value and value is not known
        for code in value["enum"]
    }
    websocket_only = {"bad_frame", "unknown_frame", "hello_required", "unknown_command", "bad_command"}
    websocket_only |= {"not_your_turn", "illegal_move", "game_over", "not_started", "spectator", "rate_limited"}
    websocket_only |= {"undo_refused", "clock_expired"}
    assert {code.value for code in ErrorCode} - websocket_only <= http_codes


def test_the_frame_checker_refuses_frames_the_document_does_not_have():
    ack = {"type": "ack", "id": "c1", "version": 3, "duplicate": False}
    assert check_server_frame(ack) == ack
    for broken in (
        {**ack, "extra": 1},
        {"type": "ack", "id": "c1", "version": 3},
        {"type": "error", "code": "bad_json"},
        {"type": "update", "game": "g", "version": 2, "status": "open", "seats": [], "view": {"legal": []}},
        {"type": "welcome"},
    ):
        with pytest.raises(AssertionError):
            check_server_frame(broken)
    check("CloseCode", 1013)
    with pytest.raises(AssertionError):
        check("CloseCode", 4000)
    check("ClientFrame", {"type": "command", "id": "c", "command": {"type": "draw", "args": {}}})
    with pytest.raises(AssertionError):
        check("ClientFrame", {"type": "hello", "snice": 1})


async def test_the_documents_are_served_as_the_package_has_them(client):
    for route, expected in (("/openapi.json", OPENAPI), ("/asyncapi.json", ASYNCAPI)):
        response = await client.get(route)
        assert (response.status, response.content_type) == (200, "application/json")
        assert await response.json() == expected


# --- schemathesis against a running donjon serve ----------------------------------------------


@pytest.fixture(scope="module")
def served(embedded_redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``donjon serve`` (every real game) on the session's embedded Valkey; whatever
    schemathesis sent, it must log no error."""
    with donjon_serve(embedded_redis_url, tmp_path_factory.mktemp("serve")) as base:
        yield base


@pytest.fixture(scope="module")
def live_game(served: str) -> dict[str, str]:
    """A started game and one seat's token, for cases aimed at something that exists."""
    created = requests.post(f"{served}/games", json={"game": "castle_panic", "seats": 2, "bots": {"1": "random"}})
    game_id = created.json()["id"]
    seat = requests.post(f"{served}/games/{game_id}/seats", json={"name": "schemathesis"}).json()
    return {"id": game_id, "token": seat["token"]}


def open_game(served: str) -> str:
    """A game with six free seats: a seat request aimed at it can succeed."""
    return requests.post(f"{served}/games", json={"game": "castle_panic", "seats": 6}, timeout=5).json()["id"]


def _operations(served: str) -> tuple[Any, list[Any]]:
    """Every operation of the served document but the websocket upgrade (its frames are the
    websocket tests'; its refusals are tested below)."""
    # from_dict of what the service serves: from_url would leave the document's own route out
    loaded = schemathesis.openapi.from_dict(requests.get(f"{served}/openapi.json", timeout=5).json())
    operations = []
    for result in loaded.get_all_operations():
        assert isinstance(result, Ok), f"schemathesis cannot read an operation of openapi.json: {result}"
        operations.append(result.ok())
    return loaded, [operation for operation in operations if operation.path != "/games/{id}/ws"]


@pytest.mark.timeout(600)
def test_every_answer_of_every_route_matches_openapi(served: str, live_game: dict[str, str]) -> None:
    """Valid and invalid requests for each operation (schemathesis' strategies driven by
    hypothesis directly: its pytest plugin does not run under pytest 9)."""
    loaded, operations = _operations(served)
    assert len(operations) == len(document_routes()) - 1
    for operation in operations:
        cases = operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(GenerationMode.NEGATIVE)
        for example in loaded.get_strategies_from_examples(operation):
            cases = cases | example

        @given(case=cases)
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def answers_match(case: Any) -> None:
            case.call_and_validate(base_url=served, checks=CHECKS)
            if "id" in (case.path_parameters or {}):
                seats = case.path == "/games/{id}/seats"
                case.path_parameters["id"] = open_game(served) if seats else live_game["id"]
                if case.headers and "Authorization" in case.headers:
                    case.headers["Authorization"] = f"Bearer {live_game['token']}"
                case.call_and_validate(base_url=served, checks=CHECKS)

        answers_match()


def test_the_websocket_route_answers_a_plain_get_as_documented(served: str, live_game: dict[str, str]) -> None:
    """The upgrade itself is the websocket tests' (every frame checked); its refusals are here."""
    operation = OPENAPI["paths"]["/games/{id}/ws"]["get"]["responses"]
    for game_id, status in ((live_game["id"], 400), ("0000000000000000", 404)):
        response = requests.get(f"{served}/games/{game_id}/ws")
        assert response.status_code == status and str(status) in operation
        body = response.json()
        assert body["error"]["code"] == ("bad_request" if status == 400 else "not_found")
        jsonschema.validate(body, {"$ref": "#/components/schemas/Error", "components": OPENAPI["components"]})
    assert json.loads(requests.get(f"{served}/asyncapi.json").text) == ASYNCAPI


def test_donjon_serve_answers_an_unreadable_request_with_the_json_error(served: str) -> None:
    """The JSON answer to a request aiohttp cannot read holds in ``donjon serve`` (web.run_app),
    not only in the test servers."""
    response = requests.get(f"{served}/healthz", headers={"X-Padding": "x" * 9000}, timeout=5)
    assert (response.status_code, response.headers["Content-Type"].split(";")[0]) == (400, "application/json")
    assert response.json()["error"]["code"] == "bad_request"
    assert requests.get(f"{served}/healthz", timeout=5).status_code == 200
