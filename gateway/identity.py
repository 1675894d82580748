"""Who is who: which person a message comes from, and whether kioku may answer them.

`admit` reads state.db on every call (one indexed lookup), so `kioku pairing
approve`, `kioku people link` and the rest take effect on the next message, from
any process, with nothing to invalidate. Policies and allowlists come from the
settings, swapped by `reload` on SIGHUP.

Direct messages, by the platform's `dm_policy`:
- the owner's identities are always let in (also under `disabled`);
- `disabled`: nobody else, known or not;
- a linked identity is let in as its person;
- an identity in the platform's `allow` list is let in, as a person created for it;
- `open`: every stranger is let in, as a person created for them;
- `allowlist`: strangers get silence;
- `pairing`: strangers get a pairing code for the owner to approve.
A stranger may always (but under `disabled`) redeem a `/link CODE`: the code proves
they are someone kioku knows. Group messages are let in whatever the DM policy: a
known member as their person, an unknown one as nobody (the session is the group's).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from adapters.base import Inbound
from adapters.platforms import PLATFORM_NAMES
from config.load import ConfigError
from config.platform_settings import PlatformSettings
from config.settings import Settings
from memory.access import codes, identities
from memory.access.identities import ensure_person, link_identity, person_for
from memory.access.people import OWNER, person_dir
from memory.store.database import Store

log = structlog.get_logger("kioku.identity")


class InvalidIdentity(ValueError):
    """Not an identity of the form `platform:id` on a platform kioku knows."""


def validate_identity(identity: str) -> str:
    """Return `identity` if it looks like `telegram:123` (`slack:T1:U2`), else raise."""
    platform, _, rest = identity.partition(":")
    if platform not in PLATFORM_NAMES or not rest or any(c.isspace() for c in identity):
        raise InvalidIdentity(
            f"invalid identity {identity!r}: write it as 'platform:id' with platform one of "
            f"{', '.join(PLATFORM_NAMES)}, e.g. 'telegram:123456789' or 'slack:T0123:U0456'"
        )
    return identity


def link_argument(text: str) -> str | None:
    """The argument of a `/link` (or `/link@bot`) command in `text`; None if it is not one."""
    head, _, rest = text.strip().partition(" ")
    if head.split("@", 1)[0].lower() != "/link":
        return None
    return rest.strip()


@dataclass(frozen=True)
class Admission:
    person: str | None
    reply: str | None
    admitted: bool


SILENCE = Admission(None, None, False)


class Identities:
    """Resolves senders to persons and applies each platform's DM policy."""

    def __init__(
        self, store: Store, settings: Settings, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self._clock = clock
        self._owner_cli: str | None = None
        self._settings = settings
        self._owner_identities: frozenset[str] = frozenset()
        self.reload(settings)

    def reload(self, settings: Settings) -> None:
        """Take new policies, allowlists and owner identities; `ConfigError` keeps the old ones."""
        self._owner_identities = frozenset(_checked(settings))
        self._settings = settings

    async def ensure_owner(self, uid: int) -> None:
        """The owner holds `cli:<uid>` (the daemon's account) and every configured identity."""
        self._owner_cli = f"cli:{uid}"
        await ensure_person(self.store, OWNER)
        for identity in sorted({self._owner_cli, *self._owner_identities}):
            await self._claim_for_owner(identity)

    async def identities_of(self, person: str) -> list[str]:
        return await identities.identities_of(self.store, person)

    async def admit(self, inbound: Inbound) -> Admission:
        sender = inbound.sender
        if sender == self._owner_cli or sender in self._owner_identities:
            await self._claim_for_owner(sender)
            return Admission(OWNER, None, True)
        person = await person_for(self.store, sender)
        if not inbound.is_direct:
            return Admission(person, None, True)
        policy = self._policy(inbound.platform)
        if policy is None or policy.dm_policy == "disabled":
            return SILENCE
        if person is not None:
            return Admission(person, None, True)
        argument = link_argument(inbound.text)
        # A bare /link from a stranger redeems nothing: under `allowlist` it gets silence too.
        if argument is not None and (argument or policy.dm_policy != "allowlist"):
            return Admission(None, await self.link_command(inbound, None, argument), False)
        if sender in policy.allow or policy.dm_policy == "open":
            return Admission(await self._admit_stranger(inbound), None, True)
        if policy.dm_policy == "allowlist":
            log.info("stranger_ignored", platform=inbound.platform, identity=sender)
            return SILENCE
        return await self._pairing(inbound)

    async def link_command(self, inbound: Inbound, person: str | None, argument: str) -> str:
        """`/link` shows a one-time code for `person`; `/link CODE` links this identity.
        Only ever reached from a direct message: the command registry refuses it in groups."""
        if argument.strip():
            return await self._redeem(inbound, person, argument)
        if person is None:
            return (
                "I don't know you here yet. Send /link in a chat where I know you, then send "
                "/link CODE here."
            )
        code = await codes.issue_link_code(self.store, person, self._clock())
        log.info("link_code_issued", person=person, platform=inbound.platform)
        minutes = int(codes.LINK_TTL // 60)
        return (
            f"Your link code: {code}\n"
            f"Within {minutes} minutes, send /link {code} to me from your other account "
            "(another platform or the CLI): it becomes the same person as you, with the same "
            "notes and history. The code works once."
        )

    async def _redeem(self, inbound: Inbound, person: str | None, code: str) -> str:
        sender = inbound.sender
        movable = person is None or await self._empty(person, sender)
        attempt = await codes.redeem_link_code(self.store, sender, code, movable, self._clock())
        match attempt.status:
            case "linked":
                log.info("identity_linked", identity=sender, person=attempt.person, by="link")
                return (
                    f"Linked: this account ({sender}) is now the same person as the one that "
                    "asked for the code. Your notes and history follow you here."
                )
            case "already":
                return "This account is already linked to you; nothing changed."
            case "taken":
                log.info("link_refused", identity=sender, reason="identity has its own data")
                return (
                    "This account already has its own history with me, so I won't merge it "
                    "from a chat. Ask the owner to run: "
                    f"kioku people link {sender} --to {attempt.person}"
                )
            case "locked":
                assert attempt.locked_until is not None
                log.warning("link_locked", identity=sender, until=_clock_text(attempt.locked_until))
                return (
                    "Too many wrong codes: /link is locked for this account until "
                    f"{_clock_text(attempt.locked_until)}."
                )
            case _:
                log.info("link_code_wrong", identity=sender, attempts_left=attempt.attempts_left)
                return (
                    "That code is wrong or has expired. Send /link in a chat where I know you "
                    f"for a new one ({attempt.attempts_left} attempts left before /link is "
                    "locked for an hour)."
                )

    async def _empty(self, person: str, identity: str) -> bool:
        """Whether `person` is an auto-created shell `identity` can leave (nothing else there)."""
        if person == OWNER:
            return False
        folder = person_dir(self._settings.home, person)
        if await asyncio.to_thread(folder.exists):
            return False
        return not await identities.has_more_than(self.store, person, identity)

    async def _admit_stranger(self, inbound: Inbound) -> str:
        person, created = await identities.admit_stranger(
            self.store, inbound.sender, inbound.sender_name, self._clock()
        )
        if created:
            log.info("person_created", person=person, identity=inbound.sender)
        return person

    async def _pairing(self, inbound: Inbound) -> Admission:
        outcome = await codes.request_pairing(
            self.store, inbound.platform, inbound.sender, inbound.sender_name, self._clock()
        )
        if outcome.code is None:
            event = "pairing_refused" if outcome.status == "full" else "pairing_quiet"
            log.info(event, platform=inbound.platform, identity=inbound.sender, why=outcome.status)
            return SILENCE
        log.info(
            "pairing_code_sent",
            platform=inbound.platform,
            identity=inbound.sender,
            again=outcome.status == "resent",
        )
        return Admission(None, pairing_reply(outcome.code), False)

    async def _claim_for_owner(self, identity: str) -> None:
        holder = await person_for(self.store, identity)
        if holder == OWNER:
            return
        if holder is not None:
            log.warning("identity_moved_to_the_owner", identity=identity, previous=holder)
        await link_identity(self.store, identity, OWNER)

    def _policy(self, platform: str) -> PlatformSettings | None:
        policy = getattr(self._settings, platform, None) if platform in PLATFORM_NAMES else None
        if not isinstance(policy, PlatformSettings):
            log.warning("message_from_an_unknown_platform_ignored", platform=platform)
            return None
        return policy


def pairing_reply(code: str) -> str:
    """All a stranger learns: that approval is needed, and the code to approve."""
    return (
        "Hello! I only talk with people my owner has approved.\n"
        f"Your pairing code: {code}\n"
        f"Send it to my owner; they approve it with: kioku pairing approve {code}\n"
        "The code is valid for one hour."
    )


def _checked(settings: Settings) -> list[str]:
    """Owner identities, after checking them and every allow list; `ConfigError` if wrong."""
    problems = []
    for identity in settings.owner.identities:
        try:
            validate_identity(identity)
        except InvalidIdentity as exc:
            problems.append(f"owner.identities: {exc}")
    for platform in PLATFORM_NAMES:
        section: PlatformSettings = getattr(settings, platform)
        for identity in section.allow:
            try:
                validate_identity(identity)
            except InvalidIdentity as exc:
                problems.append(f"{platform}.allow: {exc}")
                continue
            if not identity.startswith(f"{platform}:"):
                problems.append(
                    f"{platform}.allow: {identity!r} is not a {platform} identity; "
                    f"move it to the allow list of its own platform"
                )
    if problems:
        raise ConfigError(
            "The configuration is invalid:\n"
            + "\n".join(f"  - {problem}" for problem in problems)
            + "\nFix these and retry; `kioku config check` validates without starting."
        )
    return list(settings.owner.identities)


def _clock_text(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")
