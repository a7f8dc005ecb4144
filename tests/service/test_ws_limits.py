"""The websocket's frame limit counts bytes, as documented, whatever the frame's encoding."""

from __future__ import annotations

from tests.service.conftest import hello, receive_until, started_tiny


async def test_the_frame_limit_counts_the_bytes_of_a_text_frame_not_its_characters(make_client):
    client = await make_client(ws_max_frame=512)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    text = '{"type": "command", "id": "wide", "command": {"type": "draw", "args": {"pad": "' + "é" * 300 + '"}}}'
    assert len(text) < 512 < len(text.encode())
    await ws.send_str(text)
    error, _ = await receive_until(ws, lambda frame: frame["type"] == "error")
    assert (error["code"], error["message"]) == (
        "frame_too_large", f"frame of {len(text.encode())} bytes is above the limit of 512"
    )
    assert "id" not in error
