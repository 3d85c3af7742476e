"""Search hits collapsed per document (content_core.search.collapse): the rules on hand-made
hits, then `Searcher.search` on a real store of corpus files (copies of one email, a zip of
many chunks) built by discovery and `run_batch`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from content_core.discovery import discover_pending
from content_core.embeddings import EmbedderConfig
from content_core.pipeline import PipelineConfig, run_batch
from content_core.pipeline.config import ProcessingConfig
from content_core.search import Searcher, SearchHit
from content_core.search.collapse import collapse_hits, collapse_search
from content_core.sources import LocalFolderSource, LocalFolderSourceConfig
from content_core.store import ContentStore

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CONFIG = PipelineConfig(
    processing=ProcessingConfig(isolate=False), embedder=EmbedderConfig(kind="off")
)
FILES = [
    "eml/fake-email.eml",
    "eml/fake-email-b64.eml",
    "eml/fake-email-utf-16-le.eml",
    "msg/fake-email.msg",
    "zip/test_files.zip",
    "pdf/markitdown-test.pdf",
    "msg/test_outlook_msg.msg",
]


def _hit(chunk: str, path: str, score: float) -> SearchHit:
    return SearchHit(chunk_id=chunk, score=score, content=chunk, source_id="s", path=path)


def test_one_hit_per_document_with_the_rest_counted_and_duplicates_folded() -> None:
    hits = [
        _hit("a1", "a.eml", 9),
        _hit("z1", "z.zip", 8),
        _hit("z2", "z.zip", 7),
        _hit("b1", "b.msg", 6),  # a near-duplicate of a.eml: folded into its hit
        _hit("z3", "z.zip", 5),
        _hit("b2", "b.msg", 4),  # a folded file's chunk is not counted again
        _hit("c1", "c.txt", 3),  # a third document, beyond k = 2
        _hit("d1", "d.txt", 2),  # same group as c.txt, which is not shown: left out too
    ]
    groups = {("s", "a.eml"): ("s", "a.eml"), ("s", "b.msg"): ("s", "a.eml"),
              ("s", "c.txt"): ("s", "c.txt"), ("s", "d.txt"): ("s", "c.txt")}
    copies = {"z1": [("s", "z.zip"), ("s", "copy-of-z.zip")]}
    collapsed = collapse_hits(hits, 2, groups, copies)
    assert [(h.path, h.chunk_id, h.more_in_document, h.also_in) for h in collapsed] == [
        ("a.eml", "a1", 0, ("s:b.msg",)),
        ("z.zip", "z1", 2, ("s:copy-of-z.zip",)),
    ]
    every = collapse_hits(hits, 10, groups, copies)
    assert [h.path for h in every] == ["a.eml", "z.zip", "c.txt"]
    assert every[2].also_in == ("s:d.txt",)


def test_a_search_fetches_deeper_while_it_finds_fewer_documents_than_asked() -> None:
    chunks = [_hit(f"z{n}", "z.zip", 100 - n) for n in range(30)] + [_hit("a", "a.txt", 1)]
    asked: list[int] = []

    def fetch(n: int) -> tuple[list[SearchHit], dict[str, list[tuple[str, str]]], int]:
        asked.append(n)
        return chunks[:n], {}, min(n, len(chunks))

    found = collapse_search(fetch, 2, {})
    assert asked == [10, 40] and [h.path for h in found] == ["z.zip", "a.txt"]
    assert found[0].more_in_document == 29


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ContentStore:
    root = tmp_path_factory.mktemp("collapse")
    folder = root / "mail"
    for name in FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / name, folder / name)
    store = ContentStore(root / "store")
    source = LocalFolderSource(LocalFolderSourceConfig(folder=folder), source_id="mail")
    found = discover_pending(source, store, set(), time_budget_s=1e9, settle_s=0.0)
    for batch_id in found.batch_ids:
        run_batch(store, batch_id, CONFIG)
    return store


@pytest.mark.timeout(600)
def test_searcher_folds_the_copies_of_an_email_into_one_hit(store: ContentStore) -> None:
    with Searcher(store.root) as searcher:
        chunks = searcher.search("roses violets test email", 5, "bm25", per_document=False)
        documents = searcher.search("roses violets test email", 5, "bm25")
    copies = {hit.path for hit in chunks if hit.path.split("/")[1].startswith("fake-email")}
    assert len(copies) >= 3  # today: the copies take most places
    first = documents[0]
    assert first.path.split("/")[1].startswith("fake-email")
    folded = {first.path, *(name.split(":", 1)[1] for name in first.also_in)}
    assert folded == set(FILES[:4])
    assert len({hit.path for hit in documents}) == len(documents)


@pytest.mark.timeout(600)
def test_searcher_gives_a_zip_of_many_chunks_one_place(store: ContentStore) -> None:
    with Searcher(store.root) as searcher:
        chunks = searcher.search("AutoGen multi-agent conversation", 5, "bm25",
                                 per_document=False)
        documents = searcher.search("AutoGen multi-agent conversation", 5, "bm25")
    assert [hit.path for hit in chunks].count("zip/test_files.zip") >= 2
    paths = [hit.path for hit in documents]
    assert paths.count("zip/test_files.zip") == 1
    zipped = documents[paths.index("zip/test_files.zip")]
    assert zipped.more_in_document >= 1
    assert "pdf/markitdown-test.pdf" in paths  # the next document gets the place
