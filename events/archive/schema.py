"""The archive's schema, one step per version, for PostgreSQL and SQLite alike.

Three tables, one per concern, and the version table:

- ``games``: one row per archived game: its lobby fields (``status``, ``score``: the listing is
  an index scan of ``games_lobby``), its last version and chain head, when it finished and was
  archived, and its metadata and command-id hashes exactly as the live store held them (one
  msgpack blob each, field -> stored bytes).
- ``events``: one row per event, ``(game_id, version)`` its primary key (a game's events by
  version are one index range), with the stored body and its hash as raw bytes; since version
  4 ``prev_hash`` is stored only where the chain breaks (NULL: the hash of the version before,
  or the genesis), :func:`events.archive.base.entries_of_rows` gives the hex back.
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

__all__ = ["LEAN_EVENTS_SINCE", "MIGRATIONS", "PRUNED_SINCE", "SCHEMA_VERSION", "VERSION_TABLE", "schema_message",
           "steps_after"]

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

# Version 4: the events table leaner (fewer heap, index and WAL bytes a game). Each hash is its
# raw bytes ({blob}) instead of its hex text, and ``prev_hash`` is NULL where it is the hash of
# the version before (the genesis, as many zeros as the hash has digits, for version 1): every
# row of a chain that links, so only a break is stored. The game id compares bytewise on
# PostgreSQL ({key}: COLLATE "C"), which the key's index inserts and lookups do without the
# locale's rules. The v2 rows are converted in the step's one transaction; a hash that is not
# lowercase hex is turned into 'not hex' first, which decode() refuses, so the step fails
# (rolled back) rather than change a stored byte. (SQLite's decode() is the archive's own.)
_LEAN_EVENTS = [
    """CREATE TABLE events_lean (
        game_id   {key} NOT NULL,
        version   INTEGER NOT NULL,
        body      {blob} NOT NULL,
        prev_hash {blob},
        hash      {blob} NOT NULL,
        CONSTRAINT events_by_version PRIMARY KEY (game_id, version)
    )""",
    """INSERT INTO events_lean (game_id, version, body, prev_hash, hash)
    SELECT game_id, version, body,
           CASE WHEN (version = 1 AND ltrim(prev_hash, '0') = '' AND length(prev_hash) = length(hash))
                     OR (before_version = version - 1 AND prev_hash = before_hash) THEN NULL
                ELSE decode(CASE WHEN prev_hash = lower(prev_hash) THEN prev_hash ELSE 'not hex' END, 'hex') END,
           decode(CASE WHEN hash = lower(hash) THEN hash ELSE 'not hex' END, 'hex')
    FROM (SELECT game_id, version, body, prev_hash, hash,
                 lag(version) OVER (PARTITION BY game_id ORDER BY version) AS before_version,
                 lag(hash) OVER (PARTITION BY game_id ORDER BY version) AS before_hash
          FROM events) AS v2""",
    "DROP TABLE events",
    "ALTER TABLE events_lean RENAME TO events",
]

MIGRATIONS: list[list[str]] = [_V1, _V2, _PRUNED, _LEAN_EVENTS]
"""Step ``n`` (1-based) brings the schema from version ``n - 1`` to ``n``."""

PRUNED_SINCE = MIGRATIONS.index(_PRUNED) + 1
"""The version that has ``games.pruned_ms`` and ``games.export_ref``."""
LEAN_EVENTS_SINCE = MIGRATIONS.index(_LEAN_EVENTS) + 1
"""The version whose ``events`` keep raw hashes and only the chain's breaks."""

SCHEMA_VERSION = len(MIGRATIONS)

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"


def steps_after(version: int, blob: str, key: str = "TEXT") -> list[tuple[int, list[str]]]:
    """The steps from ``version`` on, each ``(version it reaches, statements)``, with the
    dialect's binary type (``BYTEA``, ``BLOB``) and type of a bytewise-compared text key
    (``TEXT COLLATE "C"``, SQLite's ``TEXT``) filled in."""
    return [
        (number, [statement.format(blob=blob, key=key) for statement in MIGRATIONS[number - 1]])
        for number in range(version + 1, SCHEMA_VERSION + 1)
    ]


def schema_message(found: int, where: str) -> str:
    """What a node says when the archive's schema is not the one it reads."""
    if found < SCHEMA_VERSION:
        return (f"the archive at {where} has schema version {found}, this donjon needs {SCHEMA_VERSION}:"
                " run `donjon archive migrate`")
    return (f"the archive at {where} has schema version {found}, newer than this donjon's {SCHEMA_VERSION}:"
            " run a newer donjon")
