"""A tool result as text for the model: text passed on, other content named, size capped."""

from __future__ import annotations

import json

from mcp import types

from agent.untrusted import nesting
from inputs.limits import MAX_JSON_DEPTH, InputRefused

MAX_RESULT_CHARS = 16_384
IMAGE_NOTE = "[image omitted: kioku cannot pass images on yet]"
AUDIO_NOTE = "[audio omitted: kioku cannot pass audio on yet]"
EMPTY = "(the tool returned nothing)"


def render(result: types.CallToolResult, limit: int = MAX_RESULT_CHARS) -> str:
    """The text of `result`: its text blocks joined, a note for each block kioku cannot pass.
    Structured content nested past `MAX_JSON_DEPTH` is refused with `InputRefused`."""
    parts = [_block_text(block) for block in result.content]
    structured = result.structuredContent
    if not parts and structured is not None:
        if nesting(structured, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            raise InputRefused(
                f"its structured content nests deeper than {MAX_JSON_DEPTH} levels; "
                f"kioku passes on at most {MAX_JSON_DEPTH}"
            )
        try:
            parts.append(json.dumps(structured, ensure_ascii=False))
        except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
            raise InputRefused(f"its structured content cannot be written out ({exc})") from None
    return cap("\n".join(parts) or EMPTY, limit)


def cap(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text` cut to `limit` characters, saying so, so the model knows it saw only a part."""
    if len(text) <= limit:
        return text
    note = f"\n[result cut by kioku: showing {limit:,} of {len(text):,} characters]"
    return text[:limit] + note


def _block_text(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return IMAGE_NOTE
    if isinstance(block, types.AudioContent):
        return AUDIO_NOTE
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.name} {block.uri}]"
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return resource.text
    return f"[binary resource omitted ({resource.mimeType or 'unknown type'}): {resource.uri}]"
