"""What `kioku setup` manages: its sections, their settings, the model presets, and the
two lines per platform on where to get a token.

Every setting here can also be given by a flag of `kioku setup` and by the `KIOKU_…`
variable the daemon reads (`files.env_name`), which `--non-interactive` takes its
answers from.
"""

from __future__ import annotations

from dataclasses import dataclass

PLATFORMS = ("telegram", "discord", "slack")
POLICIES = ("pairing", "allowlist", "open", "disabled")
POLICY_HELP = (
    "pairing (the default): a stranger gets a code; you let them in with "
    "`kioku pairing approve CODE`. allowlist: only you and `<platform>.allow`, strangers get "
    "silence. open: anyone who writes. disabled: nobody but you."
)


@dataclass(frozen=True)
class Section:
    """One part of the wizard, kept, changed or removed as a whole on a re-run."""

    name: str
    title: str
    keys: tuple[str, ...]


SECTIONS = (
    Section("model", "Model", ("llm.provider", "llm.model", "llm.base_url", "llm.api_key")),
    Section(
        "telegram",
        "Telegram",
        (
            "telegram.token",
            "telegram.base_url",
            "telegram.base_file_url",
            "telegram.dm_policy",
        ),
    ),
    Section(
        "discord",
        "Discord",
        ("discord.token", "discord.api_base", "discord.gateway_url", "discord.dm_policy"),
    ),
    Section(
        "slack",
        "Slack",
        ("slack.bot_token", "slack.app_token", "slack.base_url", "slack.dm_policy"),
    ),
    Section("matrix", "Matrix", ("matrix.homeserver", "matrix.user_id", "matrix.dm_policy")),
    Section("owner", "Owner", ("owner.identities",)),
    Section("timezone", "Time zone", ("schedule.default_timezone",)),
)
SECTION = {section.name: section for section in SECTIONS}
MANAGED = tuple(key for section in SECTIONS for key in section.keys)
CREDENTIAL = {"telegram": "telegram.token", "discord": "discord.token", "slack": "slack.bot_token"}
ENDPOINTS = {
    "telegram": ("telegram.base_url", "telegram.base_file_url"),
    "discord": ("discord.api_base", "discord.gateway_url"),
    "slack": ("slack.base_url",),
}
"""Another server than the platform's own (a self-hosted Bot API server, a proxy, tests):
never asked for, taken from flags or the environment and written when given."""


@dataclass(frozen=True)
class Preset:
    """A model choice: the provider setting, its endpoint, whether a key is needed."""

    name: str
    provider: str
    base_url: str | None
    needs_key: bool
    where: str


PRESETS = (
    Preset("anthropic", "anthropic", None, True, "console.anthropic.com → API keys"),
    Preset("ollama", "openai", "http://127.0.0.1:11434/v1", False, "none needed (local)"),
    Preset("lmstudio", "openai", "http://127.0.0.1:1234/v1", False, "none needed (local)"),
    Preset("openai", "openai", "https://api.openai.com/v1", True, "platform.openai.com/api-keys"),
    Preset(
        "openrouter", "openai", "https://openrouter.ai/api/v1", True, "openrouter.ai/settings/keys"
    ),
    Preset("other", "openai", None, False, "the server's own page (Enter if it needs none)"),
)
PRESET = {preset.name: preset for preset in PRESETS}

WHERE = {
    "telegram": (
        "In Telegram, talk to @BotFather: /newbot, choose a name and a username,",
        "and copy the token it answers with (123456:ABC…).",
    ),
    "discord": (
        "discord.com/developers/applications → New Application → Bot → Reset Token;",
        "on the same page turn on Message Content Intent (kioku cannot read messages without).",
    ),
    "slack": (
        "api.slack.com/apps → Create New App → From a manifest: paste the one below → Install;",
        "copy the Bot User OAuth Token (xoxb-…), then Basic Information → App-Level Tokens "
        "(connections:write, xapp-…).",
    ),
}


MATRIX_WHERE = (
    "Make an account for kioku on your homeserver (Element: Create account; Synapse:",
    "register_new_matrix_user). kioku logs in once with its password and keeps the token",
    "and its encryption keys in $KIOKU_HOME/matrix/; the password is not written anywhere.",
)


def preset_of(values: dict[str, object]) -> str:
    """The preset matching the configured provider and endpoint (for a default)."""
    if values.get("llm.provider", "anthropic") == "anthropic":
        return "anthropic"
    for preset in PRESETS:
        if preset.provider == "openai" and preset.base_url == values.get("llm.base_url"):
            return preset.name
    return "other"
