"""Model providers behind one neutral interface.

The SDK-backed classes live in `agent.providers.anthropic` and `agent.providers.openai_compat`
and are not imported here: `build_provider` loads only the SDK the settings choose.
"""

from agent.providers.base import (
    Attached,
    Block,
    ChatMessage,
    ChatRequest,
    Document,
    Image,
    ModelReply,
    OnText,
    Provider,
    StopReason,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from agent.providers.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderModelError,
    ProviderNotConfigured,
    ProviderTimeout,
    ProviderUnavailable,
)
from agent.providers.factory import NoProvider, build_provider
from agent.providers.retry import RetryPolicy

__all__ = [
    "Attached",
    "Block",
    "ChatMessage",
    "ChatRequest",
    "Document",
    "Image",
    "ModelReply",
    "NoProvider",
    "OnText",
    "Provider",
    "ProviderAuthError",
    "ProviderError",
    "ProviderModelError",
    "ProviderNotConfigured",
    "ProviderTimeout",
    "ProviderUnavailable",
    "RetryPolicy",
    "StopReason",
    "Text",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "build_provider",
]
