"""The one settings model, read once at start-up from env, `.env` and `config.toml`.

Sections grow with the features that need them; every section is a plain pydantic
model so that a typo in `config.toml` is reported instead of silently ignored.
pydantic-settings reads the sources (`Settings.settings_customise_sources`); its import
is paid only by the commands that read settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from config.budget_settings import BudgetSettings
from config.media_settings import MediaSettings, SttSettings
from config.metrics_settings import MetricsSettings
from config.paths import kioku_home
from config.platform_settings import (
    CliSettings,
    DiscordSettings,
    MatrixSettings,
    SlackSettings,
    TelegramSettings,
)
from config.price_settings import ModelPrice, is_local_endpoint, price_of
from config.provider_settings import ProvidersSettings
from config.section import Section
from config.variables import KiokuDotEnvSource, KiokuEnvSource
from inputs.durations import parse_duration


class NotesSettings(Section):
    """Layer 1: the bounded MEMORY.md / USER.md files of each person."""

    memory_limit: int = Field(2200, ge=200, le=100_000, description="MEMORY.md size cap (chars)")
    user_limit: int = Field(1375, ge=200, le=100_000, description="USER.md size cap (chars)")
    tidy_at: float = Field(
        0.8,
        gt=0,
        le=1,
        description="tidy a file in the background once it holds this share of its cap",
    )
    tidy_every: str = Field(
        "7d", description='and once this long has passed since its last tidy; "0": only when full'
    )

    @field_validator("tidy_every")
    @classmethod
    def _a_duration_or_never(cls, value: str) -> str:
        if value.strip() != "0":
            parse_duration(value)
        return value

    @property
    def tidy_every_seconds(self) -> float | None:
        """How often a file that changed is tidied however full it is; None: never by age."""
        return None if self.tidy_every.strip() == "0" else parse_duration(self.tidy_every)


class MemorySettings(Section):
    notes: NotesSettings = NotesSettings()


class LLMSettings(Section):
    """The model provider; without an API key the daemon runs with memory features only."""

    provider: Literal["anthropic", "openai"] = "anthropic"
    model: str = "claude-sonnet-4-5"
    base_url: str | None = None
    api_key: SecretStr | None = None
    max_tokens: int = Field(4096, ge=1, le=1_000_000, description="reply length cap (tokens)")
    context_window: Annotated[int, Field(ge=1024)] | Literal["auto"] = Field(
        200_000,
        description="the model's context size (tokens); compaction keys on it; auto: "
        "what a local server announces, asked at start",
    )
    timeout: float = Field(60.0, gt=0, description="per request: seconds without data")
    deadline: float = Field(300.0, gt=0, description="per model call, retries included (s)")
    max_retries: int = Field(4, ge=0, le=20, description="on 429 / overloaded / 5xx / network")
    vision: bool | Literal["auto"] = Field(
        "auto", description="the model reads images; auto: known by the provider and model name"
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per million tokens by model name, over kioku's shipped prices",
    )

    def price(self, model: str) -> ModelPrice | None:
        """What a call to `model` costs here (see `config.price_settings.price_of`): free
        on an OpenAI-compatible endpoint on this machine or the private network."""
        local = self.provider == "openai" and is_local_endpoint(self.base_url)
        return price_of(model, self.prices, local=local)

    @property
    def known_window(self) -> int:
        """`context_window`, or for "auto" before the server is asked (or when it says
        nothing) a safe guess: Claude's 200,000; 8192 for a local server, which compacts
        early rather than letting the server cut the start of the prompt."""
        if self.context_window != "auto":
            return self.context_window
        return 200_000 if self.provider == "anthropic" else 8192


class CompactionSettings(Section):
    """Long sessions: the middle turns are summarised once the context passes `threshold`."""

    threshold: float = Field(
        0.6, gt=0.05, lt=0.95, description="fraction of llm.context_window that triggers it"
    )
    keep_first: int = Field(2, ge=0, le=20, description="opening messages kept verbatim")
    keep_last: int = Field(8, ge=2, le=100, description="latest messages kept verbatim")


class ReflectionSettings(Section):
    """The background review that keeps notes (and skills) up to date."""

    enabled: bool = True
    every_user_turns: int = Field(10, ge=1, le=1000)
    max_rounds: int = Field(4, ge=1, le=20, description="tool rounds per review")
    timeout: float = Field(120.0, gt=0, description="seconds per review")


class AgentSettings(Section):
    max_tool_rounds: int = Field(12, ge=1, le=100, description="then a final answer is forced")
    group_private_notes: bool = Field(
        False, description="inject the speaker's private notes in group conversations"
    )
    search_budget_chars: int = Field(
        6000, ge=500, le=100_000, description="session_search result size cap"
    )
    compaction: CompactionSettings = CompactionSettings()
    reflection: ReflectionSettings = ReflectionSettings()


class SkillsSettings(Section):
    """Layer 3: the skills the agent writes for each person, and the owner's shared ones."""

    write_approval: bool = Field(
        False, description="the agent's skill writes wait for `kioku skills approve ID`"
    )
    max_skill_chars: int = Field(
        100_000, ge=1000, le=1_000_000, description="SKILL.md size cap (chars)"
    )
    max_file_bytes: int = Field(
        1_048_576, ge=1024, le=64 * 1_048_576, description="supporting file size cap (bytes)"
    )
    index_max_chars: int = Field(
        4000, ge=200, le=100_000, description="skills index size cap in the system prompt (chars)"
    )


class LogSettings(Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "console", "json"] = Field(
        "auto", description="auto: readable on a terminal, JSON lines otherwise"
    )


class OwnerSettings(Section):
    """The person `owner`: the account running the daemon plus identities named here."""

    identities: list[str] = Field(default_factory=list)


class CatchUpSettings(Section):
    """What kioku reads, on start and after each reconnect, of what was said while it was away."""

    max_age: str = Field(
        "24h", description='older missed messages are stored, not answered; "0" turns catch-up off'
    )
    max_messages: int = Field(
        50, ge=1, le=1000, description="missed messages read per conversation in one catch-up"
    )

    @field_validator("max_age")
    @classmethod
    def _a_duration_or_off(cls, value: str) -> str:
        if value.strip() != "0":
            parse_duration(value)
        return value

    @property
    def max_age_seconds(self) -> float:
        """How old a missed message may be and still be answered; 0: catch-up is off."""
        return 0.0 if self.max_age.strip() == "0" else parse_duration(self.max_age)


class GatewaySettings(Section):
    """How the daemon shares its time between conversations and how it stops."""

    grace_period: float = Field(
        20.0, ge=0, le=600, description="on SIGTERM: seconds for turns in flight to finish"
    )
    max_parallel_turns: int = Field(
        16, ge=1, le=1000, description="conversations answered at once; the rest wait in line"
    )
    max_queued_per_conversation: int = Field(
        50, ge=1, le=10_000, description="messages waiting in one conversation before refusing"
    )
    catch_up: CatchUpSettings = Field(default_factory=CatchUpSettings)


class SessionSettings(Section):
    """When a conversation's session ends and a fresh one (new prompt, new notes) begins."""

    idle_timeout: float = Field(
        21_600, gt=0, description="seconds without a message before the session closes (6 h)"
    )
    daily_reset_hour: int | None = Field(
        None, ge=0, le=23, description="local hour at which every open session closes"
    )
    dm_scope: Literal["chat", "person"] = Field(
        "chat", description="chat: one session per DM chat; person: one across all their DMs"
    )


class McpServerSettings(Section):
    """One MCP server the owner trusts: a command (stdio) or a URL (streamable HTTP)."""

    command: str | None = Field(None, description="program to start (stdio transport)")
    args: list[str] = Field(default_factory=list, description="its arguments")
    env: dict[str, str] = Field(default_factory=dict, description="extra environment for it")
    url: str | None = Field(None, description="streamable HTTP endpoint (instead of command)")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers, e.g. auth")
    enabled: bool = True
    timeout: float = Field(30.0, gt=0, le=3600, description="seconds per tool call")
    allow: list[str] = Field(
        default_factory=lambda: ["owner"], description="persons who may use its tools"
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")
        return self


class McpSettings(Section):
    """Tools from Model Context Protocol servers, `[mcp.servers.<name>]` each."""

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)


class WebSettings(Section):
    """The local web page where people read and correct what kioku remembers."""

    enabled: bool = True
    listen: str = Field("127.0.0.1:8765", description="host:port the page is served on")
    public_url: str | None = Field(
        None, description="the address people open (behind a proxy); default http://<listen>"
    )


class HistorySettings(Section):
    """How long past conversations are kept (a person may choose otherwise: `history keep`)."""

    keep_days: int | None = Field(
        None, ge=1, le=100_000, description="delete closed sessions older than this; unset: forever"
    )


class BackupSettings(Section):
    """The daemon's own backups of the data folder (off unless `every` is set)."""

    every: str | None = Field(
        None, description='how often the daemon makes a backup ("1d", "12h"); unset: never'
    )
    keep: int = Field(7, ge=1, le=10_000, description="backups kept in `dir`; older ones go")
    dir: Path | None = Field(None, description="where they go; default <home>/backups")

    @field_validator("every")
    @classmethod
    def _a_duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)
        return value

    @property
    def every_seconds(self) -> float | None:
        return None if self.every is None else parse_duration(self.every)


class ScheduleSettings(Section):
    """Reminders and scheduled tasks (the `schedule` tool, `/reminders`, `kioku schedule`)."""

    default_timezone: str | None = Field(
        None, description="IANA zone of persons who set none (e.g. Asia/Tokyo); unset: the server's"
    )
    min_interval: str = Field("15m", description="shortest `every`, closest cron runs")
    grace: str = Field("6h", description="a one-shot missed while kioku was down is sent this late")
    retry: str = Field("30s", description="first retry of a failed send; doubles, at most 1 h")
    max_jobs_per_person: int = Field(50, ge=1, le=100_000)
    groups: bool = Field(False, description="persons other than the owner may schedule in groups")

    @field_validator("min_interval", "grace", "retry")
    @classmethod
    def _a_duration(cls, value: str) -> str:
        parse_duration(value)
        return value

    @field_validator("default_timezone")
    @classmethod
    def _a_zone(cls, value: str | None) -> str | None:
        if value is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder
                raise ValueError(
                    f"{value!r} is not a time zone; give an IANA name such as Europe/Paris"
                ) from None
        return value


class Settings(BaseSettings):
    """Effective configuration. Sources, highest first: keyword arguments, environment,
    `.env`, `config.toml`, each table merged key by key (`settings_customise_sources`)."""

    model_config = SettingsConfigDict(
        env_prefix="KIOKU_",
        env_nested_delimiter="__",
        env_ignore_empty=True,
        extra="forbid",
        validate_default=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """kioku's own environment and `.env` sources (`config.variables`), then the file;
        no secrets directory."""
        home = kioku_home()
        return (
            init_settings,
            KiokuEnvSource(settings_cls),
            KiokuDotEnvSource(settings_cls, home / ".env"),
            TomlConfigSettingsSource(settings_cls, toml_file=home / "config.toml"),
        )

    @property
    def home(self) -> Path:
        """The data folder; fixed by `KIOKU_HOME` since the config file lives inside it."""
        return kioku_home()

    log: LogSettings = LogSettings()
    owner: OwnerSettings = OwnerSettings()
    memory: MemorySettings = MemorySettings()
    llm: LLMSettings = LLMSettings()
    agent: AgentSettings = AgentSettings()
    skills: SkillsSettings = SkillsSettings()
    gateway: GatewaySettings = GatewaySettings()
    sessions: SessionSettings = SessionSettings()
    cli: CliSettings = CliSettings()
    telegram: TelegramSettings = TelegramSettings()
    discord: DiscordSettings = DiscordSettings()
    slack: SlackSettings = SlackSettings()
    matrix: MatrixSettings = MatrixSettings()
    mcp: McpSettings = McpSettings()
    web: WebSettings = WebSettings()
    metrics: MetricsSettings = MetricsSettings()
    history: HistorySettings = HistorySettings()
    backup: BackupSettings = BackupSettings()
    schedule: ScheduleSettings = ScheduleSettings()
    media: MediaSettings = MediaSettings()
    stt: SttSettings = SttSettings()
    providers: ProvidersSettings = ProvidersSettings()
    budgets: BudgetSettings = BudgetSettings()
