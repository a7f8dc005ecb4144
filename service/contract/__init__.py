"""The machine-readable contract of API v1: ``openapi.json`` (HTTP) and ``asyncapi.json``
(websocket frames), served at ``/openapi.json`` and ``/asyncapi.json``. Written by hand next to
docs/protocol.md and checked against the running service by tests/service/test_contract.py.

Their JSON Schemas are the one hand-written copy of the wire's shapes: the JavaScript client's
types and the tests' shape checks are held to them (tests/service/test_contract.py,
tests/service/test_generators.py, clients/js/test/contract.test.js)."""

PROTOCOL_VERSION = "1.4"
"""The protocol version the documents describe (their ``info.version``, and docs/protocol.md's):
a compatible addition to the protocol raises the minor version here and there, together."""
