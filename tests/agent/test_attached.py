"""Which of a person's files stay files in the live session, and what /undo takes with a
turn that brought some."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from agent.attached import FileText, make_room, user_turn
from agent.history import UNANSWERED, for_request, without_last_exchange
from agent.live import LiveSession
from agent.loop import FORCE_ANSWER
from agent.media.items import Prepared
from agent.media.stored import compose_stored
from agent.providers import ChatMessage, Document, Image, Text, ToolCall, ToolResult
from memory.store.records import Session, Usage

NOTES = (FORCE_ANSWER,)


def photo(number: int) -> Image:
    return Image("image/jpeg", bytes([number]) * 8, f"[photo {number}]")


def pdf(name: str) -> Document:
    return Document("application/pdf", name.encode(), f"[document {name}]\ntext of {name}")


def said(text: str) -> ChatMessage:
    return ChatMessage("assistant", (Text(text),))


def open_session(images_in_context: int) -> LiveSession:
    now = datetime(2026, 12, 4, tzinfo=UTC)
    session = Session(
        1,
        "s1",
        "telegram:100",
        "telegram",
        "100",
        "",
        "dm",
        "aiko",
        None,
        None,
        now,
        None,
        None,
        Usage(),
    )
    return LiveSession(session, "system", (), [], images_in_context=images_in_context)


def kinds(messages: list[ChatMessage]) -> list[list[str]]:
    return [[type(block).__name__ for block in m.content] for m in messages if m.role == "user"]


def test_the_turn_is_the_text_then_the_files_a_files_text_marked_as_such() -> None:
    turn = user_turn("look", [photo(1), Text("text of notes.csv")])
    assert turn.content == (Text("look"), photo(1), FileText("text of notes.csv"))


def test_the_fourth_image_turns_the_first_into_its_stand_in() -> None:
    earlier: list[ChatMessage] = []
    for number in range(1, 4):
        earlier = [*make_room(earlier, user_turn(f"p{number}", [photo(number)]), 3), said("ok")]
    assert kinds(earlier) == [["Text", "Image"]] * 3
    after = make_room(earlier, user_turn("p4", [photo(4)]), 3)
    assert after[0].content == (Text("p1"), FileText("[photo 1]"))
    assert after[1:] == [*earlier[1:], user_turn("p4", [photo(4)])]
    assert after[2] is earlier[2]  # untouched messages are the same objects


def test_more_images_in_one_turn_than_kept_keeps_its_last_ones() -> None:
    after = make_room([], user_turn("album", [photo(1), photo(2), photo(3)]), 2)
    assert after[0].content == (Text("album"), FileText("[photo 1]"), photo(2), photo(3))


def test_no_images_in_context_sends_every_image_as_its_stand_in() -> None:
    after = make_room([], user_turn("look", [photo(1)]), 0)
    assert after[0].content == (Text("look"), FileText("[photo 1]"))


def test_a_document_stays_whole_only_until_the_next_turn_with_files() -> None:
    earlier = [user_turn("read", [pdf("lease.pdf")]), said("ok")]
    after = make_room(earlier, user_turn("and this", [photo(1)]), 3)
    assert after[0].content == (Text("read"), FileText("[document lease.pdf]\ntext of lease.pdf"))
    assert after[2].content == (Text("and this"), photo(1))


def test_a_turn_without_files_leaves_every_earlier_block_as_it_was() -> None:
    live = open_session(images_in_context=1)
    live.add_user_turn("one", [photo(1), pdf("a.pdf")])
    live.add(said("ok"))
    before = list(live.messages)
    live.add_user_turn("no files")
    assert live.messages[:2] == before
    assert all(new is old for new, old in zip(live.messages, before, strict=False))


def test_a_turn_merged_after_a_failed_call_keeps_the_earlier_files() -> None:
    live = open_session(images_in_context=3)
    live.add_user_turn("first", [pdf("a.pdf")])
    live.add_user_turn("second", [photo(1)])
    # The model never answered "first": both are one turn, and a.pdf is still in it.
    assert live.messages == [
        ChatMessage(
            "user",
            (Text("first"), FileText("[document a.pdf]\ntext of a.pdf"), Text("second"), photo(1)),
        )
    ]


def test_undo_takes_the_turns_files_with_its_text() -> None:
    kept = [user_turn("hello"), said("hi")]
    turn = user_turn("what is this?", [photo(1), Text("text of notes.csv"), pdf("a.pdf")])
    assert without_last_exchange([*kept, turn, said("a cat")], NOTES) == kept


def test_undo_keeps_the_files_of_an_earlier_message_in_the_same_turn() -> None:
    merged = ChatMessage("user", (*user_turn("first", [photo(1)]).content, Text("second")))
    assert without_last_exchange([merged, said("ok")], NOTES) == [user_turn("first", [photo(1)])]


def test_undo_of_a_turn_whose_own_images_were_demoted_takes_them_all() -> None:
    turn = make_room([], user_turn("album", [photo(1), photo(2)]), 1)
    assert without_last_exchange([*turn, said("two photos")], NOTES) == []


def test_stored_text_is_the_stand_ins_one_a_line_then_the_text() -> None:
    media = (Prepared("[photo 1280x960: receipt.jpg]"), Prepared("[document lease.pdf, 12 pages]"))
    assert compose_stored("what do I owe?", media) == (
        "[photo 1280x960: receipt.jpg]\n[document lease.pdf, 12 pages]\nwhat do I owe?"
    )


def test_a_voice_notes_stand_in_says_it_was_transcribed() -> None:
    note = Prepared("[voice 0:21]", transcript="buy milk")
    assert compose_stored("buy milk", (note,)) == "[voice 0:21, transcribed]\nbuy milk"


def test_files_without_a_caption_are_stored_as_their_stand_ins_alone() -> None:
    assert compose_stored("", (Prepared("[photo 10x10: a.png]"),)) == "[photo 10x10: a.png]"


def test_a_turn_without_files_is_stored_as_written() -> None:
    assert compose_stored("hello", ()) == "hello"


def test_a_call_left_unanswered_before_a_turn_with_files_is_answered_ahead_of_them() -> None:
    stopped = ChatMessage("assistant", (ToolCall("c1", "session_search", {"query": "x"}),))
    turn = user_turn("look", [photo(1)])
    sent = for_request([user_turn("find it"), stopped, turn])
    assert sent[2].content == (ToolResult("c1", UNANSWERED, True), Text("look"), photo(1))


@given(
    turns=st.lists(st.lists(st.sampled_from(["image", "pdf", "text"]), max_size=4), max_size=12),
    images=st.integers(min_value=0, max_value=5),
)
def test_any_session_keeps_its_latest_images_and_changes_nothing_without_a_file(
    turns: list[list[str]], images: int
) -> None:
    live = open_session(images_in_context=images)
    sent: list[Image] = []
    last_with_files = None
    for number, kinds_sent in enumerate(turns):
        blocks = [
            {"image": photo(number * 10 + i), "pdf": pdf(f"{number}-{i}")}.get(kind, Text("csv"))
            for i, kind in enumerate(kinds_sent)
        ]
        before = list(live.messages)
        live.add_user_turn(f"turn {number}", blocks)
        if any(isinstance(b, Image | Document) for b in blocks):
            last_with_files = number
        else:
            assert live.messages[: len(before)] == before
        live.add(said("ok"))
        sent.extend(b for b in blocks if isinstance(b, Image))
        shown = [b for m in live.messages for b in m.content if isinstance(b, Image)]
        assert shown == sent[max(len(sent) - images, 0) :]
        documents = [b for m in live.messages for b in m.content if isinstance(b, Document)]
        assert all(d.data.decode().startswith(f"{last_with_files}-") for d in documents)
