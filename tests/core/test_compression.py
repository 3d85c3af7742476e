"""Tests for content_core.compression: every strategy fits the budget by exact cl100k count."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from content_core.agents import OpenAICompatibleAgent
from content_core.compression import (
    CompressionConfig,
    CompressionResult,
    CompressionStrategy,
    ContextCompressor,
    ExtractiveStrategy,
    MapReduceStrategy,
    SlidingWindowManager,
    SummarizationStrategy,
    TruncationStrategy,
    compress_text,
)
from content_core.tokens import TokenEstimator
from tests.fixtures.corpus import CORPUS
from tests.support.chat_server import ChatServer

EXACT = TokenEstimator(encoding_name="cl100k_base")

PROSE = (
    "Quarterly report of the Aurora Mill. "
    "The Aurora Mill produced 4,200 tonnes of flour in the third quarter. "
    "Flour output at the mill rose because the new mill rollers ran without stoppage. "
    "The weather was mild. "
    "Staff planted tulips near the car park. "
    "Mill managers expect flour output to keep rising once the second mill line opens. "
    "A visitor asked about the canteen menu. "
)


def norwich() -> str:
    return (CORPUS / "txt" / "norwich-city.txt").read_text(encoding="utf-8", errors="replace")


def test_exact_estimator_is_available() -> None:
    # Every "fits by exact count" assertion below relies on the offline cl100k encoding.
    assert EXACT.is_exact


@pytest.mark.parametrize(
    "strategy",
    [TruncationStrategy(), ExtractiveStrategy()],
    ids=["truncation", "extractive"],
)
async def test_text_that_fits_is_returned_unchanged(strategy: CompressionStrategy) -> None:
    compressor = ContextCompressor(strategy)
    assert await compressor.compress(PROSE, max_tokens=10_000) == PROSE


@pytest.mark.parametrize("budget", [1, 7, 40, 300, 2000], ids=lambda b: f"budget{b}")
@pytest.mark.parametrize(
    "strategy",
    [
        TruncationStrategy(),
        TruncationStrategy(estimator=EXACT, suffix=" [cut]"),
        ExtractiveStrategy(),
    ],
    ids=["truncation-heuristic", "truncation-exact", "extractive"],
)
async def test_result_fits_budget_by_exact_count(
    strategy: CompressionStrategy, budget: int
) -> None:
    text = norwich()
    out = await ContextCompressor(strategy).compress(text, max_tokens=budget)
    assert EXACT.estimate(out) <= budget
    assert out  # something survives even a one-token budget


@pytest.mark.parametrize(
    "text",
    [
        "zq-7x!/ab9:: " * 3000,  # many tokens per word: the heuristic cut overshoots
        PROSE * 200,  # plain prose: the heuristic cut fits
    ],
    ids=["dense", "prose"],
)
async def test_compressor_with_truncation_keeps_the_marker(text: str) -> None:
    out = await ContextCompressor(TruncationStrategy()).compress(text, max_tokens=100)
    assert out.endswith("...")
    assert text.startswith(out.removesuffix("..."))
    assert 90 <= EXACT.estimate(out) <= 100  # the longest prefix that fits, not a short one


async def test_truncation_keeps_the_beginning_and_appends_suffix() -> None:
    strategy = TruncationStrategy(tokens_per_word=1.0, suffix=" [more]")
    out = await strategy.compress(PROSE, max_tokens=12)
    assert out.endswith(" [more]")
    assert PROSE.startswith(out.removesuffix(" [more]"))
    # With the 1-token-per-word heuristic, the suffix's word counts against the budget.
    assert len(out.split()) <= 12


async def test_extractive_keeps_the_central_sentences_verbatim_in_order() -> None:
    out = await ExtractiveStrategy().compress(PROSE, max_tokens=45)
    kept = [s.strip() + "." for s in out.split(".") if s.strip()]
    assert all(s in PROSE for s in kept), "sentences are copied, never rewritten"
    positions = [PROSE.index(s) for s in kept]
    assert positions == sorted(positions)
    assert "Aurora Mill produced 4,200 tonnes of flour" in out
    assert "tulips" not in out and "canteen" not in out


def test_extractive_handles_text_without_sentence_breaks() -> None:
    text = "token " * 5000
    result = compress_text(text, CompressionConfig(max_tokens=50))
    assert result.tokens_after <= 50 < result.tokens_before


@pytest.mark.parametrize("strategy", ["extractive", "truncation"])
def test_compress_text_reports_exact_counts(strategy: str) -> None:
    text = norwich()
    result = compress_text(text, CompressionConfig(strategy=strategy, max_tokens=256))
    assert isinstance(result, CompressionResult)
    assert result.strategy == strategy
    assert result.tokens_before == EXACT.estimate(text)
    assert result.tokens_after == EXACT.estimate(result.text) <= 256
    assert "Roberts" in result.text


def test_compress_text_leaves_fitting_text_alone() -> None:
    result = compress_text(PROSE, CompressionConfig(max_tokens=1024))
    assert result.text == PROSE and result.strategy == "none"
    assert result.tokens_before == result.tokens_after == EXACT.estimate(PROSE)


def test_multilingual_text_fits() -> None:
    text = (CORPUS / "txt" / "UDHR_first_article_all.txt").read_text(encoding="utf-8")
    result = compress_text(text, CompressionConfig(max_tokens=300))
    assert result.tokens_after <= 300
    assert EXACT.estimate(result.text) == result.tokens_after


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("abc xyz.!?\n#-|é中 ")), min_size=0, max_size=600),
    budget=st.integers(min_value=1, max_value=60),
    strategy=st.sampled_from(["extractive", "truncation"]),
)
def test_any_text_fits_any_budget(text: str, budget: int, strategy: str) -> None:
    result = compress_text(text, CompressionConfig(strategy=strategy, max_tokens=budget))
    assert EXACT.estimate(result.text) <= budget


def test_compression_config_is_frozen_strict_and_fingerprinted() -> None:
    config = CompressionConfig()
    assert (config.strategy, config.max_tokens) == ("extractive", 1024)
    with pytest.raises(ValidationError):
        CompressionConfig(strategy="summarise")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        CompressionConfig(budget=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        config.max_tokens = 5  # type: ignore[misc]
    assert config.fingerprint() == CompressionConfig().fingerprint()
    assert config.fingerprint() != CompressionConfig(max_tokens=512).fingerprint()


class _Shout:
    async def compress(self, text: str, max_tokens: int) -> str:
        return text.upper()


async def test_custom_strategy_plugs_in_and_is_still_held_to_the_budget() -> None:
    assert isinstance(_Shout(), CompressionStrategy)
    out = await ContextCompressor(_Shout()).compress(PROSE, max_tokens=10)
    assert out.isupper() and EXACT.estimate(out) <= 10


def test_compressor_rejects_non_strategies() -> None:
    with pytest.raises(TypeError):
        ContextCompressor(object())  # type: ignore[arg-type]


async def test_summarization_against_a_chat_server() -> None:
    # The server echoes the first 20 words of the prompt; the compressor enforces the budget.
    with ChatServer() as server:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url, output_type=str)
        strategy = SummarizationStrategy(agent, system_instruction="Summarise: {content}")
        out = await ContextCompressor(strategy).compress(norwich(), max_tokens=12)
        await agent.aclose()
    assert len(server.completed) == 1
    assert server.calls[0].user_text.startswith("Summarise: Iwan Roberts")
    assert "response_format" not in server.calls[0].body
    assert out.startswith("Summarise: Iwan Roberts") and EXACT.estimate(out) <= 12


async def test_map_reduce_summarises_pieces_concurrently_then_reduces() -> None:
    def verbose(body: dict[str, object], text: str) -> str:
        return "summary " * 60  # always longer than the final budget

    with ChatServer(latency_s=0.02, responder=verbose, gather=2) as server:
        agent = OpenAICompatibleAgent("gpt-4o-mini", base_url=server.base_url, output_type=str)
        strategy = MapReduceStrategy(agent, chunk_size=2000, chunk_overlap=100)
        out = await ContextCompressor(strategy).compress(norwich(), max_tokens=100)
        await agent.aclose()
    pieces = -(-EXACT.estimate(norwich()) // 1900)
    map_calls = [c for c in server.calls if "Rewrite the text" in c.user_text]
    reduce_calls = [c for c in server.calls if "joins summaries" in c.user_text]
    assert len(map_calls) >= pieces
    assert reduce_calls, "the merged summaries were over budget, so a reduction ran"
    assert server.max_in_flight > 1
    assert EXACT.estimate(out) <= 100


def test_map_reduce_validates_sizes() -> None:
    with pytest.raises(ValueError):
        MapReduceStrategy(object(), chunk_size=100, chunk_overlap=100)


def test_sliding_window_evicts_oldest_and_counts_exactly() -> None:
    window = SlidingWindowManager(max_tokens=20, estimator=EXACT)
    assert SlidingWindowManager().max_tokens == 128_000
    messages = [f"message number {i} says hello" for i in range(6)]
    for message in messages:
        window.add(message)
    assert window.estimated_tokens <= 20
    assert window.segments() == messages[-window.segment_count :]
    assert window.estimated_tokens == sum(EXACT.estimate(m) for m in window.segments())
    assert window.get_context().endswith(messages[-1])
    window.clear()
    assert (window.segment_count, window.estimated_tokens, window.get_context()) == (0, 0, "")


def test_sliding_window_cuts_a_segment_larger_than_the_budget() -> None:
    window = SlidingWindowManager(max_tokens=10, estimator=EXACT)
    window.add("old")
    evicted = window.add(norwich())
    assert evicted == 1 and window.segment_count == 1
    assert window.estimated_tokens <= 10 and norwich().startswith(window.get_context())


def test_extractive_skips_repeated_boilerplate_and_prefers_prose_over_code() -> None:
    boiler = "Confidential: harbour ledger report for the harbour board."
    text = "\n\n".join(
        [
            "# Harbour ledger report",
            boiler,
            "The harbour ledger shows lantern repairs rose in March.",
            "```\nledger = harbour.report(ledger, harbour)\n```",
            boiler,
            "Weather notes follow.",
        ]
    )
    out = compress_text(text, CompressionConfig(max_tokens=40)).text
    assert out.count("Confidential") == 1
    assert "lantern repairs rose" in out
    assert "harbour.report" not in out


def test_public_surface() -> None:
    import content_core
    import content_core.compression as compression

    assert compression.__all__ == sorted(compression.__all__)
    for name in compression.__all__:
        assert getattr(content_core, name) is getattr(compression, name)


async def test_summarization_runs_offline_with_the_offline_extractor() -> None:
    from content_core.agents import OfflineExtractor

    # The offline agent's facts carry a `summary`, which the strategy reads; no model needed.
    out = await ContextCompressor(SummarizationStrategy(OfflineExtractor())).compress(
        norwich(), max_tokens=60
    )
    assert 0 < EXACT.estimate(out) <= 60
    assert "Roberts" in out


def test_extractive_leads_with_the_opening_sentences_of_a_real_document() -> None:
    result = compress_text(norwich(), CompressionConfig(max_tokens=200))
    assert result.text.startswith("His footballing career started at Watford")
    assert "web.archive.org" not in result.text  # the reference list is not content
