"""Token counting, model limits and the offline-only encoding loader."""

from __future__ import annotations

import pytest

from content_core.tokens import (
    ModelLimits,
    TokenCounter,
    TokenEstimator,
    count_tokens,
    estimate_tokens,
    get_encoding,
    get_model_limits,
    is_exact_model,
)


def test_estimator_exact_and_heuristic() -> None:
    exact = TokenEstimator(encoding_name="cl100k_base")
    assert exact.is_exact and exact.estimate("Hello world, this is a test.") == 8
    assert exact.fits("Hello world", max_tokens=2) and not exact.fits("Hello world", 1)
    heuristic = TokenEstimator(tokens_per_word=2.0)
    assert not heuristic.is_exact and heuristic.estimate("one two three") == 6
    assert isinstance(exact, TokenCounter)
    with pytest.raises(TypeError):
        TokenEstimator(1.5)  # type: ignore[misc]


def test_missing_encoding_falls_back_without_network() -> None:
    estimator = TokenEstimator(encoding_name="r50k_base")
    # r50k is not packaged: the heuristic answers and nothing is downloaded.
    assert not estimator.is_exact and estimator.estimate("a b c d") in (4, 5)
    with pytest.raises(ValueError, match="offline"):
        get_encoding("no_such_encoding")


def test_estimate_tokens_seed_examples() -> None:
    assert estimate_tokens("Hello, world!", model="gpt-4o") == 4
    assert estimate_tokens("Hello, world!", model="claude-sonnet-4") == 3
    assert count_tokens("Hello, world!") == 4


@pytest.mark.parametrize(
    ("model", "family", "max_input"),
    [
        ("gpt-4o", "gpt-4o", 111_616),  # the seed's figure
        ("gpt-4o-2024-05-13", "gpt-4o", 111_616),  # dated name, family match
        ("openai:gpt-4o-mini-2024-07-18", "gpt-4o-mini", 111_616),  # provider prefix
        ("o1", "o1", 100_000),
        ("claude-sonnet-4-20250514", "claude-sonnet-4", 191_808),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet", 191_808),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", 136_000),
        ("gemini-2.0-flash-exp", "gemini-2.0-flash-exp", 991_808),
        ("gemini-1.5-pro-002", "gemini-1.5-pro", 1_991_808),
        ("gpt-5-mini", "gpt-5-mini", 272_000),
        ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano", 1_014_808),
        ("claude-instant-9", "claude-sonnet-4", 191_808),  # family fallback
    ],
)
def test_model_limits_fuzzy_matching(model: str, family: str, max_input: int) -> None:
    limits = get_model_limits(model)
    assert isinstance(limits, ModelLimits)
    assert limits.model == family
    assert limits.max_input == max_input == limits.max_context - limits.max_output


def test_unknown_model_gets_conservative_default() -> None:
    limits = get_model_limits("my-local-model")
    assert limits.max_context == 128_000 and limits.max_input < 128_000
    assert not is_exact_model("my-local-model") and is_exact_model("gpt-4.1")


def test_counts_survive_whitespace_runs_tiktoken_cannot_encode() -> None:
    from content_core.tokens import whitespace_cuts

    text = "a" + " " * 2_000_000 + "b"
    assert whitespace_cuts(text)[0] == 1 + 8192
    assert count_tokens(text) > 0
    assert TokenEstimator(encoding_name="cl100k_base").estimate(text) == count_tokens(text)
    assert whitespace_cuts("x" + " " * 100 + "y") == []
