"""The web app's file routes serve their folder's files and answer anything else with the JSON
``not_found`` body, never a file outside the folder and never a 500."""

from __future__ import annotations

from typing import Any

import pytest


async def test_a_file_of_the_app_and_one_of_the_client_are_served(client: Any) -> None:
    app_file = await client.get("/app/static/app.js")
    client_file = await client.get("/app/client/index.js")
    assert (app_file.status, client_file.status) == (200, 200)
    assert "javascript" in app_file.headers["Content-Type"]
    assert "export" in await client_file.text()


@pytest.mark.parametrize(
    "path",
    [
        "/app/static/no-such-file.js",
        "/app/static/games",  # a folder, not a file
        "/app/static/%2e%2e/__init__.py",  # outside the folder
        "/app/client/%2e%2e/%2e%2e/package.json",
        "/app/client/" + "x" * 300,  # longer than a file name may be
        "/app/static/a%00b.js",
    ],
)
async def test_anything_else_is_the_json_not_found(client: Any, path: str) -> None:
    response = await client.get(path)
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "not_found"
