"""The archive's schema, one step per version, for PostgreSQL and SQLite alike.

Three tables, one per concern, and the version table:

- ``games``: one row per archived game: its lobby fields (``status``, ``score``: the listing is
  an index scan of ``games_lobby``), its last version and chain head, when it finished and was
  archived, and its metadata and command-id hashes exactly as the live store held them (one
  msgpack blob each, field -> stored bytes).
- ``events``: one row per event, ``(game_id, version)`` its primary key (a game's events by
  version are one index range), with the stored body and both hashes.
- ``ledger`` (version 2): the public ledger's entries moved out of the live store
  (:mod:`events.archive.ledger`), ``position`` their key, each with the entry's canonical JSON
  and both hashes exactly as the ledger's stream held them, and ``indexed`` 1 when the live
  ledger's game index named this position for the game (``position_of`` answers those).
- ``games.pruned_ms``, ``games.export_ref`` (the pruning step): set when ``donjon archive prune``
  deleted the game's ``events`` rows after writing and verifying its signed export, which is at
  ``export_ref`` (a URI); the row stays as the index (the lobby lists the game, a read of it is
  told where its export is). ``games_unpruned`` finds the games a prune may take, by age.
- ``schema_version``: one row, the version applied; a node refuses an archive at another
  version (:class:`events.archive.base.ArchiveSchemaError`), ``donjon archive migrate`` applies
  the missing steps.

A step is a list of statements run in one transaction; new steps are appended, never edited.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "PRUNED_SINCE", "SCHEMA_VERSION", "VERSION_TABLE", "schema_message", "steps_after"]

_V1 = [
    """CREATE TABLE games (
        game_id     TEXT PRIMARY KEY,
        game        TEXT NOT NULL,
        status      TEXT NOT NULL,
        score       DOUBLE PRECISION NOT NULL,
        version     INTEGER NOT NULL,
        head        TEXT NOT NULL,
        finished_ms BIGINT NOT NULL,
        archived_ms BIGINT NOT NULL,
        meta        {blob} NOT NULL,
        cmds        {blob} NOT NULL
    )""",
    "CREATE INDEX games_lobby ON games (status, score, game_id)",
    """CREATE TABLE events (
        game_id   TEXT NOT NULL,
        version   INTEGER NOT NULL,
        body      {blob} NOT NULL,
        prev_hash TEXT NOT NULL,
        hash      TEXT NOT NULL,
        PRIMARY KEY (game_id, version)
    )""",
]

_V2 = [
    """CREATE TABLE ledger (
        position  BIGINT PRIMARY KEY,
        game_id   TEXT NOT NULL,
        entry     TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash      TEXT NOT NULL,
        indexed   INTEGER NOT NULL
    )""",
    "CREATE INDEX ledger_game ON ledger (game_id)",
]

_PRUNED = [
    "ALTER TABLE games ADD COLUMN pruned_ms BIGINT NULL",
    "ALTER TABLE games ADD COLUMN export_ref TEXT NULL",
    # Only the games a prune may still take, by the age it selects them on (both databases
    # have partial indexes): a prune's scan is one index range however many games it took.
    "CREATE INDEX games_unpruned ON games (finished_ms, game_id) WHERE pruned_ms IS NULL",
]

MIGRATIONS: list[list[str]] = [_V1, _V2, _PRUNED]
"""Step ``n`` (1-based) brings the schema from version ``n - 1`` to ``n``."""

PRUNED_SINCE = MIGRATIONS.index(_PRUNED) + 1
"""The version that has ``games.pruned_ms`` and ``games.export_ref``."""

SCHEMA_VERSION = len(MIGRATIONS)

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"


def steps_after(version: int, blob: str) -> list[tuple[int, list[str]]]:
    """The steps from ``version`` on, each ``(version it reaches, statements)``, with the
    dialect's binary type (``BYTEA``, ``BLOB``) filled in."""
    return [
        (number, [statement.format(blob=blob) for statement in MIGRATIONS[number - 1]])
        for number in range(version + 1, SCHEMA_VERSION + 1)
    ]


def schema_message(found: int, where: str) -> str:
    """What a node says when the archive's schema is not the one it reads."""
    if found < SCHEMA_VERSION:
        return (f"the archive at {where} has schema version {found}, this donjon needs {SCHEMA_VERSION}:"
                " run `donjon archive migrate`")
    return (f"the archive at {where} has schema version {found}, newer than this donjon's {SCHEMA_VERSION}:"
            " run a newer donjon")
