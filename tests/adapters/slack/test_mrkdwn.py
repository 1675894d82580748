"""Markdown to Slack mrkdwn, and Slack message text to plain words."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from adapters.slack.mrkdwn import escape, from_slack, to_mrkdwn

_ENTITY = re.compile(r"<[^<>\n]+>")
_QUOTE = re.compile(r"^\s*(?:(?:•|\d+\.) )?(?:> ?)+")


def test_bold_italic_strike_and_inline_code() -> None:
    assert to_mrkdwn("**b** *i* ~~s~~ `c`") == "*b* _i_ ~s~ `c`"


def test_links_become_slack_links() -> None:
    assert to_mrkdwn("[docs](https://x.org/a?b=1&c=2)") == "<https://x.org/a?b=1&amp;c=2|docs>"
    assert to_mrkdwn("<https://x.org>") == "<https://x.org>"


def test_headings_are_bold_lines() -> None:
    assert to_mrkdwn("# Plan\n\ntext") == "*Plan*\n\ntext"


def test_lists_are_bullet_and_numbered_lines_nested_by_indent() -> None:
    assert to_mrkdwn("- a\n- b\n  - c") == "• a\n• b\n    • c"
    assert to_mrkdwn("3. x\n4. y") == "3. x\n4. y"


def test_code_block_loses_its_language_and_keeps_its_text_escaped() -> None:
    assert to_mrkdwn("```python\nif a < b:\n    pass\n```") == "```\nif a &lt; b:\n    pass\n```"


def test_control_characters_are_escaped() -> None:
    assert to_mrkdwn("a & b < c > d") == "a &amp; b &lt; c &gt; d"


def test_quote_lines_keep_their_marker() -> None:
    assert to_mrkdwn("> one\n> two") == "> one\n> two"


def test_incoming_text_loses_kiokus_mention_and_decodes_entities() -> None:
    text = "<@U0BOT> ask <@U2> about <https://a.org|the site> &amp; <#C1|general> <!here>"
    assert from_slack(text, "U0BOT") == "ask @U2 about the site (https://a.org) & #general @here"


def test_incoming_bare_link_and_mail_address() -> None:
    assert from_slack("<https://a.org> <mailto:me@a.org|me@a.org>", None) == (
        "https://a.org me@a.org"
    )


@given(st.text())
def test_escaped_text_reads_back_unchanged(text: str) -> None:
    assert from_slack(escape(text), None) == text.strip()


@given(st.text(max_size=300))
def test_every_angle_bracket_rendered_belongs_to_a_link_or_a_quote(text: str) -> None:
    rendered = _ENTITY.sub("", to_mrkdwn(text))
    body = "\n".join(_QUOTE.sub("", line) for line in rendered.split("\n"))
    assert "<" not in body
    assert ">" not in body
