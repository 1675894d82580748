"""A gateway with no model and two persons, aiko and ben, for the commands' tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.gateway_rig import GatewayRig, gateway_rig

AIKO = "telegram:1"
BEN = "telegram:2"
STRANGER = "telegram:9"


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home, model=False) as rig:
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        yield rig
