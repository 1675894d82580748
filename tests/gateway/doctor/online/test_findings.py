"""How `kioku doctor --online` finds `llm.model` in a listing: the names servers list
differ from the names people configure."""

from __future__ import annotations

import pytest

from gateway.doctor.online.findings import _same_model


@pytest.mark.parametrize(
    ("configured", "listed"),
    [
        ("qwen2.5:7b", "qwen2.5:7b"),
        ("qwen2.5", "qwen2.5:latest"),  # Ollama's default tag
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),  # Anthropic's alias, dated
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219"),
    ],
)
def test_a_listed_name_for_the_configured_model_counts(configured: str, listed: str) -> None:
    assert _same_model(configured, listed)


@pytest.mark.parametrize(
    ("configured", "listed"),
    [
        ("qwen2.5", "qwen2.5:7b"),  # another size is another model
        ("claude-sonnet-4", "claude-sonnet-4-5-20250929"),
        ("llama3", "llama3.2"),
    ],
)
def test_another_model_does_not_count(configured: str, listed: str) -> None:
    assert not _same_model(configured, listed)
