"""Which scope a conversation is in, and whether a provider may see it.

A DM session is its person's scope (`person:<id>`), whatever platform it is on; a group
chat is the group's (`group:<platform>:<chat>`), the same names state.db gives its
scopes, so a deletion logged there (`memory.history.erasures`) names the scope the
providers were given.
"""

from __future__ import annotations

from agent.memory_providers.base import Scope
from config.provider_settings import ProviderSettings
from memory.store.records import Session

EVERYONE = "*"


def scope_of(session: Session) -> Scope:
    if session.kind == "group":
        return Scope("group", f"{session.platform}:{session.chat}")
    assert session.person is not None
    return Scope("person", session.person)


def parse_scope(key: str) -> Scope | None:
    """The scope a state.db scope name stands for; None for a name kioku does not make."""
    kind, _, ident = key.partition(":")
    if kind in ("person", "group") and ident:
        return Scope(kind, ident)  # type: ignore[arg-type]
    return None


def admits(settings: ProviderSettings, scope: Scope) -> bool:
    """Whether the provider's `persons` / `groups` allow list takes `scope`."""
    allowed = settings.persons if scope.kind == "person" else settings.groups
    return EVERYONE in allowed or scope.id in allowed
