"""An edit replaces the person's text and keeps the stand-ins of the files it came with,
as `agent.media.stored.compose_stored` lays them out."""

from __future__ import annotations

import pytest

from agent.media.items import Prepared
from agent.media.stored import compose_stored
from memory.history.stand_ins import stand_ins, with_text

FILES = (
    Prepared("[photo 1280x960: receipt.jpg]"),
    Prepared("[photo: scan.png]"),
    Prepared("[voice 0:21]"),
    Prepared("[audio song.mp3 3:05]"),
    Prepared("[video]"),
    Prepared("[document report.pdf, 3 pages]"),
    Prepared("[document notes.txt]"),
)


@pytest.mark.parametrize("item", FILES, ids=lambda item: item.stand_in)
def test_each_kind_of_stand_in_stays_and_the_caption_is_replaced(item: Prepared) -> None:
    stored = compose_stored("what do I owe?", (item,))
    assert with_text(stored, "how much is it?") == compose_stored("how much is it?", (item,))


def test_a_transcribed_voice_note_keeps_its_marked_stand_in() -> None:
    note = Prepared("[voice 0:21]", transcript="buy milk")
    stored = compose_stored("buy milk", (note,))
    assert stand_ins(stored) == ["[voice 0:21, transcribed]"]


def test_several_files_keep_every_stand_in_in_order() -> None:
    stored = compose_stored("both of them", FILES[:2])
    assert with_text(stored, "the second one") == compose_stored("the second one", FILES[:2])


def test_a_caption_removed_leaves_the_stand_ins_alone() -> None:
    stored = compose_stored("old caption", FILES[:1])
    assert with_text(stored, "") == compose_stored("", FILES[:1]) == FILES[0].stand_in


def test_text_alone_is_replaced_whole() -> None:
    assert with_text("see [photo 1] below\nand more", "new words") == "new words"


def test_bracketed_lines_that_name_no_file_are_the_persons_text() -> None:
    assert stand_ins("[todo]\n[x] buy milk") == []
    assert with_text("[todo]\nbuy milk", "done") == "done"
