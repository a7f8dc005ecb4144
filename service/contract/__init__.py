"""The machine-readable contract of API v1: ``openapi.json`` (HTTP) and ``asyncapi.json``
(websocket frames), served at ``/openapi.json`` and ``/asyncapi.json``. Written by hand next to
docs/protocol.md and checked against the running service by tests/service/test_contract.py."""
