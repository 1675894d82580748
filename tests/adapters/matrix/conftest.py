"""One real Synapse for every Matrix test module of a test process (about ten seconds to
start); each module registers its own users on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.synapse import Synapse, running_synapse, skip_reason


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_synapse(tmp_path_factory.mktemp("synapse")) as server:
        print(f"\nSynapse {server.version} served in {server.started_in:.1f} s")
        yield server
