"""Markdown -> Telegram HTML: only the tags Telegram accepts, escaped text, the same words
in the plain fallback, and never more visible text than the Markdown had."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from adapters.chunking import utf16_length
from adapters.telegram.formatting import split_for_telegram, to_html, to_plain

ALLOWED = {"b", "i", "s", "code", "pre", "a", "blockquote"}


class _Tags(HTMLParser):
    """Checks that tags are Telegram's, and nested and closed properly."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in ALLOWED, tag
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open.pop() == tag, tag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def visible(markup: str) -> str:
    parser = _Tags()
    parser.feed(markup)
    parser.close()
    assert parser.open == []
    return "".join(parser.text)


def test_inline_styles_become_telegram_tags():
    assert to_html("**b** *i* ~~s~~ `c`") == "<b>b</b> <i>i</i> <s>s</s> <code>c</code>"


def test_special_characters_are_escaped_outside_and_inside_code():
    assert to_html("a < b & c > d `x<y&z`") == "a &lt; b &amp; c &gt; d <code>x&lt;y&amp;z</code>"


def test_a_fenced_block_keeps_its_language():
    rendered = to_html("```python\nif a < b:\n    pass\n```")
    assert rendered == '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>'
    assert to_html("```\nplain\n```") == "<pre>plain</pre>"


def test_links_keep_their_address_and_unsafe_ones_are_words():
    assert to_html('[site](https://e.com/?a=1&b="2")') == (
        '<a href="https://e.com/?a=1&amp;b=%222%22">site</a>'
    )
    assert "href" not in to_html("[x](ftp://host/file)")


def test_lists_become_bullet_and_number_lines_and_headings_bold():
    rendered = to_html("# Plan\n\n- one\n- two\n  1. deep\n\n3. three\n4. four")
    assert rendered == "<b>Plan</b>\n\n• one\n• two\n  1. deep\n\n3. three\n4. four"


def test_blockquote_is_kept():
    assert to_html("> said *this*\n> and that") == (
        "<blockquote>said <i>this</i>\nand that</blockquote>"
    )


def test_raw_html_from_the_model_is_shown_as_text():
    assert to_html("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;"


def test_plain_fallback_has_the_same_words_without_markup():
    markdown = "# T\n\n**bold** and [link](https://e.com) & `code`\n\n```js\nx < 1\n```"
    assert to_plain(markdown) == "T\n\nbold and link & code\n\nx < 1"
    assert to_plain(markdown) == visible(to_html(markdown))


markdownish = st.text(
    alphabet=st.sampled_from(list("ab \n*_`#->[]()<&!.1\u00e9\U0001f600~")), max_size=300
)


@given(markdownish)
def test_any_markdown_gives_well_formed_telegram_html(markdown: str):
    rendered = to_html(markdown)
    text = visible(rendered)
    assert text.strip() == to_plain(markdown)
    assert html.unescape(re.sub(r"<[^>]+>", "", rendered)) == text


def test_a_split_whose_rendering_grows_is_redone_shorter():
    markdown = "\n".join(["1.", "# h", "para"] * 40)
    chunks = split_for_telegram(markdown, 100)
    assert all(utf16_length(to_plain(chunk)) <= 100 for chunk in chunks)
    assert "".join(chunks).replace("\n", "") == markdown.replace("\n", "")


@given(st.lists(markdownish, min_size=1, max_size=30))
def test_each_chunk_of_a_split_reply_renders_within_the_limit(parts: list[str]):
    text = "\n\n```py\n".join(parts)
    for chunk in split_for_telegram(text, 200):
        assert utf16_length(visible(to_html(chunk))) <= 200
