"""The contract documents as test oracles: every frame a test receives must match
``service/contract/asyncapi.json``, every HTTP answer ``openapi.json``.

:class:`CheckedWebSocket` is the websocket class of every test client (``make_client`` and the
sessions of the tests that start ``donjon serve``): its ``receive`` (and so ``receive_json``
and every helper built on it) validates each server frame against ``ServerFrame`` and each close
code against ``CloseCode`` before the test sees them. :func:`openapi_trace` is the client trace
of the same clients: every HTTP answer is checked against its operation in ``openapi.json``
(status listed, content type, body schema) before the test reads it. A route or frame changed
without its document, or a close code the document does not list, fails whichever test got it.

The documents leave every answer open (clients must ignore fields they do not know; later
versions add them), so the tests hold the service to :func:`closed` copies of them: a field the
service sends that the document does not name fails the test, and the document gains it first.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

import aiohttp
import jsonschema
import msgpack
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

BASE = "https://donjon.invalid/"
"""Where the two documents notionally live, side by side, as the service serves them: the
relative ``openapi.json#/...`` references of the AsyncAPI document resolve here."""


def document(name: str) -> dict[str, Any]:
    return json.loads(resources.files("service.contract").joinpath(name).read_text(encoding="utf-8"))


def closed(node: Any) -> Any:
    """``node`` with every object schema that lists its ``properties`` and says nothing of others
    closed (``additionalProperties: false``); one that says ``additionalProperties: true`` (a
    game's view, a catalog entry, an export) stays open, as the document means it."""
    if isinstance(node, list):
        return [closed(value) for value in node]
    if not isinstance(node, dict):
        return node
    copy = {key: closed(value) for key, value in node.items()}
    if copy.get("type") == "object" and "properties" in copy and "additionalProperties" not in copy:
        copy["additionalProperties"] = False
    return copy


@cache
def _registry() -> Registry:
    return Registry().with_resources(
        (BASE + name, Resource.from_contents(closed(document(name)), default_specification=DRAFT202012))
        for name in ("openapi.json", "asyncapi.json")
    )


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """A validator of the AsyncAPI document's schema ``name`` (its references resolved)."""
    return jsonschema.Draft202012Validator(
        {"$ref": f"{BASE}asyncapi.json#/components/schemas/{name}"},
        registry=_registry(),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def check(name: str, instance: Any) -> Any:
    """``instance`` unchanged, or an AssertionError naming what of the document it breaks."""
    errors = sorted(validator(name).iter_errors(instance), key=lambda error: list(error.absolute_path))
    if errors:
        shown = json.dumps(instance)[:600]
        details = "; ".join(f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors[:5])
        raise AssertionError(f"not a {name} of asyncapi.json: {details}\nframe: {shown}")
    return instance


SERVER_FRAMES = {"snapshot": "Snapshot", "update": "Update", "ack": "Ack", "error": "ErrorFrame", "spectators": "Spectators"}


def check_server_frame(frame: Any) -> Any:
    """A frame the server sent: its own type's schema (for a readable failure), then ServerFrame."""
    kind = frame.get("type") if isinstance(frame, dict) else None
    assert kind in SERVER_FRAMES, f"asyncapi.json has no server frame of type {kind!r}: {json.dumps(frame)[:300]}"
    check(SERVER_FRAMES[kind], frame)
    return check("ServerFrame", frame)


class CheckedWebSocket(aiohttp.ClientWebSocketResponse):
    """A client websocket that holds the server to the AsyncAPI document on every receive."""

    async def receive(self, timeout: float | None = None) -> aiohttp.WSMessage:
        message = await super().receive(timeout)
        if message.type == aiohttp.WSMsgType.TEXT:
            check_server_frame(json.loads(message.data))
        elif message.type == aiohttp.WSMsgType.BINARY:
            check_server_frame(msgpack.unpackb(message.data, raw=False))
        elif message.type == aiohttp.WSMsgType.CLOSE:
            check("CloseCode", message.data)
        return message


# --- HTTP: every answer the tests get, held to openapi.json ------------------------------------


def _pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


@cache
def _operations() -> list[tuple[str, re.Pattern[str], str]]:
    """(method, path regex, path template) of every documented operation, fixed paths first."""
    found = []
    for template, item in document("openapi.json")["paths"].items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        for method in item:
            found.append((method.upper(), re.compile(f"^{pattern}$"), template))
    return sorted(found, key=lambda entry: entry[2].count("{"))


def _response_of(template: str, method: str, status: int) -> dict[str, Any]:
    responses = document("openapi.json")["paths"][template][method.lower()]["responses"]
    assert str(status) in responses, f"{method} {template} answered {status}, which openapi.json does not list"
    response = responses[str(status)]
    if "$ref" in response:
        response = document("openapi.json")["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    return response


def check_http_answer(method: str, path: str, status: int, content_type: str, body: bytes) -> None:
    """One HTTP answer against its operation in openapi.json: status, content type, body."""
    operation = next(((m, t) for m, regex, t in _operations() if m == method and regex.match(path)), None)
    if operation is None:
        assert status in (404, 405), f"{method} {path} is not in openapi.json but answered {status}"
        check_http_error(body)
        return
    template = operation[1]
    response = _response_of(template, method, status)
    content = response.get("content", {})
    ranges = {content_type, content_type.split("/")[0] + "/*", "*/*"}  # a static tree may say text/* or */*
    assert ranges & set(content), f"{method} {template} {status}: {content_type}, documented {list(content)}"
    if content_type != "application/json":
        return
    declared = document("openapi.json")["paths"][template][method.lower()]["responses"][str(status)]
    inline = "#/" + _pointer("paths", template, method.lower(), "responses", str(status))
    where = declared.get("$ref", inline)
    schema_ref = f"{BASE}openapi.json{where}/content/application~1json/schema"
    instance = json.loads(body)
    errors = list(_http_validator(schema_ref).iter_errors(instance))
    assert not errors, f"{method} {path} {status} does not match openapi.json: {errors[0].message[:300]}"


@cache
def _http_validator(schema_ref: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": schema_ref}, registry=_registry())


def check_http_error(body: bytes) -> None:
    errors = list(_http_validator(f"{BASE}openapi.json#/components/schemas/Error").iter_errors(json.loads(body)))
    assert not errors, f"not the documented error body: {errors[0].message[:300]}"


async def _on_request_end(
    session: aiohttp.ClientSession, context: Any, params: aiohttp.TraceRequestEndParams
) -> None:
    response = params.response
    if response.status == 101:  # the websocket upgrade: its frames are checked by CheckedWebSocket
        return
    body = await response.read()  # cached: the test reads the same bytes afterwards
    method = params.method.upper()
    if method == "OPTIONS":  # CORS preflights, documented in the info of openapi.json
        assert response.status in (204, 403, 404, 405), f"a preflight answered {response.status}"
        if response.status != 204:
            check_http_error(body)
        return
    check_http_answer(method, params.url.path, response.status, response.content_type, body)


def openapi_trace() -> aiohttp.TraceConfig:
    """A client trace that checks every HTTP answer against openapi.json (see the module doc)."""
    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(_on_request_end)
    return trace
