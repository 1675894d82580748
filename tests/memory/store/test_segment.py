"""The indexed form of a turn: the fast paths give exactly what the general path gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory.store.segment import CJK_RUN, bigrams, normalize, segment, segment_text


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_shortcut_matches_the_general_path(text: str) -> None:
    assert segment(text) == (segment_text(text) if text else "")


@given(st.text(alphabet="抹茶京都でのカナｶﾅａＡ abc。、1"))
def test_every_bigram_of_every_cjk_run_is_a_token(text: str) -> None:
    tokens = set(segment(text).split())
    for run in CJK_RUN.findall(normalize(text)):
        assert set(bigrams(run)) <= tokens
        assert run[-1] in tokens


def test_cjk_runs_are_spaced_from_latin_words() -> None:
    assert segment("抹茶店で Tea") == " 抹茶 茶店 店で で  tea"
    assert segment("茶") == " 茶 "
