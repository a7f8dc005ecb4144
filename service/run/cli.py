"""The ``donjon`` command: ``serve``, ``replay GAME_ID``, ``export GAME_ID``, ``verify FILE``,
``keys list|rotate``, ``archive``, ``bench``.

``donjon serve`` runs the service (the embedded Valkey in ``--data-dir`` unless
``DONJON_REDIS_URL`` names a server); it refuses to start (exit 2) when ``DONJON_CASTLE_DATA``
names a dataset that cannot be used, printing every problem of it. Both commands start the
embedded server from the main thread (``serve`` in the app's startup, which ``run_app`` runs on
the main thread's loop), so on Linux it gets SIGKILL when the process that started it dies,
however that process ends. ``donjon replay GAME_ID`` reads a game straight from the
store (``DONJON_REDIS_URL``, else the embedded server of ``--data-dir``, attached to if a
``donjon serve`` owns the folder, started for the occasion otherwise) and checks it (see
:mod:`service.fairness.replay`); exit 0 when everything checks, 1 on any mismatch, 2 for usage errors
or an unreachable store, 3 when the store holds no game of that id. ``donjon bench`` prints the
performance figures (the ``bench`` package beside ``service``, imported only for that command:
the benchmark uses the service, the service never needs the benchmark).

``donjon export GAME_ID`` writes the export of a finished game signed by the deployment's key
(:mod:`service.fairness.export`, :mod:`service.fairness.deployment_keys`; exit 1 for a game not
finished, 3 for none of that id); ``donjon verify FILE [--key PUBKEY | --keys FILE|URL]`` checks
one with no store (:mod:`service.run.cli_verify`: exit 0 when every check passes and the signer is
pinned, 1 naming the first mismatch, 2 when the file or the keys cannot be read, 3 when every
check passes but the signer is unpinned); ``donjon keys list|rotate`` (:mod:`service.run.cli_keys`).

The CLI writes its results to stdout through :func:`service.run.console.out`; the service itself
only logs. It runs its commands, and serves, as :mod:`service.run.serving` says (uvloop, the
collector settled).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.base import Engine
from service.ops.scrape import WorkerPlace
from service.run.archive_cli import add_archive_parser, archive_main
from service.run.cli_keys import add_keys_parser, keys_command
from service.run.cli_verify import verify_command
from service.run.console import out
from service.run.serving import run, serve_app

if TYPE_CHECKING:  # the store is imported only by the commands that use one
    from events.protocol import Store

__all__ = ["EXIT_MISMATCH", "EXIT_NOT_FOUND", "EXIT_OK", "EXIT_UNAVAILABLE", "main"]

EXIT_OK = 0
EXIT_MISMATCH = 1
"""``replay`` / ``verify``: a check failed; ``export``: the game has not finished; ``replay`` /
``export``: the game was pruned from the archive (the message names its export)."""
EXIT_UNAVAILABLE = 2
"""A usage error, a setting that does not parse, a file that cannot be read, or no store."""
EXIT_NOT_FOUND = 3
"""``replay`` / ``export``: the store holds no game of that id (nothing to check, nothing wrong)."""

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="donjon", description="Event-sourced board game service.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP + websocket service")
    serve.add_argument("--host", help="bind address (default 127.0.0.1, env DONJON_HOST)")
    serve.add_argument("--port", type=int, help="port (default 8080, env DONJON_PORT)")
    serve.add_argument("--data-dir", type=Path, help="embedded server data folder (default ./donjon-data)")
    serve.add_argument(
        "--fsync", choices=("always", "everysec"), help="embedded server: fsync every write (default) or every second"
    )
    serve.add_argument("--log-format", choices=("auto", "json", "console"), help="log lines (default auto)")
    serve.add_argument(
        "--workers",
        type=int,
        help="processes serving the port, each a node (default: one per core, env DONJON_WORKERS)",
    )

    replay = sub.add_parser("replay", help="re-fold and verify one game from the store")
    replay.add_argument("game_id")
    replay.add_argument("--data-dir", type=Path, help="embedded server data folder (default ./donjon-data)")
    replay.add_argument("--json", action="store_true", help="print the report as JSON")

    export = sub.add_parser("export", help="the signed export of a finished game, from the store")
    export.add_argument("game_id")
    export.add_argument("--data-dir", type=Path, help="embedded server data folder (default ./donjon-data)")
    export.add_argument("-o", "--output", type=Path, help="write it to this file (default: stdout)")

    verify = sub.add_parser("verify", help="check a game export offline: signature, chain, seed, every draw")
    verify.add_argument("file", type=Path)
    verify.add_argument("--key", help="a public key (64 hex digits, from GET /keys) the file must be signed by")
    verify.add_argument("--keys", help="a saved GET /keys (a file, or its http(s) URL) that must list the signer")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.add_argument("--ledger", help="a saved GET /ledger answer, or the ledger's URL: the game must be in it")
    add_keys_parser(sub)

    add_archive_parser(sub)

    bench = sub.add_parser("bench", help="measure the service and the engines")
    bench.add_argument("--quick", action="store_true", help="small runs (a minute or less)")
    bench.add_argument(
        "--only",
        default="",
        help="comma-separated sections: service,workers,replay,bots,store,engines,games,memory,archive,cluster,"
        "peers"
        " (default: all but cluster and peers)",
    )
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.add_argument(
        "--runs", type=int, default=1, help="repeat the sections N times and end with each figure's N values"
    )
    return parser


def main(argv: Sequence[str] | None = None, engines: Mapping[str, Engine[Any]] | None = None) -> int:
    """Entry point of the console script; ``engines`` lets tests serve the tiny game."""
    args = _parser().parse_args(argv)
    from service.ops.settings import Settings, SettingsError

    try:
        settings = Settings.from_env(
            host=getattr(args, "host", None),
            port=getattr(args, "port", None),
            data_dir=getattr(args, "data_dir", None),
            fsync=getattr(args, "fsync", None),
            log_format=getattr(args, "log_format", None),
            workers=getattr(args, "workers", None),
        )
    except SettingsError as exc:
        sys.stderr.write(f"donjon: {exc}\n")
        return 2
    if args.command == "serve":
        return _serve(settings, engines)
    if args.command == "replay":
        return run(_replay(settings, args.game_id, args.json, engines))
    if args.command == "export":
        return run(_export(settings, args.game_id, args.output))
    if args.command == "verify":
        return verify_command(args.file, args.key, args.keys, args.json, engines, args.ledger)
    if args.command == "archive":
        return run(archive_main(settings, args, _with_store, engines))
    if args.command == "keys":
        return run(keys_command(settings, args, _with_store))
    if args.command == "bench":
        from bench import run_bench

        sections = [s.strip() for s in args.only.split(",") if s.strip()]
        return run(
            run_bench(quick=args.quick, sections=sections, as_json=args.json, engines=engines, runs=args.runs)
        )
    return 2  # pragma: no cover - argparse refuses other commands


def _serve(settings: Any, engines: Mapping[str, Engine[Any]] | None) -> int:
    """One process (``--workers 1``), or a supervisor of N worker processes (:mod:`service.run.workers`)."""
    from events.errors import DataDirInUse
    from service.ops.logs import configure_logging
    from service.run.workers import Supervisor, default_workers

    workers = settings.workers or default_workers()
    if workers == 1:
        return _serve_one(settings, engines)
    configure_logging(settings.log_format, settings.log_level, node_id=settings.node_id)
    try:
        return Supervisor(
            settings, workers, lambda worker, place: _serve_one(worker, engines, place=place)
        ).run()
    except DataDirInUse:
        _data_dir_in_use(settings)
        return 2


def _serve_one(
    settings: Any,
    engines: Mapping[str, Engine[Any]] | None,
    *,
    place: WorkerPlace | None = None,
) -> int:
    from events.archive import ArchiveSchemaError
    from events.errors import DataDirInUse
    from service.ops.logs import configure_logging, get_logger
    from service.ops.settings import SettingsError
    from service.run.app import create_app

    configure_logging(settings.log_format, settings.log_level, node_id=settings.node_id)
    try:
        app = create_app(settings, engines, worker=place)
    except SettingsError as exc:  # an operator dataset that cannot be used: refuse to start
        sys.stderr.write(f"donjon: {exc}\n")
        return 2
    log = get_logger()

    def announce() -> None:  # once the socket is bound
        log.info(
            "serve.listening",
            url=f"http://{settings.host}:{settings.port}",
            store="external" if not settings.embedded else f"embedded:{settings.data_dir}",
        )

    try:
        return serve_app(
            app, host=settings.host, port=settings.port, announce=announce,
            reuse_port=None if place is None or place.routed else True,  # a worker the kernel hands connections to
            handed=None if place is None or not place.routed else place.route_socket,
        )
    except DataDirInUse:
        _data_dir_in_use(settings)
        return 2
    except (SettingsError, ArchiveSchemaError) as exc:  # a keyring this seed key does not open; an archive not migrated
        sys.stderr.write(f"donjon: {exc}\n")
        return 2
    except OSError as exc:
        log.error("serve.failed", error=str(exc))
        return 1


def _data_dir_in_use(settings: Any) -> None:
    sys.stderr.write(
        f"donjon: the data folder {str(settings.data_dir)!r} is in use by another running donjon serve;"
        " stop that one, or give this one another --data-dir (DONJON_DATA_DIR)\n"
    )


async def _with_store(settings: Any, work: Callable[[Store], Awaitable[int]]) -> int:
    """``work(store)`` on the store the settings name (``DONJON_REDIS_URL``, else the embedded
    server of the data folder, attached to or started for the occasion); 2 when there is none."""
    from events.archive.base import GamePruned
    from events.archive.reading import ArchivingStore
    from events.embedded import EmbeddedServer
    from events.errors import StoreError
    from service.run.archive_cli import attach_archive

    server = None
    try:
        if settings.embedded:
            if not Path(settings.data_dir).is_dir():  # noqa: ASYNC240 - one stat, before anything runs
                sys.stderr.write(f"donjon: no data folder {str(settings.data_dir)!r}\n")
                return 2
            # Started from this (the main) thread, so the server gets its parent-death signal
            # and cannot outlive a killed command; only the wait for it to answer is async.
            server = EmbeddedServer(settings.data_dir, settings.fsync, attach=True)
            await server.start_async()
            url = server.url
        else:
            url = settings.redis_url.reveal()
        store = await ArchivingStore.connect(url, cluster=False if settings.embedded else settings.cluster)
        archive = None
        try:
            archive = await attach_archive(store, settings)  # archived games read as live ones
            return await work(store)
        finally:
            await store.close()
            if archive is not None:
                await archive.close()
    except GamePruned as exc:  # replay, export of a game whose events are in its export only
        sys.stderr.write(f"donjon: {exc}\n")
        return EXIT_MISMATCH
    except StoreError as exc:
        sys.stderr.write(f"donjon: the event store is unavailable: {exc}\n")
        return 2
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)


async def _replay(settings: Any, game_id: str, as_json: bool, engines: Mapping[str, Engine[Any]] | None) -> int:
    from service.fairness.replay import replay_game
    from service.ops.settings import SettingsError
    from service.run.app import node_vault
    from service.run.served import served_engines

    try:
        engines = served_engines(settings, engines)
        vault = node_vault(settings)
    except SettingsError as exc:
        sys.stderr.write(f"donjon: {exc}\n")
        return 2

    async def replay(store: Store) -> int:
        report = await replay_game(store, game_id, engines, vault)
        if as_json:
            out(json.dumps(report.as_dict(), indent=2))
        elif not report.found:
            sys.stderr.write(f"donjon: {report.message}\n")
        else:
            _print_report(report)
        return {"ok": EXIT_OK, "mismatch": EXIT_MISMATCH, "not_found": EXIT_NOT_FOUND}[report.outcome]

    return await _with_store(settings, replay)


async def _export(settings: Any, game_id: str, output: Path | None) -> int:
    """``donjon export``: the signed export of a finished game, to ``output`` or stdout."""
    from service.errors import ServiceError
    from service.fairness.export import export_file_bytes, signed_export
    from service.ops.logs import logs_to_stderr
    from service.ops.settings import SettingsError
    from service.play.game_service import now_ms
    from service.run.app import node_vault, open_deployment_keys

    logs_to_stderr(settings)  # stdout may be the export
    try:
        vault = node_vault(settings)
    except SettingsError as exc:
        sys.stderr.write(f"donjon: {exc}\n")
        return 2

    async def export(store: Store) -> int:
        meta = await store.get_meta(game_id)
        if meta is None:
            sys.stderr.write(f"donjon: no game {game_id!r} in the store\n")
            return EXIT_NOT_FOUND
        try:
            key = await (await open_deployment_keys(settings, store, vault, now_ms)).signer()  # type: ignore[arg-type]
        except SettingsError as exc:
            sys.stderr.write(f"donjon: {exc}\n")
            return 2
        try:
            signed = await signed_export(store, game_id, str(meta.get("game", "")), key, now_ms())
        except ServiceError as exc:  # not_finished
            sys.stderr.write(f"donjon: {exc.message}\n")
            return 1
        if output is None:
            out(json.dumps(signed, indent=1, ensure_ascii=False))
        else:
            await asyncio.to_thread(output.write_bytes, export_file_bytes(signed))
        return 0

    return await _with_store(settings, export)


def _print_report(report: Any) -> None:
    out(f"game      {report.game_id} ({report.game or '?'})")
    out(f"version   {report.version}   status {report.status or '?'}")
    out(f"seed      {report.seed_source}   batches re-run {report.batches_checked}")
    out(f"fold      {report.events_per_second:,.0f} events/s")
    if report.summary is not None:
        out(f"summary   {json.dumps(report.summary, sort_keys=True)}")
    if report.ok:
        out("OK: chain, decode, fold, seed commitment and decisions all check")
    else:
        for problem in report.problems:
            out(f"MISMATCH  {problem}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
