"""Schema versions of vreason's SQLite stores (``PRAGMA user_version``), one mechanism for all of them.

Every store names itself, its current schema version and its DDL (``CREATE … IF NOT EXISTS`` only). On open,
:func:`open_versioned` reads the file's ``user_version``:

* equal to the code's version: the DDL is applied (a no-op on a complete file) and the store opens;
* ``0``: a new file, or a store written before versions were recorded. The latter is recognised by its
  tables (at least one of ``known_tables``; a file with none of them is refused as not this store). Either is
  brought to version 1 by ``adopt`` (create what is missing, add the columns added over time) without
  touching a row, then migrated like an older version, and stamped;
* older than the code's version: ``migrations[v]`` takes it from ``v`` to ``v + 1``, each step one
  transaction that also writes the new version;
* newer than the code's version: :class:`StoreVersionError` (one line naming the file, its version and the
  version this vreason supports; the CLI exits 2). The file is not touched.

A file holding several stores' tables (``results.sqlite``: results and annotations) has one version, that of
the file; each store opening it passes the same ``version``.

Every store turns WAL on first through :func:`set_wal`: two openers of a new file at once can get "database is
locked" from ``PRAGMA journal_mode=WAL`` at once, without SQLite's busy timeout being waited (the switch needs
the file alone; 9 of 300 four-thread races failed so under load), so it is tried again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from vreason.core.errors import VReasonError

WAL_TRIES_S = 30.0
"""How long :func:`set_wal` keeps trying (the stores' busy timeout)."""


def set_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode=WAL`` on ``conn``, tried again while another opener holds the file (see the module)."""
    from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

    def locked(exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)

    for attempt in Retrying(retry=retry_if_exception(locked), stop=stop_after_delay(WAL_TRIES_S),
                            wait=wait_random_exponential(multiplier=0.01, max=0.5), reraise=True):
        with attempt:
            conn.execute("PRAGMA journal_mode=WAL")

Step = Callable[[sqlite3.Connection], None]


class StoreVersionError(VReasonError):
    """A store file has a schema this vreason cannot open (written by a newer vreason, or not this store)."""

    def __init__(self, path: str, message: str):
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


@dataclass(frozen=True)
class Schema:
    """What :func:`open_versioned` needs to know about one store.

    ``name``: shown in messages ("results store"); ``version``: the schema version this code writes;
    ``ddl``: the current schema, statements separated by ``;``, each ``IF NOT EXISTS``; ``known_tables``:
    tables any earlier version of this file had (recognise an unversioned file); ``adopt``: brings an
    unversioned or new file (``user_version`` 0) to version 1 in place (default: apply the DDL); ``migrations``:
    ``{v: step from v to v + 1}`` for ``v >= 1``."""

    name: str
    version: int
    ddl: str
    known_tables: frozenset[str]
    adopt: Step | None = None
    migrations: Mapping[int, Step] = field(default_factory=dict)


def statements(ddl: str) -> list[str]:
    """The statements of a DDL script (no ``;`` inside a statement: DDL of tables and indexes only)."""
    return [s.strip() for s in ddl.split(";") if s.strip()]


def apply_ddl(conn: sqlite3.Connection, ddl: str) -> None:
    """Run ``ddl`` statement by statement (unlike ``executescript``, inside the caller's transaction)."""
    for stmt in statements(ddl):
        conn.execute(stmt)


def add_missing_columns(conn: sqlite3.Connection, table: str, columns: Mapping[str, str]) -> None:
    """``ALTER TABLE … ADD COLUMN`` for each of ``columns`` (name → declaration) ``table`` lacks."""
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    for col, decl in columns.items():
        if col not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    return {r[0] for r in rows}


def _refuse_newer(path: str, schema: Schema, found: int) -> None:
    if found > schema.version:
        raise StoreVersionError(
            path, f"{schema.name} has schema version {found}, newer than this vreason supports "
                  f"({schema.version}); open it with the vreason that wrote it, or a newer one")


def open_versioned(conn: sqlite3.Connection, path: str, schema: Schema) -> int:
    """Check, create, adopt or migrate the store on ``conn`` (see the module's text); returns the version
    the file had when opened (0 for a new or unversioned file). Call after setting the journal mode."""
    found = user_version(conn)
    _refuse_newer(path, schema, found)
    if found == schema.version:
        apply_ddl(conn, schema.ddl)  # tables of another store sharing the file, as before versions
        if conn.in_transaction:
            conn.execute("COMMIT")
        return found
    conn.execute("BEGIN IMMEDIATE")  # one opener creates or migrates; a second waits, then sees it done
    try:
        found = user_version(conn)
        _refuse_newer(path, schema, found)
        current = found
        if current == 0:
            present = _tables(conn)
            if present and not present & schema.known_tables:
                raise StoreVersionError(
                    path, f"not a vreason {schema.name} (unversioned, tables: {', '.join(sorted(present))})")
            (schema.adopt or (lambda c: apply_ddl(c, schema.ddl)))(conn)  # a new file is built the same way
            current = 1
        while current < schema.version:
            step = schema.migrations.get(current)
            if step is None:  # pragma: no cover - a Schema without its step is a programming error
                raise RuntimeError(f"{schema.name}: no migration from schema version {current}")
            step(conn)
            current += 1
        apply_ddl(conn, schema.ddl)
        conn.execute(f"PRAGMA user_version = {int(schema.version)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found

