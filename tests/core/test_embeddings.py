"""Embedders: the OpenAI-compatible endpoint on a real 127.0.0.1 server, the cache (no call
for a text embedded before), per-text errors, and the offline model with the network refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from content_core.embeddings import (
    EmbedderConfig,
    OpenAIEmbedder,
    WordLlamaEmbedder,
    embed_cached,
    make_embedder,
)
from content_core.errors import EmbeddingError, EmbeddingUnavailableError
from tests.support.embeddings_server import REJECT_MARKER, EmbeddingsServer, fake_vector
from tests.support.offline import run_offline

TEXTS = ["The invoice is due in thirty days.", "Rotate the keys every quarter.", "Hello"]


def test_endpoint_vectors_come_back_in_input_order() -> None:
    with EmbeddingsServer(dimension=8) as server:
        embedder = OpenAIEmbedder("embed-small", base_url=server.base_url, api_key="k")
        vectors = embedder.embed(TEXTS)
        assert embedder.dimension == 8 and embedder.name == "embed-small"
        # The server replies in reverse order; the client sorts by index.
        assert vectors == [pytest.approx(fake_vector(t, 8)) for t in TEXTS]
        assert server.requests == [{"model": "embed-small", "input": TEXTS}]
        [again] = asyncio.run(embedder.aembed(TEXTS[:1]))
        assert again == pytest.approx(fake_vector(TEXTS[0], 8))


def test_a_configured_dimension_is_sent_as_dimensions() -> None:
    with EmbeddingsServer(dimension=8) as server:
        config = EmbedderConfig(kind="openai", model="m", base_url=server.base_url, dimension=4)
        embedder = make_embedder(config)
        assert embedder is not None
        assert [len(v) for v in embedder.embed(TEXTS)] == [4, 4, 4]
        assert server.requests[0]["dimensions"] == 4


def test_429_and_503_are_retried_and_a_400_is_not() -> None:
    with EmbeddingsServer(dimension=8) as server:
        embedder = OpenAIEmbedder("m", base_url=server.base_url, backoff_s=0.01, max_retries=2)
        server.faults.extend([429, 503])
        assert len(embedder.embed(TEXTS)) == 3
        assert len(server.requests) == 3
        server.faults.extend([503, 503, 503])
        with pytest.raises(EmbeddingUnavailableError, match="503 after 3 attempts"):
            embedder.embed(TEXTS)
        with pytest.raises(EmbeddingError, match="HTTP 400"):
            embedder.embed([REJECT_MARKER])


def test_the_second_run_makes_no_call(tmp_path: Path) -> None:
    with EmbeddingsServer(dimension=8) as server:
        embedder = OpenAIEmbedder("m", base_url=server.base_url, dimension=8)
        first = embed_cached([*TEXTS, TEXTS[0]], embedder, tmp_path, batch_size=2)
        # The repeated text is sent once: three texts in two calls of at most two.
        assert (first.calls, first.cache_hits, server.texts_sent) == (2, 0, 3)
        second = embed_cached([*TEXTS, TEXTS[0]], embedder, tmp_path, batch_size=2)
        assert (second.calls, second.cache_hits, server.texts_sent) == (0, 4, 3)
        assert second.results == first.results
        # Another dimension is another key: embedded again.
        other = OpenAIEmbedder("m", base_url=server.base_url, dimension=4)
        assert embed_cached(TEXTS, other, tmp_path).calls == 1


def test_one_refused_text_is_one_error_and_its_batch_is_kept(tmp_path: Path) -> None:
    with EmbeddingsServer(dimension=8) as server:
        embedder = OpenAIEmbedder("m", base_url=server.base_url, dimension=8)
        run = embed_cached([TEXTS[0], f"bad {REJECT_MARKER}", TEXTS[1]], embedder, tmp_path)
        good, bad, also_good = run.results
        assert isinstance(bad, EmbeddingError) and "HTTP 400" in bad.message
        assert good == pytest.approx(fake_vector(TEXTS[0], 8))
        assert also_good == pytest.approx(fake_vector(TEXTS[1], 8))
        # The batch, then each of its three texts alone.
        assert run.calls == 4


def test_wordllama_vectors_are_unit_length_and_similar_texts_are_near() -> None:
    embedder = WordLlamaEmbedder()
    assert (embedder.name, embedder.dimension) == ("wordllama-l2_supercat", 256)
    invoice, bill, cat = embedder.embed(
        ["the invoice payment is overdue", "the bill has not been paid", "a cat sleeps on a mat"]
    )
    assert len(invoice) == 256
    assert sum(x * x for x in invoice) == pytest.approx(1.0, abs=1e-4)

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(invoice, bill) > cosine(invoice, cat)
    assert len(WordLlamaEmbedder(64).embed(["short"])[0]) == 64


def test_wordllama_text_without_tokens_is_an_error(tmp_path: Path) -> None:
    run = embed_cached(["fine text", ""], WordLlamaEmbedder(), tmp_path)
    assert isinstance(run.results[1], EmbeddingError)
    assert isinstance(run.results[0], list) and len(run.results[0]) == 256


def test_wordllama_embeds_with_the_network_refused(tmp_path: Path) -> None:
    # Weights and tokenizer come inside the wheel: a fresh interpreter whose sockets cannot
    # connect, with an empty home (no Hugging Face cache), still embeds.
    done = run_offline(
        """
        from content_core.embeddings import EmbedderConfig, make_embedder
        embedder = make_embedder(EmbedderConfig())
        [vector] = embedder.embed(["offline embeddings work"])
        print(embedder.name, len(vector))
        """,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path.cwd())},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["wordllama-l2_supercat", "256"]
