"""The CLI socket's owner-claim and reload frames, as the daemon reads them."""

from __future__ import annotations

import json

import pytest

from adapters.cli.protocol import BadFrame, ClaimOwner, claim_owner_request, encode, parse_frame


def test_a_claim_frame_reads_back_with_the_code_upper_case() -> None:
    frame = encode(claim_owner_request("telegram", "k7qx2m", 120))
    assert parse_frame(frame) == ClaimOwner("telegram", "K7QX2M", 120.0)


def test_reload_is_a_control_frame() -> None:
    assert parse_frame(b'{"type": "reload"}') == "reload"


@pytest.mark.parametrize(
    "fields",
    [
        {"platform": "telegram", "code": "ABCDEF"},
        {"platform": "telegram", "code": "ABCDEF", "timeout": 0},
        {"platform": "telegram", "code": "ABCDEF", "timeout": 99999},
        {"platform": "", "code": "ABCDEF", "timeout": 5},
        {"platform": "telegram", "code": 5, "timeout": 5},
    ],
)
def test_a_claim_frame_without_platform_code_or_a_sane_timeout_is_refused(
    fields: dict[str, object],
) -> None:
    with pytest.raises(BadFrame):
        parse_frame(json.dumps({"type": "claim_owner", **fields}).encode())
