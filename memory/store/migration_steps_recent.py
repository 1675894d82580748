"""Migrations v15 on of state.db (`memory.store.migrations` runs them in order): who
turned reflection off, what model calls used and cost, budgets."""

from __future__ import annotations

import aiosqlite

from memory.store.migration_steps_early import run_script


async def v15_reflection_off(db: aiosqlite.Connection) -> None:
    """The people who turned the background review of their memory off (`/memory auto off`).

    A row is a choice made; a person without one follows `agent.reflection.enabled`.
    """
    await run_script(
        db,
        """
        CREATE TABLE reflection_off (
            person_id TEXT PRIMARY KEY REFERENCES persons(id) ON DELETE CASCADE,
            since REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    )


async def v16_usage(db: aiosqlite.Connection) -> None:
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
                'schedule', 'media', 'provider', 'tidy')),
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


async def v17_budgets(db: aiosqlite.Connection) -> None:
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
