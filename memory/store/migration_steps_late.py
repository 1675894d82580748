"""Migrations v7 to v13 of state.db (`memory.store.migrations` runs them in order): the
index that needs no function of kioku's, retention, schedules, media, erasures, catch-up,
turns by time."""

from __future__ import annotations

import aiosqlite

from memory.store.migration_steps_early import run_script
from memory.store.schema import FTS_TABLE, SCOPE_TOKEN
from memory.store.segment import stored_form

# Turns per read while v7 stores their segmented text.
BACKFILL_ROWS = 5000


# v7: the view and triggers reading `turns.body`, and `group_members`.
V7_OPEN_INDEX = f"""
        DROP TRIGGER turns_fts_delete;
        DROP TRIGGER turns_fts_update;
        DROP VIEW messages_indexed;
        CREATE VIEW messages_indexed AS
            SELECT t.id AS id, coalesce(t.body, t.content) AS body, {SCOPE_TOKEN} AS scope
            FROM turns AS t JOIN sessions AS s ON s.id = t.session_id;
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, coalesce(old.body, old.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = old.session_id;
        END;
        CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, body, session_id ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, coalesce(old.body, old.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = old.session_id;
            INSERT INTO {FTS_TABLE}(rowid, body, scope)
            SELECT new.id, coalesce(new.body, new.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = new.session_id;
        END;
        CREATE TRIGGER sessions_delete BEFORE DELETE ON sessions BEGIN
            DELETE FROM turns WHERE session_id = old.id;
            DELETE FROM participants WHERE session_id = old.id;
        END;
        -- The group chats each person has spoken in, for a search to find its scopes at once.
        CREATE TABLE group_members (
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            PRIMARY KEY (person_id, scope_id)
        ) WITHOUT ROWID;
        INSERT INTO group_members(person_id, scope_id)
            SELECT DISTINCT p.person_id, s.scope_id
            FROM participants AS p JOIN sessions AS s ON s.id = p.session_id
            WHERE s.kind = 'group';
        CREATE TRIGGER participants_group AFTER INSERT ON participants BEGIN
            INSERT OR IGNORE INTO group_members(person_id, scope_id)
            SELECT new.person_id, scope_id FROM sessions
            WHERE id = new.session_id AND kind = 'group';
        END;
        CREATE TRIGGER sessions_scope_fixed BEFORE UPDATE OF scope_id ON sessions
        WHEN new.scope_id IS NOT old.scope_id BEGIN
            SELECT RAISE(ABORT, 'sessions.scope_id cannot change: its turns are indexed under it');
        END;
        """


async def v7_open_index(db: aiosqlite.Connection) -> None:
    """The index's text is stored, so state.db needs nothing of kioku's to be used.

    Each turn keeps its segmented text in `turns.body` (NULL when the content indexes
    as itself), and the view and triggers read it instead of calling
    `kioku_segment()`: a ranked MATCH or a DELETE in the stock `sqlite3` shell works.
    The index is unchanged: it already holds these very terms. Deleting a session
    deletes its turns and who took part first (a trigger, so it holds in a shell
    without `PRAGMA foreign_keys`), while the session's scope is still there to find
    their index rows; a session's scope cannot change, since its turns are indexed
    under it. `group_members` keeps which group chats each person has spoken in (a
    trigger on `participants`), so a search finds a person's scopes without reading
    every session they took part in.
    """
    await db.execute("ALTER TABLE turns ADD COLUMN body TEXT")
    last = 0
    while True:
        rows = await db.execute_fetchall(
            "SELECT id, content FROM turns WHERE id > ? ORDER BY id LIMIT ?", (last, BACKFILL_ROWS)
        )
        if not rows:
            break
        last = rows[-1]["id"]
        bodies = [(body, id_) for id_, content in rows if (body := stored_form(content))]
        await db.executemany("UPDATE turns SET body = ? WHERE id = ?", bodies)
    await run_script(db, V7_OPEN_INDEX)


async def v8_retention(db: aiosqlite.Connection) -> None:
    """How long each person's history is kept, where they chose other than `history.keep_days`.

    `keep_days` 0 is "forever" (a person may keep everything while the default is 90
    days); a person without a row follows the setting.
    """
    await run_script(
        db,
        """
        CREATE TABLE retention (
            person_id TEXT PRIMARY KEY REFERENCES persons(id) ON DELETE CASCADE,
            keep_days INTEGER NOT NULL CHECK (keep_days >= 0)
        ) WITHOUT ROWID;
        """,
    )


async def v9_schedule(db: aiosqlite.Connection) -> None:
    """Each person's time zone, their scheduled jobs, and the ledger of job runs.

    `persons.timezone` is an IANA name (NULL: `schedule.default_timezone`). A job belongs
    to one person and goes to one address (platform, chat, thread) of theirs or of the
    group it was made in; ids are AUTOINCREMENT, so a cancelled job's id never names a
    newer one. `job_runs` holds one row per due time claimed: the row is written, with
    the job's next due time, before anything is sent, and `sent_at` after, so a restart
    knows which runs are still owed.
    """
    await run_script(
        db,
        """
        ALTER TABLE persons ADD COLUMN timezone TEXT;
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            name TEXT,
            kind TEXT NOT NULL CHECK (kind IN ('once', 'cron', 'every')),
            spec TEXT NOT NULL,
            timezone TEXT NOT NULL,
            text TEXT,
            prompt TEXT,
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            thread TEXT NOT NULL DEFAULT '',
            chat_kind TEXT NOT NULL CHECK (chat_kind IN ('dm', 'group')),
            identity TEXT,
            next_run REAL,
            until REAL,
            remaining INTEGER CHECK (remaining IS NULL OR remaining >= 0),
            created_at REAL NOT NULL,
            runs INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            CHECK ((text IS NULL) != (prompt IS NULL))
        );
        CREATE INDEX jobs_due ON jobs(next_run) WHERE next_run IS NOT NULL;
        CREATE INDEX jobs_person ON jobs(person_id);
        CREATE TABLE job_runs (
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            due REAL NOT NULL,
            claimed_at REAL NOT NULL,
            delivery TEXT NOT NULL UNIQUE,
            attempts INTEGER NOT NULL DEFAULT 0,
            retry_at REAL,
            sent_at REAL,
            outcome TEXT,
            PRIMARY KEY (job_id, due)
        ) WITHOUT ROWID;
        CREATE INDEX job_runs_owed ON job_runs(retry_at) WHERE sent_at IS NULL;
        """,
    )


async def v10_media(db: aiosqlite.Connection) -> None:
    """The files kept from the messages people send (photos, voice notes, documents).

    A row per file: the turn that brought it, its session, whose it is (`owner`: the
    person of a DM, or the group conversation `group:...`, since a group's media belongs
    to the group as its history does) and where it lies, relative to `$KIOKU_HOME`. A
    trigger takes a deleted turn's rows along (also in the sqlite3 shell, whose foreign
    keys are off, and for a session, whose trigger deletes its turns); kioku's own
    deletions take the rows first and remove the files after their commit (see
    `memory.media.removal`).
    """
    await run_script(
        db,
        """
        CREATE TABLE media (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL REFERENCES turns(id),
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            owner TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            mime TEXT NOT NULL,
            bytes INTEGER NOT NULL CHECK (bytes >= 0),
            path TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL
        );
        CREATE INDEX media_message ON media(message_id);
        CREATE INDEX media_session ON media(session_id);
        CREATE INDEX media_owner ON media(owner);
        CREATE TRIGGER turns_media_delete AFTER DELETE ON turns BEGIN
            DELETE FROM media WHERE message_id = old.id;
        END;
        """,
    )


async def v11_erasures(db: aiosqlite.Connection) -> None:
    """What left history, for whatever mirrors it outside state.db (memory providers).

    A trigger logs every deleted turn with its session's scope name (the same names as
    `scopes`), so a deletion made anywhere, the sqlite3 shell included, reaches the
    copies; a row without `turn_id` says the whole scope went (a person forgotten). The
    rows hold ids only, never text; the daemon takes them as it passes them on.
    """
    await run_script(
        db,
        """
        CREATE TABLE erasures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope TEXT NOT NULL,
            turn_id INTEGER,
            at REAL NOT NULL
        );
        CREATE TRIGGER turns_erasure AFTER DELETE ON turns BEGIN
            INSERT INTO erasures(scope, turn_id, at)
            SELECT sc.name, old.id, (julianday('now') - 2440587.5) * 86400.0 FROM sessions AS s
            JOIN scopes AS sc ON sc.id = s.scope_id WHERE s.id = old.session_id;
        END;
        """,
    )


async def v12_catch_up(db: aiosqlite.Connection) -> None:
    """What kioku took in but has not stored yet, and where each chat was last read.

    A delivery row with `waiting` (the message, as JSON) is a message kioku confirmed to
    its platform before its turn was stored: answered at the next start if kioku stops
    first. `cursors` hold the newest message seen in each chat (and thread) kioku talks
    in, where a catch-up pass starts reading after a restart or a reconnect.
    """
    await run_script(
        db,
        """
        ALTER TABLE deliveries ADD COLUMN waiting TEXT;
        CREATE INDEX deliveries_waiting ON deliveries(seen_at) WHERE waiting IS NOT NULL;
        CREATE TABLE cursors (
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            thread TEXT NOT NULL,
            message_id TEXT NOT NULL,
            is_direct INTEGER NOT NULL,
            seen_at REAL NOT NULL,
            addressed_at REAL,
            PRIMARY KEY (platform, chat, thread)
        ) WITHOUT ROWID;
        """,
    )


async def v13_turns_by_time(db: aiosqlite.Connection) -> None:
    """Turns in the order they were said, for a search or a listing narrowed to a period.

    Turn ids do not follow time (imported history and caught-up messages keep the time
    they were sent), so without this a period's turns are found only by walking every
    turn, or every match of a word, newer than it.
    """
    await db.execute("CREATE INDEX turns_ts ON turns(ts)")


async def v14_usage(db: aiosqlite.Connection) -> None:
    """What each model call used and cost, charged to the person or group that caused it.

    No foreign keys: a row outlives the session and the history it came from (deleting
    history does not give the money back). `cost_usd` NULL is a model without a price.
    """
    await run_script(
        db,
        """
        CREATE TABLE usage (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            person TEXT,
            conversation TEXT,
            session_id INTEGER,
            kind TEXT NOT NULL CHECK (kind IN ('reply', 'reflection', 'compaction', 'summary',
                'schedule', 'media', 'provider')),
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL
        );
        CREATE INDEX usage_person_at ON usage(person, at);
        CREATE INDEX usage_at ON usage(at);
        """,
    )


async def v15_budgets(db: aiosqlite.Connection) -> None:
    """What a person may spend on the model, and whom the owner was told about.

    `budgets` holds a person's own daily and monthly amounts in US dollars (NULL: the
    configured `budgets.*` applies), read at every turn, so a change applies at once.
    `budget_notices` remembers each period (`day:2026-12-07`, `month:2026-12`, in the
    person's zone) the owner was told that person reached their allowance, so a restart
    does not tell them again.
    """
    await run_script(
        db,
        """
        CREATE TABLE budgets (
            person_id TEXT PRIMARY KEY REFERENCES persons(id) ON DELETE CASCADE,
            daily_usd REAL CHECK (daily_usd IS NULL OR daily_usd >= 0),
            monthly_usd REAL CHECK (monthly_usd IS NULL OR monthly_usd >= 0),
            set_at REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE budget_notices (
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            period TEXT NOT NULL,
            told_at REAL NOT NULL,
            PRIMARY KEY (person_id, period)
        ) WITHOUT ROWID;
        CREATE TRIGGER persons_budgets_delete AFTER DELETE ON persons BEGIN
            DELETE FROM budgets WHERE person_id = old.id;
            DELETE FROM budget_notices WHERE person_id = old.id;
        END;
        """,
    )
