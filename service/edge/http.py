"""HTTP routes of API v1 and the middleware that turns refusals into JSON error bodies.

Every error body is ``{"error": {"code": "...", "message": "..."}}`` with the code from
:mod:`service.errors` and its HTTP status, also for a request aiohttp could not even read (a
header line above 8,190 bytes: :data:`HANDLER_ARGS` and :func:`unreadable`). docs/protocol.md
documents every route, and ``service/contract/openapi.json`` (served at ``/openapi.json``) is
the same contract for machines; the tests check the app against it. Cross-origin browser use
is :mod:`service.edge.origins`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from events.archive.base import GamePruned
from events.errors import StoreError, StoreUnavailable
from projections import lobby
from projections.game import Status
from projections.views import events_for, view_for
from service.edge.keys import (
    CLOCK,
    DEPLOYMENT_KEYS,
    ENGINES,
    LIFECYCLE,
    METRICS,
    NODE,
    SERVICE,
    SETTINGS,
    STORE,
    WORKER,
)
from service.edge.ledger_routes import add_ledger_routes
from service.edge.wire import decode_json, refuse_unknown_fields
from service.edge.ws import websocket_handler
from service.errors import ErrorCode, ServiceError
from service.fairness.export import signed_export
from service.ops.logs import get_logger
from service.ops.metrics import CONTENT_TYPE
from service.ops.scrape import gather
from service.play.features import FEATURE_FIELDS, catalog_features
from service.timing.presence import away_seats

__all__ = ["setup_routes", "error_middleware", "bearer_token", "HANDLER_ARGS", "unreadable", "CONTRACTS"]

MAX_PAGE = 1000
MAX_OFFSET = 1_000_000_000
MAX_VERSION = 2**53 - 1
"""Bounds of ``offset`` and version parameters: far above any lobby or stream, and within what
the store's ranges and a JSON number carry exactly (the store refuses ranges beyond int64)."""
CREATE_FIELDS = frozenset({"game", "options", "seats", "bots", "bots_only"}) | FEATURE_FIELDS
SEAT_FIELDS = frozenset({"name", "request_id", "client_seed"})
CONTRACTS = {"/openapi.json": "openapi.json", "/asyncapi.json": "asyncapi.json"}
"""The machine-readable contract, route -> file of the ``service.contract`` package."""
_QUIET_ROUTES = frozenset(
    {"/healthz", "/readyz", "/metrics", "/games/{id}/ws", "/app/static/{path}", "/app/client/{path}"}
)
"""Not logged per request: probes and scrapes (frequent, in the metrics anyway), sockets (logged by ws) and
the web app's static files (a dozen per page load; counted in the metrics under their prefix)."""
log = get_logger()


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda obj: json.dumps(obj, separators=(",", ":")))


def error_response(exc: ServiceError) -> web.Response:
    return _json({"error": exc.as_dict()}, status=exc.http_status)


def bearer_token(request: web.Request) -> str | None:
    """The token of ``Authorization: Bearer <token>``; ``None`` without the header."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ServiceError(ErrorCode.UNAUTHORIZED, "the Authorization header must be 'Bearer <token>'")
    return token.strip()


def _int_param(request: web.Request, name: str, default: int | None, low: int, high: int | None = None) -> int:
    raw = request.query.get(name)
    if raw is None:
        if default is None:
            raise ServiceError(ErrorCode.BAD_REQUEST, f"query parameter {name!r} is required")
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ServiceError(ErrorCode.BAD_REQUEST, f"query parameter {name!r} must be an int, got {raw!r}") from None
    if value < low or (high is not None and value > high):
        bound = f"{low}-{high}" if high is not None else f">= {low}"
        raise ServiceError(ErrorCode.BAD_REQUEST, f"query parameter {name!r} must be {bound}, got {value}")
    return value


async def _body(request: web.Request, known: frozenset[str]) -> dict[str, Any]:
    """The JSON object of the request; ``bad_request`` naming any field not in ``known``."""
    body = decode_json(await request.read() or b"{}", "request body")
    if not isinstance(body, dict):
        raise ServiceError(ErrorCode.BAD_REQUEST, "the request body must be a JSON object")
    refuse_unknown_fields(body, known, "the request body", ErrorCode.BAD_REQUEST)
    return body


def _refuse_nulls(body: dict[str, Any], fields: frozenset[str]) -> None:
    """``bad_request`` for a field sent as ``null``: an optional field is left out, never null
    (null would otherwise read as absent, e.g. a seat without its ``client_seed``)."""
    for name in sorted(fields):
        if name in body and body[name] is None:
            raise ServiceError(ErrorCode.BAD_REQUEST, f"'{name}' must be a string when sent; leave it out instead")


_CODE_OF_STATUS = {404: ErrorCode.NOT_FOUND, 413: ErrorCode.FRAME_TOO_LARGE}


def _error_of_status(status: int, message: str) -> ServiceError:
    """Any refusal aiohttp makes by itself, as the documented error of that status."""
    if status >= 500:
        return ServiceError(ErrorCode.INTERNAL, message, http_status=status)
    return ServiceError(_CODE_OF_STATUS.get(status, ErrorCode.BAD_REQUEST), message, http_status=status)


# --- middleware ---------------------------------------------------------------------------------


@web.middleware
async def error_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Refusals -> JSON errors; store outages -> 503; bugs -> 500 (logged); one log line per request."""
    started = time.perf_counter()
    route = request.match_info.route.resource.canonical if request.match_info.route.resource else "unmatched"
    response: web.StreamResponse
    try:
        refused = unreadable(request)
        if refused is not None:
            response = error_response(refused)
            response.force_close()  # what else it sent is not worth reading
        else:
            response = await handler(request)
    except ServiceError as exc:
        response = error_response(exc)
    except GamePruned as exc:
        response = error_response(ServiceError(ErrorCode.GAME_PRUNED, str(exc)))
    except StoreUnavailable as exc:
        request.app[METRICS].store_unavailable.inc()
        response = error_response(ServiceError(ErrorCode.STORE_UNAVAILABLE, f"the event store is unavailable: {exc}"))
    except web.HTTPRequestEntityTooLarge as exc:
        response = error_response(ServiceError(ErrorCode.FRAME_TOO_LARGE, exc.text or "request body too large"))
    except web.HTTPNotFound:
        response = error_response(ServiceError(ErrorCode.NOT_FOUND, f"no route {request.path!r}"))
    except web.HTTPMethodNotAllowed as exc:
        response = error_response(
            ServiceError(ErrorCode.BAD_REQUEST, f"{request.method} is not allowed on {request.path!r}", http_status=405)
        )
        response.headers["Allow"] = ",".join(sorted(exc.allowed_methods))
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = error_response(_error_of_status(exc.status, exc.text or exc.reason))
    except StoreError as exc:
        log.error("http.store_error", path=request.path, error=str(exc))
        response = error_response(ServiceError(ErrorCode.INTERNAL, "the event store refused the request"))
    except Exception:
        log.exception("http.failed", method=request.method, path=request.path)
        response = error_response(ServiceError(ErrorCode.INTERNAL, "internal error (logged on the server)"))
    status = response.status
    metrics = request.app[METRICS]
    metrics.http_requests.inc(method=request.method, route=route, status=str(status))
    if not isinstance(response, web.WebSocketResponse):  # a socket's "latency" would be its lifetime
        metrics.http_request_seconds.observe(time.perf_counter() - started, method=request.method, route=route)
    if route not in _QUIET_ROUTES:
        log.info(
            "http.request",
            method=request.method,
            path=request.path,
            status=status,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )
    return response


# --- probes ------------------------------------------------------------------------------------


async def healthz(request: web.Request) -> web.Response:
    """Alive: the process answers. Says nothing about the store (that is ``/readyz``)."""
    return _json({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """Ready: the node is not draining, the event store answers a PING now (within
    ``DONJON_READY_TIMEOUT_MS``), and the node's stream reader is not failing."""
    if request.app[LIFECYCLE].draining:
        error = {"code": ErrorCode.DRAINING.value, "message": "this node is shutting down"}
        return _json({"status": "draining", "error": error}, status=503)
    try:
        await request.app[STORE].ping(request.app[SETTINGS].ready_timeout_ms / 1000)
    except StoreError as exc:
        request.app[METRICS].store_unavailable.inc()
        return _unready(str(exc))
    problem = request.app[NODE].problem
    if problem is not None:
        return _unready(problem)
    return _json({"status": "ready"})


def _unready(message: str) -> web.Response:
    return _json(
        {"status": "unavailable", "error": {"code": ErrorCode.STORE_UNAVAILABLE.value, "message": message}},
        status=503,
    )


async def metrics(request: web.Request) -> web.Response:
    """This node's series; of a worker of several, the whole server's (``?scope=worker``: its own)."""
    body = request.app[METRICS].render()
    if WORKER in request.app and request.query.get("scope") != "worker":
        body = await gather(request.app[WORKER], body)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


# --- games -------------------------------------------------------------------------------------


async def catalog(request: web.Request) -> web.Response:
    engines = request.app[ENGINES]
    service = request.app[SERVICE]
    return _json(
        {
            "games": [
                dict(
                    engines[name].catalog_entry(),
                    bots=service.bot_names(name),
                    features=catalog_features(engines[name].cooperative({})),
                )
                for name in sorted(engines)
            ]
        }
    )


async def contract(request: web.Request) -> web.Response:
    """``/openapi.json``, ``/asyncapi.json``: the package's own files, as they are."""
    return web.Response(body=request.app[_CONTRACT_FILES][request.path], content_type="application/json")


async def game_assets(request: web.Request) -> web.Response:
    """What a client needs to draw a game (tile designs), from the served engine's own data."""
    game = request.match_info["game"]
    engine = request.app[ENGINES].get(game)
    if engine is None:
        raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game!r} in the catalog")
    build = getattr(engine, "assets", None)
    return _json(build() if build is not None else {"game": game})


async def create_game(request: web.Request) -> web.Response:
    body = await _body(request, CREATE_FIELDS)
    features = {name: body[name] for name in FEATURE_FIELDS if name in body}
    projection = await request.app[SERVICE].create_game(
        body.get("game"),
        body.get("options"),
        body.get("seats"),
        body.get("bots"),
        body.get("bots_only", False),
        features,
    )
    return _json({"id": projection.game_id}, status=201)


async def take_seat(request: web.Request) -> web.Response:
    body = await _body(request, SEAT_FIELDS)
    _refuse_nulls(body, SEAT_FIELDS)
    seat, token, projection = await request.app[SERVICE].take_seat(
        request.match_info["id"],
        body.get("name"),
        body.get("request_id"),
        body.get("client_seed"),
        bearer_token(request),
    )
    status = projection.status.value
    reply: dict[str, Any] = {"seat": seat, "token": token, "version": projection.version, "status": status}
    if projection.contributions and projection.contributions[seat] is not None:
        reply["seed_contribution"] = projection.contributions[seat]
        reply["seed_contribution_from"] = projection.contribution_sources[seat]
    return _json(reply)


async def rematch(request: web.Request) -> web.Response:
    await _body(request, frozenset())
    rematch_id, seat = await request.app[SERVICE].rematch(request.match_info["id"], bearer_token(request))
    return _json({"id": rematch_id, "seat": seat}, status=201)


async def list_games(request: web.Request) -> web.Response:
    raw = request.query.get("status", Status.OPEN.value)
    try:
        status = Status(raw)
    except ValueError:
        raise ServiceError(ErrorCode.BAD_REQUEST, f"status must be open, active or finished, not {raw!r}") from None
    limit = _int_param(request, "limit", 50, 1, 200)
    offset = _int_param(request, "offset", 0, 0, MAX_OFFSET)
    entries = await lobby.list_lobby(request.app[STORE], status, limit, offset)
    return _json({"status": status.value, "games": entries, "offset": offset, "limit": limit})


async def get_game(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    game_id = request.match_info["id"]
    seat = await service.authenticate(game_id, bearer_token(request))
    projection = await service.sight(game_id, seat)
    seats = projection.seat_list()
    if projection.status is Status.ACTIVE:
        meta = await request.app[STORE].get_meta(game_id)
        for away in away_seats(meta, projection, service.clock(), request.app[SETTINGS].away_ms):
            seats[away]["away"] = True
    return _json(
        {
            "id": game_id,
            "game": projection.game,
            "status": projection.status.value,
            "version": projection.version,
            "seat": seat,
            "seats": seats,
            "view": view_for(projection, seat),
            "spectators": request.app[NODE].spectators(game_id),
        }
    )


async def get_events(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    game_id = request.match_info["id"]
    seat = await service.authenticate(game_id, bearer_token(request))
    start = max(1, _int_param(request, "from", 1, 0, MAX_VERSION))  # from=0: from the start, as since=0 is
    limit = _int_param(request, "limit", MAX_PAGE, 1, MAX_PAGE)
    shown = await service.sight(game_id, seat)
    version = shown.version  # nothing newer, whatever is appended meanwhile (a spectator delay holds)
    last = min(start + limit - 1, version)
    envelopes = await service.events(game_id, start, last) if start <= last else []
    last = envelopes[-1].version if envelopes else version
    return _json(
        {
            "id": game_id,
            "version": version,
            "from": start,
            "events": events_for(shown.engine, envelopes, seat),
            "next": last + 1 if last < version else None,
        }
    )


async def get_state(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    game_id = request.match_info["id"]
    latest = await service.sight(game_id, None)
    at = _int_param(request, "at", latest.version, 1, MAX_VERSION)
    if at > latest.version:
        raise ServiceError(ErrorCode.BAD_REQUEST, f"at={at} is beyond game {game_id!r}'s version {latest.version}")
    projection = latest if at == latest.version else await service.projection_at(game_id, at)
    return _json(
        {
            "id": game_id,
            "game": projection.game,
            "status": projection.status.value,
            "version": projection.version,
            "seats": projection.seat_list(),
            "view": view_for(projection, None),
        }
    )


async def get_export(request: web.Request) -> web.Response:
    """A finished game's whole log with the stored bodies and hashes, signed by the deployment's
    current key (:mod:`service.fairness.export`)."""
    game_id = request.match_info["id"]
    projection = await request.app[SERVICE].load(game_id)
    signer = await request.app[DEPLOYMENT_KEYS].signer()
    return _json(await signed_export(request.app[STORE], game_id, projection.game, signer, request.app[CLOCK]()))


# --- requests too large to read ----------------------------------------------------------------

HEADER_LINE_LIMIT = 8190
"""The longest request target and header name or value the service reads (aiohttp's own default)."""
PARSER_LIMIT = 64 * 1024
HANDLER_ARGS = {"max_line_size": PARSER_LIMIT, "max_field_size": PARSER_LIMIT}
"""aiohttp's parser limits (``web.Application(handler_args=...)``, its public hook, which every
server of the app takes: ``web.run_app``'s, an ``AppRunner``'s, the test servers'). aiohttp answers a
line above its limit itself, in plain text, before any middleware runs; so it reads lines up to
:data:`PARSER_LIMIT` and the app refuses one above :data:`HEADER_LINE_LIMIT` with the documented
JSON error (:func:`unreadable`). Only a line above 64 KiB still gets aiohttp's plain 400."""


def unreadable(request: web.Request) -> ServiceError | None:
    """The refusal of a request with a target or header line longer than :data:`HEADER_LINE_LIMIT`."""
    too_long = len(request.raw_path) > HEADER_LINE_LIMIT or any(
        len(name) > HEADER_LINE_LIMIT or len(value) > HEADER_LINE_LIMIT for name, value in request.raw_headers
    )
    if not too_long:
        return None
    message = f"the request could not be read: a line above {HEADER_LINE_LIMIT} bytes"
    log.info("http.unreadable_request", status=400, error=message)
    return ServiceError(ErrorCode.BAD_REQUEST, message)


_CONTRACT_FILES = web.AppKey("contract_files", dict)


async def keys(request: web.Request) -> web.Response:
    """The deployment's signing keys, current and retired, and ``legacy_games_before``
    (``docs/fairness.md``)."""
    return _json(await request.app[DEPLOYMENT_KEYS].listing())


def setup_routes(app: web.Application) -> None:
    files = resources.files("service.contract")
    app[_CONTRACT_FILES] = {route: files.joinpath(name).read_bytes() for route, name in CONTRACTS.items()}
    for route in CONTRACTS:
        app.router.add_get(route, contract)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/games/catalog", catalog)
    app.router.add_get("/games/catalog/{game}/assets", game_assets)
    app.router.add_get("/keys", keys)
    add_ledger_routes(app)
    app.router.add_get("/games", list_games)
    app.router.add_post("/games", create_game)
    app.router.add_post("/games/{id}/seats", take_seat)
    app.router.add_post("/games/{id}/rematch", rematch)
    app.router.add_get("/games/{id}/events", get_events)
    app.router.add_get("/games/{id}/state", get_state)
    app.router.add_get("/games/{id}/export", get_export)
    app.router.add_get("/games/{id}/ws", websocket_handler)
    app.router.add_get("/games/{id}", get_game)
