"""The web app: the lobby at ``/``, a game's page at ``/app/games/{id}``, static files under ``/app/``.

Everything is plain files served as they are (no build step, nothing fetched from the internet):
the app's HTML, CSS and ES modules from ``service/web/static/`` at ``/app/static/``, and the
JavaScript client from its one copy, ``clients/js/src/``, at ``/app/client/``. A wheel carries that
copy as the package data of ``service.web.client`` (``setup.py`` maps it); a source checkout serves
it from the repository.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

__all__ = ["STATIC_DIR", "client_dir", "setup_web"]

STATIC_DIR = Path(__file__).parent / "static"
INDEX = STATIC_DIR / "index.html"


def client_dir() -> Path:
    """Where the JavaScript client's modules are: inside the installed package, else the checkout's."""
    packaged = Path(__file__).parent / "client"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "clients" / "js" / "src"


async def app_page(request: web.Request) -> web.FileResponse:
    """One page for every app route; ``app.js`` routes on the path (lobby or a game's page)."""
    return web.FileResponse(INDEX, headers={"Cache-Control": "no-cache"})


def setup_web(app: web.Application) -> None:
    app.router.add_get("/", app_page)
    app.router.add_get("/app/games/{id}", app_page)
    app.router.add_static("/app/static/", STATIC_DIR, append_version=False)
    app.router.add_static("/app/client/", client_dir(), append_version=False)
