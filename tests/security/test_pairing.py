"""Pairing and linking through the whole gateway: guessing /link codes is locked out after
five misses for an hour, codes expire, an allowlist platform is silent to strangers, a
disabled platform answers only the owner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.base import Inbound
from agent.build import build_agent
from agent.providers import NoProvider
from config.load import load_settings
from config.paths import ensure_home
from gateway.gateway import Gateway
from gateway.identity import Identities
from memory.access import codes
from memory.access.identities import ensure_person, link_identity, person_for
from memory.store.database import Store
from tests.helpers.recording_adapter import RecordingAdapter

AIKO = "telegram:1"
ATTACKER = "discord:66"
OWNER_ID = "telegram:99"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Rig:
    def __init__(self, gateway: Gateway, store: Store, clock: Clock) -> None:
        self.gateway, self.store, self.clock = gateway, store, clock
        self.outlets: dict[str, RecordingAdapter] = {}
        self.count = 0

    async def say(self, sender: str, text: str) -> str | None:
        """Send a DM; the reply to a command or admission (answered inline), else None."""
        platform, _, chat = sender.partition(":")
        self.count += 1
        inbound = Inbound(platform, chat, sender, text, True, message_id=str(self.count))
        await self.gateway.handle(inbound)
        outlet = self.outlets[platform]
        return await outlet.next_text() if outlet.pending() else None

    async def ask(self, sender: str, text: str) -> str:
        """Send a DM that becomes a turn, and wait for its reply."""
        await self.say(sender, text)
        return await self.outlets[sender.partition(":")[0]].next_text()

    async def replies_to(self, sender: str) -> list[str]:
        """Everything ever sent to `sender`'s chat, once every queued turn has finished."""
        await self.gateway.close()
        platform, _, chat = sender.partition(":")
        return [r.text for r in self.outlets[platform].replies if r.address.chat == chat]

    async def code_for(self, sender: str) -> str:
        reply = await self.say(sender, "/link")
        assert reply is not None
        return reply.split("Your link code: ", 1)[1].split()[0]


@pytest.fixture
def policy_env() -> dict[str, str]:
    return {}


@pytest.fixture
async def rig(
    home: Path, monkeypatch: pytest.MonkeyPatch, policy_env: dict[str, str]
) -> AsyncIterator[Rig]:
    monkeypatch.setenv("KIOKU_OWNER__IDENTITIES", f'["{OWNER_ID}"]')
    for name, value in policy_env.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    ensure_home(home)
    clock = Clock()
    async with await Store.open(home / "state.db") as store:
        agent = build_agent(settings, store, NoProvider("No model is configured."))
        identities = Identities(store, settings, clock=clock)
        outlets: dict[str, RecordingAdapter] = {}
        gateway = Gateway(store, agent, identities, settings, outlets.get)
        rig = Rig(gateway, store, clock)
        for platform in ("telegram", "discord", "slack", "cli"):
            outlets[platform] = RecordingAdapter(gateway.handle, platform)
        rig.outlets = outlets
        await identities.ensure_owner(1000)
        await ensure_person(store, "aiko")
        await link_identity(store, AIKO, "aiko")
        try:
            yield rig
        finally:
            await gateway.close()
            await agent.aclose()


def code_of(reply: str | None) -> str:
    assert reply is not None and "Your link code: " in reply, reply
    return reply.split("Your link code: ", 1)[1].split()[0]


async def test_five_wrong_link_codes_lock_out_even_the_right_one_for_an_hour(rig: Rig) -> None:
    code = code_of(await rig.say(AIKO, "/link"))
    for attempt in range(1, 5):
        reply = await rig.say(ATTACKER, f"/link WRONG{attempt:03d}")
        assert reply is not None and f"{5 - attempt} attempts left" in reply
    assert "locked" in (await rig.say(ATTACKER, "/link WRONG005") or "")
    assert "locked" in (await rig.say(ATTACKER, f"/link {code}") or "")
    assert await person_for(rig.store, ATTACKER) is None
    rig.clock.now += codes.LOCKOUT - 1
    assert "locked" in (await rig.say(ATTACKER, f"/link {code}") or "")


async def test_the_lockout_ends_after_an_hour(rig: Rig) -> None:
    for attempt in range(5):
        await rig.say(ATTACKER, f"/link WRONG{attempt:03d}")
    rig.clock.now += codes.LOCKOUT + 1
    code = code_of(await rig.say(AIKO, "/link"))
    assert (await rig.say(ATTACKER, f"/link {code}") or "").startswith("Linked")


async def test_a_known_person_guessing_codes_is_locked_out_too(rig: Rig) -> None:
    await ensure_person(rig.store, "ben")
    await link_identity(rig.store, "slack:T1:U2", "ben")
    for attempt in range(5):
        await rig.say("slack:T1:U2", f"/link WRONG{attempt:03d}")
    code = code_of(await rig.say(AIKO, "/link"))
    assert "locked" in (await rig.say("slack:T1:U2", f"/link {code}") or "")
    assert await person_for(rig.store, "slack:T1:U2") == "ben"


async def test_a_link_code_expires_after_ten_minutes(rig: Rig) -> None:
    code = code_of(await rig.say(AIKO, "/link"))
    rig.clock.now += codes.LINK_TTL + 1
    reply = await rig.say(ATTACKER, f"/link {code}")
    assert reply is not None and "wrong or has expired" in reply
    assert await person_for(rig.store, ATTACKER) is None


async def test_a_link_code_works_once(rig: Rig) -> None:
    code = code_of(await rig.say(AIKO, "/link"))
    assert (await rig.say("discord:7", f"/link {code}") or "").startswith("Linked")
    assert "wrong or has expired" in (await rig.say(ATTACKER, f"/link {code}") or "")
    assert await person_for(rig.store, ATTACKER) is None


async def test_a_link_code_shown_in_a_group_is_refused(rig: Rig) -> None:
    group = Inbound("telegram", "-5", AIKO, "/link", False, addressed=True, message_id="g1")
    await rig.gateway.handle(group)
    reply = await rig.outlets["telegram"].next_text()
    assert "direct message" in reply and "Your link code" not in reply


async def test_a_stranger_pairing_code_is_short_lived_and_quiet_when_repeated(rig: Rig) -> None:
    first = await rig.say(ATTACKER, "hello")
    assert first is not None and "pairing code" in first
    for _ in range(5):
        assert await rig.say(ATTACKER, "hello?") is None
    rig.clock.now += codes.PAIRING_TTL + 1
    assert "pairing code" in (await rig.say(ATTACKER, "hello again") or "")


STRANGER_MESSAGES = ["hello", "/help", "/start", "/whoami", "/memory", "/search tea", "/link",
                     "/status", "/skills", "/remember x", "/new"]  # fmt: skip


@pytest.mark.parametrize("policy_env", [{"KIOKU_DISCORD__DM_POLICY": "allowlist"}])
async def test_an_allowlist_platform_never_answers_a_stranger(rig: Rig) -> None:
    for text in STRANGER_MESSAGES:
        assert await rig.say(ATTACKER, text) is None, text
    assert await rig.replies_to(ATTACKER) == []
    assert await person_for(rig.store, ATTACKER) is None


@pytest.mark.parametrize("policy_env", [{"KIOKU_DISCORD__DM_POLICY": "allowlist"}])
async def test_an_allowlist_platform_still_lets_a_stranger_redeem_a_link_code(rig: Rig) -> None:
    """The one exception (DESIGN: a code proves they are someone kioku knows)."""
    code = code_of(await rig.say(AIKO, "/link"))
    assert (await rig.say(ATTACKER, f"/link {code}") or "").startswith("Linked")
    assert await person_for(rig.store, ATTACKER) == "aiko"


@pytest.mark.parametrize(
    "policy_env",
    [{"KIOKU_DISCORD__DM_POLICY": "allowlist", "KIOKU_DISCORD__ALLOW": '["discord:7"]'}],
)
async def test_an_allowlist_platform_answers_the_allowed_identity(rig: Rig) -> None:
    assert await rig.ask("discord:7", "hello") == "No model is configured."


@pytest.mark.parametrize("policy_env", [{"KIOKU_TELEGRAM__DM_POLICY": "disabled"}])
async def test_a_disabled_platform_answers_only_the_owner(rig: Rig) -> None:
    for text in STRANGER_MESSAGES:
        assert await rig.say("telegram:55", text) is None, text
        assert await rig.say(AIKO, text) is None, text
    code = code_of(await rig.say("cli:1000", "/link"))
    assert await rig.say("telegram:55", f"/link {code}") is None
    assert (
        await rig.say(OWNER_ID, "/whoami")
        == "You are owner.\nLinked accounts: cli:1000, telegram:99."
    )
    assert await rig.replies_to("telegram:55") == []
    assert await rig.replies_to(AIKO) == []
