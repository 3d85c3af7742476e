"""Boundary levels of the packing loop: sentence ends found through their marks are the ends of
the sentence regex's matches, as a scan of the whole text finds them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from content_core.chunking._common import _SENTENCE_RE, SENTENCE

_PIECES = st.sampled_from(
    [
        ".",
        "!",
        "?",
        "...",
        ". ",
        "! ",
        "?\n",
        '." ',
        ".) ",
        "e.g.",
        "1.2.3",
        "a",
        "word",
        " ",
        "\n",
        "\n\n",
        "\t",
        "\u3002",
        "\uff01 ",
        "\u3002\u3002",
        "\u201d",
        "'",
    ]
)


def _oracle(text: str, lo: int, hi: int, last: bool) -> int:
    """The boundary a scan of text[:hi] finds: match ends in [lo, hi] whose match starts
    within the level's lookbehind of lo."""
    ends = [
        m.end()
        for m in _SENTENCE_RE.finditer(text, 0, hi)
        if lo <= m.end() and m.start() >= lo - SENTENCE.lookbehind
    ]
    if not ends:
        return -1
    return max(ends) if last else min(ends)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=400), data=st.data())
def test_sentence_marks_match_a_regex_scan(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    assert SENTENCE.last(text, lo, hi) == _oracle(text, lo, hi, last=True)
    assert SENTENCE.first(text, lo, hi) == _oracle(text, lo, hi, last=False)


def test_dense_marks_fall_back_to_the_regex_scan() -> None:
    # Hundreds of dots that end no sentence, then one that does, far from the window's end.
    text = "Intro. " + "1.2.3." * 400 + "x" * 50
    assert SENTENCE.last(text, 0, len(text)) == len("Intro. ")
    assert SENTENCE.first(text, 1, len(text)) == len("Intro. ")
    tail = "." * 3000 + " end"
    assert SENTENCE.first(tail, 0, len(tail)) == 3001
