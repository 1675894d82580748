"""A platform says a stored message was edited or deleted: history follows the platform.

`amend_said` puts the edited text in the person's stored turn, so history and search
show what the person meant, and keeps nothing of the previous text:

- the turn's `content` and its segmented `body` are rewritten in one UPDATE, whose
  trigger (`turns_fts_update`) takes the old entry out of the full-text index and puts
  the new one in;
- the UPDATE runs inside `scrubbing`, as a deletion does: the old cell and any page it
  frees are zeroed, the index is merged so the old terms leave its pages, and the WAL
  is truncated after the commit;
- the session's title and summary go, as with a deletion: they may quote the old words;
- the turn is logged in the erasure log (`memory.history.erasures`), so the copies kept
  outside state.db (a memory provider's embedding of the exchange, a copy still
  waiting to be sent to one) are deleted as a deleted turn's are.

The files a message brought stay: an edit changes the caption, and the stand-ins in
front of it are kept (`memory.history.stand_ins`). An edit that leaves the stored text
as it was (a link preview added by the platform) changes nothing.

`erase_said` removes the person's turn (not kioku's answer to it) the way /undo does:
`survey`, then `erase(plan, keep_open=True)`, which also removes its kept files and
scrubs the bytes. The platform reports the message gone on its author's behalf: in a
DM the deletion is the DM person's own; in a group, whose history only the owner may
delete from, it is made as the owner, narrowed to the message's author, because the
message is already gone from the group on the platform itself.

Both leave an open session open: the caller rebuilds its live copy from the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from memory.history.erase import Erased, UnknownHistory, erase, survey
from memory.history.erasures import turn_changed
from memory.history.said import Said, matching, said_of
from memory.history.scrub import scrubbing
from memory.history.selection import Asker, Selection
from memory.history.stand_ins import with_text
from memory.store.database import Store
from memory.store.segment import stored_form


@dataclass(frozen=True)
class Unsaid:
    """What `erase_said` removed: the turn, and the deletion's counts. `session_removed`:
    the turn was its session's last, so the session went too."""

    said: Said
    erased: Erased

    @property
    def session_removed(self) -> bool:
        return self.erased.sessions > 0


async def amend_said(
    store: Store,
    platform: str,
    chat: str,
    message_id: str,
    text: str,
    *,
    conversation: str | None = None,
) -> Said | None:
    """Replace the person's text in the stored turn of `message_id` with `text`; the turn
    (the newest, should there be more than one), or None when kioku never stored it
    (nothing is changed then). `conversation` as in `memory.history.said.find_said`."""

    def op(db: sqlite3.Connection) -> tuple[Said | None, bool]:
        rows = matching(db, platform, chat, message_id, conversation)
        changed = [
            (int(row["id"]), int(row["session_id"]), amended)
            for row in rows
            if (amended := with_text(row["content"], text)) != row["content"]
        ]
        if changed:
            with scrubbing(db):
                _rewrite(db, changed)
        return (said_of(rows[-1]) if rows else None), bool(changed)

    said, changed = await store.write(op)
    if changed:
        await store.truncate_wal()
    return said


async def erase_said(
    store: Store,
    platform: str,
    chat: str,
    message_id: str,
    *,
    conversation: str | None = None,
) -> Unsaid | None:
    """Remove the stored turn of `message_id` (with its kept files), as /undo removes one;
    None when kioku never stored it (or it is already gone)."""
    rows = await store.read(lambda db: matching(db, platform, chat, message_id, conversation))
    if not rows:
        return None
    said = said_of(rows[-1])
    turns = tuple(int(row["id"]) for row in rows)
    try:
        plan = await survey(store, *_asked(said, turns))
    except UnknownHistory:
        return None
    return Unsaid(said, await erase(store, plan, keep_open=True))


def _asked(said: Said, turns: tuple[int, ...]) -> tuple[Asker, Selection]:
    """Who deletes the turns of a message its author took back, and what: see the module."""
    if said.person is not None:
        return Asker.of_person(said.person), Selection(messages=turns)
    return Asker.owner(), Selection(messages=turns, person=said.speaker)


def _rewrite(db: sqlite3.Connection, changed: Sequence[tuple[int, int, str]]) -> None:
    """Store each turn's new text (the index follows by trigger), log it as changed, and
    clear the title and summary of the sessions holding them."""
    for turn_id, _, content in changed:
        db.execute(
            "UPDATE turns SET content = ?, body = ? WHERE id = ?",
            (content, stored_form(content), turn_id),
        )
        turn_changed(db, turn_id)
    sessions = sorted({session_id for _, session_id, _ in changed})
    db.execute(
        f"UPDATE sessions SET title = NULL, summary = NULL "
        f"WHERE id IN ({','.join('?' * len(sessions))})",
        sessions,
    )
