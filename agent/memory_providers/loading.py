"""Finding a provider's class: kioku's own by name, others through an entry point.

A third-party package declares its provider in the `kioku.memory_providers` entry point
group (`name = "package.module:Class"`); the name is the one its `[providers.<name>]`
table uses. Nothing is imported until a provider is enabled, so an installed but unused
provider costs the daemon nothing.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

from agent.memory_providers.base import (
    Host,
    LexicalSearch,
    MemoryProvider,
    Passage,
    ProviderCharge,
    Scope,
    no_charge,
)

ENTRY_POINT_GROUP = "kioku.memory_providers"
BUILTIN = {
    "supermemory": "agent.memory_providers.builtin.supermemory:Supermemory",
    "local_vectors": "agent.memory_providers.builtin.local_vectors:LocalVectors",
}


class NotLoadable(Exception):
    """The provider cannot be loaded; the message says why and what to do."""


def installed() -> dict[str, str]:
    """Every provider kioku could load, by name: where its class lives."""
    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return {**found, **BUILTIN}


def provider_class(name: str) -> type[MemoryProvider]:
    """The class of provider `name`, imported now."""
    target = BUILTIN.get(name)
    if target is None:
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not found:
            raise NotLoadable(
                f"no memory provider named {name!r} is installed: kioku has "
                f"{', '.join(sorted(BUILTIN))}, and a package adds one through the "
                f"{ENTRY_POINT_GROUP!r} entry point group; install it or remove "
                f"[providers.{name}]"
            )
        target = found[0].value
    module_name, _, attribute = target.partition(":")
    try:
        loaded = getattr(importlib.import_module(module_name), attribute)
    except ImportError as exc:
        raise NotLoadable(f"cannot import {target} for provider {name!r}: {exc}") from exc
    except AttributeError as exc:
        raise NotLoadable(f"{module_name} has no {attribute} for provider {name!r}") from exc
    if not (isinstance(loaded, type) and issubclass(loaded, MemoryProvider)):
        raise NotLoadable(
            f"{target} is not a MemoryProvider subclass (agent.memory_providers.base)"
        )
    return loaded


async def no_history(_scope: Scope, _query: str, _limit: int) -> Sequence[Passage]:
    """The lexical search of a provider run outside the daemon on no history (a probe)."""
    return ()


async def prepared(
    name: str,
    home: Path,
    search: LexicalSearch = no_history,
    charge: ProviderCharge = no_charge,
) -> MemoryProvider:
    """A new instance of provider `name` with its `host` set (its own folder under
    `$KIOKU_HOME/providers/`, created 0700), ready for `start`; its model calls are
    recorded by `charge`."""
    provider = provider_class(name)()
    data_dir = home / "providers" / name
    await asyncio.to_thread(data_dir.mkdir, mode=0o700, parents=True, exist_ok=True)
    provider.host = Host(data_dir, search, charge)
    return provider
