"""The web app: the lobby at ``/``, a game's page at ``/app/games/{id}``, static files under ``/app/``.

Everything is plain files served as they are (no build step, nothing fetched from the internet):
the app's HTML, CSS and ES modules from ``service/web/static/`` at ``/app/static/``, and the
JavaScript client from its one copy, ``clients/js/src/``, at ``/app/client/``. A wheel carries that
copy as the package data of ``service.web.client`` (``setup.py`` maps it); a source checkout serves
it from the repository.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from service.errors import ErrorCode, ServiceError

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


def files_under(root: Path) -> Callable[[web.Request], Awaitable[web.FileResponse]]:
    """A handler serving the files of ``root`` (``{path}`` of the route) and nothing outside it.

    aiohttp's own static routes answer a missing file with an empty ``application/octet-stream``
    404; this one raises ``not_found``, so the error body is the documented JSON one."""
    root = root.resolve()

    async def serve(request: web.Request) -> web.FileResponse:
        try:
            wanted = (root / request.match_info["path"]).resolve()
            found = wanted.is_relative_to(root) and wanted.is_file()
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte: no such file either
            found = False
        if not found:
            raise ServiceError(ErrorCode.NOT_FOUND, f"no file {request.path!r}")
        return web.FileResponse(wanted, headers={"Cache-Control": "no-cache"})

    return serve


def setup_web(app: web.Application) -> None:
    app.router.add_get("/", app_page)
    app.router.add_get("/app/games/{id}", app_page)
    app.router.add_get("/app/static/{path:.+}", files_under(STATIC_DIR))
    app.router.add_get("/app/client/{path:.+}", files_under(client_dir()))
