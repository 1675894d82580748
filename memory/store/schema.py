"""The state.db layout as the running code uses it: names, connection settings, statements.

Turns are stored compactly in `turns` (the role as a small integer) and read through
the view `messages`, which gives them back as the rest of kioku knows them.

The full-text index is FTS5 *external content* over the view `messages_indexed`,
which reads each turn's indexed text from `turns.body`: the segmented form that
`memory.store.segment` computes at write time, or, when the text indexes as itself
(ASCII, which FTS5 case-folds on its own), NULL and `turns.content` stands in. The
view and the triggers that keep the index in step are plain SQL, so every SQLite
tool (the `sqlite3` shell, DB Browser, Datasette) can read, search and delete from
state.db, and FTS5's `integrity-check` and `rebuild` work anywhere. Each indexed
row also carries its session's scope token (`SCOPE_MARK` + scope id), so a person's
search is narrowed inside FTS5 instead of by a join after the match. The index holds
row ids only (`detail=none`, `columnsize=0`).

Turns are also indexed by `ts` (`turns_ts`): a period's turns are found by their time,
not their id, because ids do not follow time (imported history and messages caught up
after a restart keep the time they were sent). A search or listing narrowed to a period
reads through it (see `memory.search.candidates`).

How an older state.db reaches this layout lives in `memory.store.migrations`, whose steps
are history and stay as released; this module is what today's connections, writes
and searches rely on.
"""

from __future__ import annotations

import functools

from memory.store.records import ROLES

# The `user_version` of a state.db in this layout: one per migration in
# `memory.store.migrations.MIGRATIONS` (a test holds the two together).
SCHEMA_VERSION = 17
FTS_TABLE = "messages_fts"
# How long any connection to state.db waits for another's lock before giving up.
BUSY_TIMEOUT_S = 30.0
# How `turns.role` stores a role: its position in `records.ROLES`.
ROLE_CODES = {role: code for code, role in enumerate(ROLES)}
# How every connection deletes: FAST zeroes a deleted cell inside the page being
# written anyway, at no extra I/O, so no page keeps what was deleted from it. (Debian
# builds SQLite with it ON, which also zeroes each page FTS5 merges away: writes on
# every commit. A deletion of history turns it ON for itself: `memory.history.scrub`.)
SECURE_DELETE = "FAST"
# Set on every connection to state.db.
CONNECTION_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
    f"PRAGMA secure_delete = {SECURE_DELETE}",
)
# The writer connections sync the WAL themselves after each commit, off their SQLite
# thread, and leave checkpoints to a connection of their own (see memory.store.wal). After
# a burst, the WAL file is cut back to 64 MiB when it starts over.
WRITER_PRAGMAS = (
    "PRAGMA synchronous = NORMAL",
    "PRAGMA wal_autocheckpoint = 0",
    f"PRAGMA journal_size_limit = {64 * 1024 * 1024}",
    "PRAGMA cache_size = -65536",
    "PRAGMA temp_store = MEMORY",
)
TURN_COLUMNS = (
    "id, session_id, role, content, speaker_id, ts, tool_name, tool_arguments, tool_result, "
    "platform_message_id"
)
# Values per row of `insert_turns` (TURN_COLUMNS, then `body`) and of `index_turns`.
TURN_VALUES = 11
INDEX_VALUES = 3


@functools.lru_cache(maxsize=256)
def insert_turns(rows: int) -> str:
    """One INSERT of `rows` turns: a single statement is one SQLite step for the batch."""
    row = "(" + ",".join("?" * TURN_VALUES) + ")"
    return f"INSERT INTO turns({TURN_COLUMNS}, body) VALUES " + ",".join([row] * rows)


# What starts a scope token in the index: a private-use character, which no query word
# can hold (a query keeps letters, digits and marks), so typed text never names a scope.
SCOPE_MARK = "\ue000"
# The same token computed in SQL from a `sessions.scope_id` (57344 is `SCOPE_MARK`).
SCOPE_TOKEN = "char(57344) || scope_id"


@functools.lru_cache(maxsize=1024)
def index_turns(rows: int) -> str:
    """The FTS rows of `rows` turns: (id, segmented text, session id), scope looked up."""
    row = f"(?, ?, (SELECT {SCOPE_TOKEN} FROM sessions WHERE id = ?))"
    return f"INSERT INTO {FTS_TABLE}(rowid, body, scope) VALUES " + ",".join([row] * rows)
