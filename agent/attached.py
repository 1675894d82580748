"""A person's files in the live conversation: the blocks of their turn, and which of
them still go to the model as files.

An image is resent with every call of the session, so only the latest
`media.images_in_context` stay images; older ones become their stand-in text. A PDF
sent whole (Anthropic's document block) costs as much per page as an image, and its
stand-in already holds the text kioku read from it, so it stays a document only until
the next turn that brings an image or a whole PDF (it does not count against the
images: one long PDF would push every photo out); after that the model keeps its text
and loses only the page images. Both happen only when such a turn arrives: between
them every earlier message stays byte-identical, which is what the provider's prompt
cache keys on. (An /undo of the turn that demoted them does not bring them back.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.providers import Attached, Block, ChatMessage, Image, Text


@dataclass(frozen=True, slots=True)
class FileText(Text):
    """Text standing for a file in a person's turn (a document's text, an image's
    description or stand-in), not words they wrote: /undo looks past it for their message."""


def user_turn(text: str, attached: Sequence[Block] = ()) -> ChatMessage:
    """The person's turn: their text first, then their files' blocks in order."""
    files = tuple(FileText(block.text) if isinstance(block, Text) else block for block in attached)
    return ChatMessage("user", (Text(text), *files))


def brings_files(message: ChatMessage) -> bool:
    """Whether `message` holds an image or a whole PDF: only such a turn demotes files."""
    return any(isinstance(block, Attached) for block in message.content)


def make_room(
    earlier: Sequence[ChatMessage], latest: ChatMessage, images: int
) -> list[ChatMessage]:
    """`earlier` then `latest` with only the last `images` images left as images and
    no document outside `latest`; a message with nothing demoted is the same object."""
    messages = [*earlier, latest]
    found = [
        (index, position, block)
        for index, message in enumerate(messages)
        for position, block in enumerate(message.content)
        if isinstance(block, Attached)
    ]
    pictures = [(i, p) for i, p, block in found if isinstance(block, Image)]
    shown = set(pictures[max(len(pictures) - images, 0) :])
    demote: dict[int, set[int]] = {}
    for index, position, block in found:
        stays = (index, position) in shown if isinstance(block, Image) else index == len(earlier)
        if not stays:
            demote.setdefault(index, set()).add(position)
    return [
        _demoted(message, demote[index]) if index in demote else message
        for index, message in enumerate(messages)
    ]


def _demoted(message: ChatMessage, positions: set[int]) -> ChatMessage:
    blocks = tuple(
        FileText(block.stand_in) if position in positions and isinstance(block, Attached) else block
        for position, block in enumerate(message.content)
    )
    return ChatMessage(message.role, blocks)
