"""Tool names the providers accept: `<server>__<tool>`, their charset, at most 64 characters."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agent.mcp.names import MAX_NAME, tool_name

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_plain_names_are_joined_with_a_double_underscore() -> None:
    assert tool_name("files", "read_file") == "files__read_file"


def test_characters_outside_the_charset_become_underscores() -> None:
    assert tool_name("home.assistant", "light/on") == "home_assistant__light_on"


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=120))
def test_every_name_is_accepted_by_the_providers(server: str, tool: str) -> None:
    assert PROVIDER_NAME.match(tool_name(server, tool))


@given(st.text(alphabet="abc", min_size=70, max_size=90), st.text(alphabet="xyz", max_size=5))
def test_long_names_stay_distinct_after_cutting(prefix: str, suffix: str) -> None:
    one, two = tool_name("s", prefix + suffix), tool_name("s", prefix + suffix + "!")
    assert len(one) == len(two) == MAX_NAME
    assert one != two
