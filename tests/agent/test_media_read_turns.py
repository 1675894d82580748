"""Files read by the agent's own `MediaReader` and answered in a turn: what reaches the
model and what is kept are the cleaned bytes, never what the phone sent."""

from __future__ import annotations

import base64
import io
from dataclasses import replace

from PIL import Image as PILImage

from agent.media.items import Incoming
from memory.media import media_for_message, media_path
from tests.helpers.charges import Charges
from tests.helpers.media_files import GPS_IFD, jpeg_with_gps, pdf_with_text


async def test_a_phone_photo_reaches_the_model_downscaled_and_without_its_location(rig) -> None:
    session = await rig.dm()
    sent = jpeg_with_gps(3000, 2000)
    prepared = await rig.agent.media.read(
        [Incoming("image", "receipt.jpg", "image/jpeg", sent)], Charges()
    )
    rig.say("A receipt for 12.50.")
    turn = replace(rig.turn(session, "what do I owe?"), media=tuple(prepared))
    await rig.agent.respond(turn)

    block = rig.api.last.json["messages"][0]["content"][1]
    assert block["type"] == "image"
    data = base64.b64decode(block["source"]["data"])
    image = PILImage.open(io.BytesIO(data))
    assert max(image.size) <= rig.settings.media.image_max_side
    assert not image.getexif().get_ifd(GPS_IFD)
    stored = (await rig.store.messages(session.id))[0]
    assert stored.content == f"{prepared[0].stand_in}\nwhat do I owe?"
    assert "receipt.jpg" in stored.content
    kept = (await media_for_message(rig.store, [stored.id]))[stored.id]
    assert media_path(rig.home, kept[0]).read_bytes() == data


async def test_a_pdf_reaches_anthropic_whole_and_its_text_is_kept_for_later(rig) -> None:
    session = await rig.dm()
    pdf = pdf_with_text("The rent is 900 a month.")
    prepared = await rig.agent.media.read(
        [Incoming("document", "lease.pdf", "application/pdf", pdf)], Charges()
    )
    rig.say("900 a month.")
    await rig.agent.respond(replace(rig.turn(session, "rent?"), media=tuple(prepared)))
    block = rig.api.last.json["messages"][0]["content"][1]
    assert block["type"] == "document"
    assert base64.b64decode(block["source"]["data"]) == pdf

    photo = jpeg_with_gps(400, 300)
    more = await rig.agent.media.read(
        [Incoming("image", "flat.jpg", "image/jpeg", photo)], Charges()
    )
    rig.say("A flat.")
    await rig.agent.respond(replace(rig.turn(session, "and this?"), media=tuple(more)))
    first_turn = rig.api.last.json["messages"][0]["content"]
    assert [block["type"] for block in first_turn] == ["text", "text"]
    assert "The rent is 900 a month." in first_turn[1]["text"]
