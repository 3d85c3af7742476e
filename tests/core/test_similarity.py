"""Near-duplicate detection (content_core.search.similarity): shingles, the MinHash estimate
against the exact Jaccard, LSH candidate pairs; and the document_similarity stage run for real
(discovery and `run_batch`) over the corpus's copies of one email, across batches."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from content_core.discovery import discover_pending
from content_core.embeddings import EmbedderConfig
from content_core.pipeline import PipelineConfig, run_batch
from content_core.pipeline.config import ProcessingConfig
from content_core.search.similarity import (
    BANDS,
    NUM_PERM,
    THRESHOLD,
    Signed,
    band_keys,
    estimate_jaccard,
    minhash,
    near_pairs,
    shingles,
)
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CONFIG = PipelineConfig(
    processing=ProcessingConfig(isolate=False), embedder=EmbedderConfig(kind="off")
)
# The same email four ways (plain and base64 .eml share their bytes' text; UTF-16 .eml and
# .msg differ in header lines), and an email with an attachment as .eml and as .msg.
EMAIL_COPIES = [
    "eml/fake-email.eml",
    "eml/fake-email-b64.eml",
    "eml/fake-email-utf-16-le.eml",
    "msg/fake-email.msg",
]
ATTACHMENT_COPIES = ["eml/fake-email-attachment.eml", "msg/fake-email-attachment.msg"]
OTHERS = ["eml/mime-word-encoded-subject.eml", "msg/test_outlook_msg.msg", "zip/simple.zip"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", [], id="no-text"),
        pytest.param("--- *** ---", [], id="no-words"),
        pytest.param("Two words", ["two words"], id="fewer-words-than-a-shingle"),
        pytest.param(
            "One two Three four ONE TWO three",
            ["one two three", "two three four", "three four one", "four one two"],
            id="case-folded-and-distinct",
        ),
    ],
)
def test_shingles(text: str, expected: list[str]) -> None:
    assert shingles(text) == expected


def test_minhash_estimates_the_jaccard_of_the_shingles() -> None:
    words = [f"w{n}" for n in range(400)]
    a = " ".join(words)
    b = " ".join(words[:300] + [f"x{n}" for n in range(100)])
    exact = len(set(shingles(a)) & set(shingles(b))) / len(set(shingles(a)) | set(shingles(b)))
    sig_a, sig_b = minhash(a), minhash(b)
    assert sig_a is not None and sig_b is not None and len(sig_a) == NUM_PERM
    assert minhash(a) == sig_a  # a fixed seed: the same signature in every process
    assert abs(estimate_jaccard(sig_a, sig_b) - exact) < 0.12
    assert minhash("...") is None
    assert len(band_keys(sig_a)) == BANDS


def test_near_pairs_are_found_once_within_new_and_against_old() -> None:
    base = " ".join(f"w{n}" for n in range(300))
    close = base + " tail words added here"
    far = " ".join(f"z{n}" for n in range(300))
    signed = {
        name: Signed(name, sig)
        for name, text in (("base", base), ("close", close), ("far", far))
        if (sig := minhash(text)) is not None
    }
    new = [signed["base"], signed["far"]]
    pairs = near_pairs(new, [signed["close"]])
    assert [(a, b) for a, b, _ in pairs] == [(0, 2)]  # base ~ close (old); far alone
    assert pairs[0][2] >= THRESHOLD
    both = near_pairs([signed["base"], signed["close"]])
    assert [(a, b) for a, b, _ in both] == [(1, 0)]  # once, the later to the earlier


def _ingest(folder: Path, store: ContentStore) -> None:
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="mail")
    found = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0)
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, CONFIG)


def _pairs(store: ContentStore, view: str = "current_document_similarity") -> set[Any]:
    rows = store.query(
        f"SELECT path, other_path FROM {view} WHERE other_path IS NOT NULL"
    ).to_pylist()
    return {frozenset((r["path"], r["other_path"])) for r in rows}


@pytest.mark.timeout(600)
def test_copies_of_an_email_are_paired_and_a_deleted_copy_drops_out(
    tmp_path: Path, store: ContentStore
) -> None:
    folder = tmp_path / "mail"
    for name in [*EMAIL_COPIES[:3], *ATTACHMENT_COPIES[:1], *OTHERS]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / name, folder / name)
    _ingest(folder, store)
    first = _pairs(store)
    assert first == {
        frozenset(EMAIL_COPIES[i] for i in pair) for pair in ((0, 1), (0, 2), (1, 2))
    }
    signatures = store.query(
        "SELECT count(*) AS n FROM current_document_similarity WHERE other_path IS NULL "
        "AND signature IS NOT NULL"
    ).to_pylist()[0]["n"]
    documents = store.query(
        "SELECT count(*) AS n FROM current_normalised_artifacts WHERE text <> '' "
        "AND error_type IS NULL"
    ).to_pylist()[0]["n"]
    assert signatures == documents  # one signature row per document with words

    # Batch 2: the .msg copies arrive; they are compared with the store's current documents.
    for name in (EMAIL_COPIES[3], ATTACHMENT_COPIES[1]):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / name, folder / name)
    _ingest(folder, store)
    second = _pairs(store)
    assert first < second
    new = second - first
    assert frozenset(ATTACHMENT_COPIES) in new
    assert any(EMAIL_COPIES[3] in pair for pair in new)
    assert all(pair <= {*EMAIL_COPIES, *ATTACHMENT_COPIES} for pair in second)

    # Batch 3: the UTF-16 copy is deleted: its pairs leave the current view, not the table.
    (folder / EMAIL_COPIES[2]).unlink()
    _ingest(folder, store)
    third = _pairs(store)
    assert third == {pair for pair in second if EMAIL_COPIES[2] not in pair}
    assert _pairs(store, "document_similarity") >= second
