"""Korean, Chinese, Japanese and Thai phrases of corpus files found in the top 5 by the real
CLI (`content-pipeline ingest`, then `content-pipeline search` in its default mode), with the
base install's bigrams and with the segmenters of the `cjk` extra; the index records which
tokenizer built it and is built anew when that changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from content_core.search.segment import SEGMENTERS_VARIABLE
from content_core.store.search_sql import BIGRAM_TOKENIZER
from tests.fixtures.corpus import CORPUS, search_queries
from tests.support.cli import run_cli

pytestmark = pytest.mark.timeout(900)

# The corpus files the phrases come from, and an English file for company.
FILES = (
    "pdf/korean-text-with-tables.pdf",
    "txt/UDHR_first_article_all.txt",
    "csv/test_mskanji.csv",
    "txt/fake-text.txt",
)
LANGUAGES = ("ko", "zh", "ja", "th")
# The known-answer set's first phrase in each of those languages whose answers are among FILES
# (each search is a process; tests/core/test_segment.py has more phrases).
PHRASES = list(
    {
        known.language: known
        for known in reversed(search_queries())
        if known.language in LANGUAGES and known.kind == "phrase" and known.answers <= set(FILES)
    }.values()
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("languages")
    folder = root / "inbox"
    for name in FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / name, folder / name)
    store, home = root / "store", root / "home"
    done = run_cli("ingest", str(folder), home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr
    return store, home


def _tokenizer(store: Path) -> str:
    connection = duckdb.connect(str(store / "search.duckdb"), read_only=True)
    try:
        row = connection.execute("SELECT format FROM index_meta").fetchone()
    finally:
        connection.close()
    assert row is not None
    return str(row[0])


def test_the_phrase_set_covers_each_language() -> None:
    assert {known.language for known in PHRASES} == set(LANGUAGES)
    # The set as a whole: phrases, paraphrases and questions in at least five languages.
    everything = search_queries()
    assert {known.kind for known in everything} == {"phrase", "paraphrase", "question"}
    assert len({known.language for known in everything}) >= 5


@pytest.mark.parametrize("segmenters", ["none", "auto"], ids=["bigrams", "segmenters"])
def test_cjk_and_thai_phrases_are_in_the_top_five(
    store: tuple[Path, Path], segmenters: str
) -> None:
    root, home = store
    for known in PHRASES:
        done = run_cli(
            "search",
            known.query,
            "--k",
            "5",
            "--format",
            "jsonl",
            home=home,
            store=root,
            **{SEGMENTERS_VARIABLE: segmenters},
        )
        assert done.returncode == 0, done.stdout + done.stderr
        paths = [json.loads(line)["path"] for line in done.stdout.splitlines()]
        assert set(paths[:5]) & known.answers, (known.query, paths)
    # The index says which tokenizer built it: the search rebuilt it for this setting.
    recorded = _tokenizer(root)
    assert recorded.endswith(f"tokenizer={BIGRAM_TOKENIZER}") == (segmenters == "none")
    assert ("+segment(ko:kiwipiepy-" in recorded) == (segmenters == "auto")
