"""Whether the configured model can see images (`llm.vision`)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from config.settings import LLMSettings

VISION_MODELS = (
    "gpt-4o*",
    "gpt-4.1*",
    "gpt-5*",
    "o1*",
    "o3*",
    "o4*",
    "*vision*",
    "llava*",
    "*-vl*",
    "qwen2.5vl*",
    "gemma3*",
    "llama3.2-vision*",
    "pixtral*",
    "minicpm-v*",
    "moondream*",
)
"""Model names known to read images behind an OpenAI-compatible endpoint (Ollama tags
such as "gemma3:12b" and paths such as "org/pixtral-12b" included)."""


def sees_images(llm: LLMSettings) -> bool:
    """`llm.vision` when set; with "auto", every Anthropic model, and the OpenAI-compatible
    models whose name is that of a known vision model."""
    if llm.vision != "auto":
        return llm.vision
    if llm.provider == "anthropic":
        return True
    name = llm.model.lower().rsplit("/", 1)[-1]
    return any(fnmatchcase(name, pattern) for pattern in VISION_MODELS)
