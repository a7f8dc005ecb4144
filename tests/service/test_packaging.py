"""The wheel carries the web app and the JavaScript client (from its one copy), and serves them installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

from service.web import STATIC_DIR, client_dir

ROOT = Path(__file__).resolve().parents[2]
APP_FILES = ["index.html", "app.css", "app.js", "lobby.js", "game.js", "ui.js"]


def build_wheel(out: Path) -> Path:
    """The wheel of the committed tree, built from a copy of the files git tracks: a build from the
    checkout itself could carry stale files of an earlier ``build/`` and hide a missing one."""
    source = out.parent / "source"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True, capture_output=True, timeout=240,
    )
    (wheel,) = out.glob("donjon-*.whl")
    return wheel


def test_the_wheel_holds_the_app_and_the_client_and_serves_them(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in APP_FILES:
        assert f"service/web/static/{name}" in names, name
    client_files = sorted(p.relative_to(client_dir()).as_posix() for p in client_dir().rglob("*") if p.is_file())
    assert "index.js" in client_files and "audit.js" in client_files and "msgpack.js" in client_files
    for name in client_files:
        if name.endswith((".js", ".d.ts")):
            assert f"service/web/client/{name}" in names, name
    assert not any(name.startswith("clients/") for name in names), "the client must ship once, under service/web/client"
    for data in ["games/castle/data/castle-v1.json", "events/append.lua", "service/contract/openapi.json",
                 "service/contract/asyncapi.json"]:
        assert data in names, f"{data} (package data the service reads) is not in the wheel"
    assert "bench/__init__.py" in names and "bench/store.py" in names, "donjon bench needs the bench package"
    for name in ("package.json", "package-lock.json", "server.mjs", "driver.mjs"):  # --only peers, installed
        assert f"bench/bgio/{name}" in names, name
    assert not any(name.startswith("service/bench/") for name in names), "the bench is not in the runtime package"
    for package in ("games", "events", "projections", "service"):  # the type hints are part of the package (PEP 561)
        assert f"{package}/py.typed" in names, package

    # Installed (unpacked on its own, away from the checkout), the app finds the client inside the package.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DONJON_")}
    env.update(PYTHONPATH=str(site), DONJON_LOG_FORMAT="json")
    where = subprocess.run([sys.executable, "-c", "import service.web as w; print(w.client_dir())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where) == site / "service" / "web" / "client"
    command = [sys.executable, "-m", "service", "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port)]
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(base + "/readyz", process, log)
        for path, local in [("/", STATIC_DIR / "index.html"), ("/app/static/game.js", STATIC_DIR / "game.js"),
                            ("/app/client/index.js", client_dir() / "index.js"),
                            ("/app/client/audit.js", client_dir() / "audit.js")]:
            with urllib.request.urlopen(base + path, timeout=5) as response:
                assert response.status == 200 and response.read() == local.read_bytes(), path
    finally:
        process.terminate()
        process.wait(timeout=20)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer; the service said:\n{log.read_text(errors='replace')[-3000:]}")
