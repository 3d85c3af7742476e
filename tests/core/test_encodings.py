"""content_core.encodings: cl100k and o200k built offline from packaged ranks, and the
encoding each OpenAI model counts in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from content_core.chunking import ChunkingConfig, build_chunker
from content_core.compression import CompressionConfig, compress_text
from content_core.discovery import discover_pending
from content_core.encodings import encoding_name_for_model, load_packaged_encoding
from content_core.pipeline import (
    build_chunks,
    build_compressed_contexts,
    build_normalised_artifacts,
    build_raw_files,
)
from content_core.pipeline.config import ProcessingConfig
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore
from content_core.tokens import count_tokens, encoding_for_model, estimate_tokens, get_encoding
from tests.fixtures.corpus import CORPUS
from tests.support.offline import run_offline

# Token ids OpenAI publishes, not computed here: the cookbook's "How to count tokens with
# tiktoken" (its compare_encodings outputs) and openai/harmony's tests/test_harmony.py
# (test_encode_allowed_special; gpt-oss's encoding is o200k_base's ranks plus special tokens).
O200K_IDS = [
    ("hello world", [24912, 2375]),  # harmony
    ("<|start|>", [27, 91, 5236, 91, 29]),  # harmony: a special token's text, as ordinary text
    ("antidisestablishmentarianism", [493, 129901, 376, 160388, 21203, 2367]),  # cookbook
    ("お誕生日おめでとう", [8930, 9697, 243, 128225, 8930, 17693, 4344, 48669]),  # cookbook
]
# tiktoken's own tests (tests/test_encoding.py test_simple) and the cookbook.
CL100K_IDS = [
    ("hello world", [15339, 1917]),
    ("antidisestablishmentarianism", [519, 85342, 34500, 479, 8997, 2191]),
    ("お誕生日おめでとう", [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699]),
]


@pytest.mark.parametrize(("text", "ids"), O200K_IDS, ids=[t for t, _ in O200K_IDS])
def test_o200k_gives_the_published_token_ids(text: str, ids: list[int]) -> None:
    encoding = get_encoding("o200k_base")
    assert encoding.encode_ordinary(text) == ids
    assert count_tokens(text, "o200k_base") == len(ids)
    assert estimate_tokens(text, model="gpt-4o") == len(ids)
    assert encoding.decode(ids) == text


@pytest.mark.parametrize(("text", "ids"), CL100K_IDS, ids=[t for t, _ in CL100K_IDS])
def test_cl100k_gives_the_published_token_ids(text: str, ids: list[int]) -> None:
    assert get_encoding("cl100k_base").encode_ordinary(text) == ids
    assert estimate_tokens(text, model="gpt-4") == len(ids)


def test_packaged_encodings_keep_tiktokens_special_tokens() -> None:
    o200k = load_packaged_encoding("o200k_base")
    assert o200k.name == "o200k_base" and o200k.eot_token == 199999
    assert o200k.encode("<|endoftext|>", allowed_special="all") == [199999]
    # Built on o200k_base by tiktoken's own constructor, with the chat-format tokens added.
    harmony = load_packaged_encoding("o200k_harmony")
    assert harmony.encode("<|start|>", allowed_special="all") == [200006]
    assert harmony.encode_ordinary("hello world") == [24912, 2375]
    with pytest.raises(ValueError, match="offline"):
        load_packaged_encoding("r50k_base")  # tiktoken knows it; no ranks are packaged
    with pytest.raises(ValueError, match="offline"):
        load_packaged_encoding("no_such_encoding")


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),  # dated name
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-4.5-preview", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5.1-codex", "o200k_base"),  # a point release of a known family
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-oss-120b", "o200k_base"),
        ("openai:gpt-4.1", "o200k_base"),  # provider prefix
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base"),  # fine-tune of gpt-4o-mini
        ("gpt-7-preview", "o200k_base"),  # unknown OpenAI family: the current encoding
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo-2024-04-09", "cl100k_base"),  # "gpt-4" with a suffix, not gpt-4o
        ("gpt-3.5-turbo-0125", "cl100k_base"),
        ("azure/gpt-35-turbo", "cl100k_base"),  # Azure's spelling
        ("text-embedding-3-small", "cl100k_base"),
        ("ft:gpt-3.5-turbo-0125:acme::xyz", "cl100k_base"),
        ("claude-sonnet-4-5", None),  # other vendors: no public tokenizer
        ("gemini-2.5-pro", None),
        ("llama-3.1-8b", None),
    ],
)
def test_models_map_to_their_encoding(model: str, encoding: str | None) -> None:
    assert encoding_name_for_model(model) == encoding
    loaded = encoding_for_model(model)
    assert (loaded.name if loaded is not None else None) == encoding


def test_gpt4o_counts_differ_from_cl100k_where_the_encodings_do() -> None:
    text = "お誕生日おめでとう"
    assert estimate_tokens(text, model="gpt-4o") == 8
    assert estimate_tokens(text, model="gpt-4") == 9


def test_chunk_and_budget_configs_take_the_target_model() -> None:
    chunking = ChunkingConfig(model="gpt-4.1-mini", chunk_size=64, chunk_overlap=0)
    assert chunking.encoding_name == "o200k_base"
    # The model is not in the fingerprint, its encoding is.
    same = ChunkingConfig(encoding_name="o200k_base", chunk_size=64, chunk_overlap=0)
    assert chunking.fingerprint() == same.fingerprint()
    assert chunking.fingerprint() != ChunkingConfig(chunk_size=64, chunk_overlap=0).fingerprint()
    assert ChunkingConfig(model="claude-sonnet-4").encoding_name == "cl100k_base"
    with pytest.raises(ValueError, match="counts in o200k_base"):
        ChunkingConfig(model="gpt-4o", encoding_name="cl100k_base")

    text = "\n\n".join(f"お誕生日おめでとう paragraph {i}, " * 12 for i in range(30))
    o200k = get_encoding("o200k_base")
    chunks = build_chunker(chunking).chunk(text)
    assert len(chunks) > 1
    for chunk in chunks:
        count = len(o200k.encode_ordinary(chunk.content))
        assert chunk.metadata["token_count"] == count <= 64

    budget = CompressionConfig(model="o3", max_tokens=40, strategy="truncation")
    assert budget.encoding_name == "o200k_base"
    assert CompressionConfig().fingerprint() != budget.model_copy(
        update={"strategy": "extractive", "max_tokens": 1024}
    ).fingerprint()
    result = compress_text(text, budget)
    assert result.tokens_before == len(o200k.encode_ordinary(text))
    assert result.tokens_after == len(o200k.encode_ordinary(result.text)) <= 40


def test_both_encodings_load_with_every_connection_refused(tmp_path: object) -> None:
    # A fresh interpreter whose sockets cannot connect, and an empty tiktoken cache: the
    # encodings come from the packaged ranks alone.
    import os

    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "PYTHONPATH": "."}
    result = run_offline(
        """
        from content_core.tokens import estimate_tokens, get_encoding
        print(get_encoding("o200k_base").encode_ordinary("hello world"))
        print(get_encoding("cl100k_base").encode_ordinary("hello world"))
        print(estimate_tokens("hello world", model="gpt-5-mini"))
        """,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["[24912, 2375]", "[15339, 1917]", "2"]
    assert list(os.scandir(str(tmp_path))) == []  # nothing was cached (so nothing fetched)


def test_stage_rows_record_the_encoding_their_counts_are_in(tmp_path: Path) -> None:
    """A batch chunked and compressed for gpt-4o: every chunks and compressed_contexts row names
    o200k_base, and its counts are that encoding's (the UDHR in many scripts, where cl100k and
    o200k differ most)."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(CORPUS / "txt" / "UDHR_first_article_all.txt", folder)
    store = ContentStore(tmp_path / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder))
    [batch_id] = discover_pending(source, store, set(), time_budget_s=60, settle_s=0.0).discovered
    build_raw_files(store, batch_id)
    build_normalised_artifacts(store, batch_id, ProcessingConfig())
    build_chunks(store, batch_id, ChunkingConfig(chunk_size=256, chunk_overlap=0, model="gpt-4o"))
    build_compressed_contexts(store, batch_id, CompressionConfig(max_tokens=300, model="gpt-4o"))

    chunks = store.read_rows("chunks", batch_id).to_pylist()
    assert len(chunks) > 1
    for row in chunks:
        assert row["encoding"] == "o200k_base"
        assert row["token_count"] == count_tokens(row["content"], "o200k_base")
    # Counted in cl100k the same chunks would say otherwise.
    assert sum(r["token_count"] for r in chunks) != sum(
        count_tokens(r["content"], "cl100k_base") for r in chunks
    )
    [context] = store.read_rows("compressed_contexts", batch_id).to_pylist()
    assert context["encoding"] == "o200k_base"
    assert context["tokens_after"] == count_tokens(context["text"], "o200k_base") <= 300
