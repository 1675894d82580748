"""The memory providers' settings (`[providers.<name>]`): the built-in ones, and the keys of
a third-party provider kept as given, its credentials masked."""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

SECRET_NAME = re.compile(r"key|token|secret|password|credential", re.IGNORECASE)


class ProviderSettings(BaseModel):
    """One external memory provider (`[providers.<name>]`); a third-party provider's own
    keys are kept as given and handed to it (`extra`), credentials among them masked."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    enabled: bool = False
    persons: list[str] = Field(
        default_factory=lambda: ["*"], description='persons whose memory it sees; "*": all'
    )
    groups: list[str] = Field(
        default_factory=list,
        description='group chats it sees, as "<platform>:<chat>"; "*": all; none by default',
    )
    timeout: float = Field(10.0, gt=0, le=600, description="seconds per background call")

    @model_validator(mode="after")
    def _mask_credentials(self) -> ProviderSettings:
        """A third-party provider's own keys named like credentials (`api_key`, `token`,
        `password`…) are secrets: masked in `kioku config show` and in every log line."""
        for key, value in (self.model_extra or {}).items():
            if isinstance(value, str) and SECRET_NAME.search(key):
                self.model_extra[key] = SecretStr(value)  # type: ignore[index]
        return self


class SupermemorySettings(ProviderSettings):
    """Supermemory through its Python SDK; each scope is one container tag."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    api_key: SecretStr | None = Field(None, description="the Supermemory API key")
    base_url: str | None = Field(None, description="an API base other than Supermemory's")


class LocalVectorsSettings(ProviderSettings):
    """Semantic recall with no cloud: embeddings from an OpenAI-compatible endpoint,
    vectors in a database of its own under $KIOKU_HOME."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    base_url: str = Field("http://127.0.0.1:11434/v1", description="the /v1/embeddings server")
    model: str = Field("nomic-embed-text", description="the embedding model")
    api_key: SecretStr | None = Field(None, description="the embeddings server's key")
    batch: int = Field(64, ge=1, le=2048, description="texts per embeddings request")
    cache_mb: int = Field(
        256, ge=0, le=65_536, description="vectors of recently searched scopes kept in memory (MB)"
    )


class ProvidersSettings(BaseModel):
    """External memory providers beside the built-in layers (`agent/memory_providers/`):
    the shared limits, then one table per provider, built-in or third-party."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)
    EXTRA_TABLES: ClassVar[type[BaseModel]] = ProviderSettings
    """What a third-party provider's table is, for the environment's `KIOKU_PROVIDERS__<NAME>__…`
    (config.variables decodes its lists as JSON by it)."""

    recall_timeout: float = Field(
        1.5, gt=0, le=30, description="a provider slower than this is skipped for the turn (s)"
    )
    recall_chars: int = Field(
        4000, ge=100, le=100_000, description="recalled text added to one message, at most"
    )
    queue_limit: int = Field(
        10_000, ge=10, le=1_000_000, description="mirror calls waiting per provider, at most"
    )
    sync_every: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="how often the daemon looks for history deleted outside it (seconds)",
    )
    supermemory: SupermemorySettings = SupermemorySettings()
    local_vectors: LocalVectorsSettings = LocalVectorsSettings()

    @model_validator(mode="after")
    def _plugins_are_tables(self) -> ProvidersSettings:
        for name, value in (self.model_extra or {}).items():
            if not isinstance(value, ProviderSettings):
                if not isinstance(value, dict):
                    raise ValueError(
                        f"providers.{name} must be a table of that provider's settings, "
                        f"such as [providers.{name}] enabled = true"
                    )
                self.model_extra[name] = ProviderSettings.model_validate(value)
        return self

    def configured(self) -> dict[str, ProviderSettings]:
        """Every provider's settings by name: the built-in ones, then third-party ones."""
        plugins = {name: value for name, value in (self.model_extra or {}).items()}
        return {"supermemory": self.supermemory, "local_vectors": self.local_vectors, **plugins}
