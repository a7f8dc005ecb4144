"""The fan-out path that ``donjon bench`` measures, beyond the socket's own writes (those are in
``test_ws_connection.py``): the bench's spectator probe reading back what the server frames. (The
node's stream reader is tested on real servers in ``test_ws_flow.py`` and ``test_cluster.py``.)"""

from __future__ import annotations

import json

from bench.raw_sockets import Spectator, client_frame
from service.edge.outbox import FRAMED


def test_the_bench_spectator_reads_what_the_server_frames():
    frames = [{"type": "update", "game": "g", "version": v, "view": {"x": "y" * 200 * v}} for v in (4, 5)]
    spectator = Spectator.__new__(Spectator)
    spectator.buffer = bytearray(b"".join(FRAMED["json"].encode(frame) for frame in frames) + b"\x81\x05ab")
    found = spectator.frames()
    assert [(opcode, json.loads(payload)["version"]) for opcode, payload in found] == [(1, 4), (1, 5)]
    assert spectator.buffer == b"\x81\x05ab"  # an incomplete frame waits for the rest
    assert client_frame(b"hi") == b"\x81\x82\x00\x00\x00\x00hi"
