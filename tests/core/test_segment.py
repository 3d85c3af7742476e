"""The BM25 index's tokenizer per language: Latin terms as `fts` makes them, words of other
scripts, character bigrams of Chinese, Japanese, Korean and Thai (the base install, all SQL),
the segmenters of the `cjk` extra, and BM25 over each on a real DuckDB index."""

from __future__ import annotations

import duckdb
import pytest

from content_core.search import SearchFilters
from content_core.search.bm25 import bm25_ranking
from content_core.search.segment import (
    SEGMENTERS_VARIABLE,
    active_tokenizer,
    bigram_tokenizer,
    register_tokenizer,
    segment_function,
    segment_words,
)
from content_core.search.terms import apply_rows, create_tables
from content_core.store import load_extension
from content_core.store.search_sql import (
    BIGRAM_TOKENIZER,
    bigram_terms_sql,
    latin_terms_sql,
    search_macro_statements,
    terms_sql,
)

# Sentences of tests/corpus files: the Korean PDF, and UDHR article 1 (txt/UDHR_...).
KOREAN = "무이자할부, 다이어트할부, 삼성카드 할인이 적용된 적립 제외 대상"
CHINESE = "人人生而自由,在尊严和权利上一律平等。他们赋有理性和良心,并应以兄弟关系的精神相对待。"
JAPANESE = "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。"
THAI = "มนุษย์ทั้งปวงเกิดมามีอิสระและเสมอภาคกันในศักดิ์ศรีและสิทธิ ต่างในตนมีเหตุผลและมโนธรรม"
RUSSIAN = "Все люди рождаются свободными и равными в своем достоинстве и правах."
ENGLISH = "All human beings are born free and equal in dignity and rights."


def _connection() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    load_extension(connection, "fts")
    return connection


def _terms(connection: duckdb.DuckDBPyConnection, text: str) -> list[str]:
    row = connection.execute(
        f"SELECT {terms_sql('$1', segment_function(connection))}", [text]
    ).fetchone()
    assert row is not None
    return [str(term) for term in row[0]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Korean words are runs of syllables between spaces: each run's bigrams.
        ("적립 제외 대상입니다", ["적립", "제외", "대상", "상입", "입니", "니다"]),
        ("人人生而自由", ["人人", "人生", "生而", "而自", "自由"]),
        # Kana and kanji in one run; the long vowel mark (script Common) stays in the run.
        (
            "自由であり コンピューター",
            ["自由", "由で", "であ", "あり", "コン", "ンピ", "ピュ", "ュー", "ータ", "ター"],
        ),
        ("ภาษาไทย", ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]),
        # A one-character run is its own term; Latin first, then the bigrams.
        ("Zebras 猫", ["zebra", "猫"]),
        # Words of other scripts: lower case, not stemmed.
        ("Привет МИР नमस्ते", ["привет", "мир", "नमस्ते"]),
        # Each symbol (emoji) is a term: MANIFEST rows look for 👨 and 🤠😅.
        ("Cowboy 🤠😅!", ["cowboi", "🤠", "😅"]),
    ],
    ids=[
        "korean",
        "chinese",
        "japanese-kana-kanji",
        "thai",
        "single-han",
        "other-scripts",
        "emoji",
    ],
)
def test_bigram_terms_of_each_script(text: str, expected: list[str]) -> None:
    assert _terms(_connection(), text) == expected


@pytest.mark.parametrize(
    "text",
    [ENGLISH, "The zebras ran quickly; naïve Straße, e-mail 2024 v1.2 ünïcödé", "", "   "],
    ids=["sentence", "accents-and-punctuation", "empty", "blank"],
)
def test_latin_text_keeps_the_fts_terms_exactly(text: str) -> None:
    """Text without other scripts has exactly the terms it had before (`fts`'s tokens and
    Porter stems), so English scores do not move."""
    connection = _connection()
    row = connection.execute(f"SELECT {latin_terms_sql('$1')}", [text]).fetchone()
    assert row is not None
    assert _terms(connection, text) == list(row[0])


def _index(connection: duckdb.DuckDBPyConnection, texts: dict[str, str]) -> None:
    create_tables(connection)
    rows = ", ".join(f"('{name}', 's', '{name}.txt', ?)" for name in texts)
    connection.execute(
        "CREATE TEMP TABLE _c AS SELECT 'b1' AS batch_id, chunk_id, source_id, path, "
        "'text/plain' AS media_type, NULL::INTEGER AS page_start, NULL::INTEGER AS page_end, "
        "NULL::VARCHAR AS breadcrumb, NULL::VARCHAR AS metadata, NULL::VARCHAR AS error_type, "
        f"content FROM (VALUES {rows}) t(chunk_id, source_id, path, content)",
        list(texts.values()),
    )
    connection.execute(
        "CREATE TEMP TABLE _r AS SELECT DISTINCT batch_id, source_id, path, 1::BIGINT AS "
        "batch_seq, 'added' AS change, media_type FROM _c"
    )
    apply_rows(connection, "_r", "_c")


QUERIES = [
    ("적립 제외 대상", "ko"),
    ("적립 제외", "ko"),
    ("在尊严和权利上一律平等", "zh"),
    ("兄弟关系的精神", "zh"),
    ("生まれながらにして自由であり", "ja"),
    ("尊厳と権利", "ja"),
    ("เสมอภาคกันในศักดิ์ศรีและสิทธิ", "th"),
    ("рождаются свободными", "ru"),
    ("equal in dignity", "en"),
]


@pytest.mark.parametrize("segmenters", ["none", "auto"])
@pytest.mark.parametrize(("query", "answer"), QUERIES, ids=[q for q, _ in QUERIES])
def test_bm25_finds_each_language_with_and_without_segmenters(
    monkeypatch: pytest.MonkeyPatch, segmenters: str, query: str, answer: str
) -> None:
    """The same tokenizer at index and query time: `none` is the base install (bigrams in
    SQL, nothing registered), `auto` the segmenters of the `cjk` extra (installed by `dev`)."""
    monkeypatch.setenv(SEGMENTERS_VARIABLE, segmenters)
    connection = _connection()
    tokenizer = register_tokenizer(connection)
    assert (segment_function(connection) is None) == (segmenters == "none")
    assert tokenizer == active_tokenizer()
    _index(
        connection,
        {"ko": KOREAN, "zh": CHINESE, "ja": JAPANESE, "th": THAI, "ru": RUSSIAN, "en": ENGLISH},
    )
    ranked = bm25_ranking(connection, query, 3, SearchFilters())
    assert ranked and ranked[0][0] == answer


def test_the_tokenizer_names_what_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEGMENTERS_VARIABLE, "none")
    assert active_tokenizer() == bigram_tokenizer()
    assert active_tokenizer().name == BIGRAM_TOKENIZER
    monkeypatch.setenv(SEGMENTERS_VARIABLE, "auto")
    segmented = active_tokenizer()
    # The dev extra installs every segmenter: each script is named with its package version.
    assert dict(segmented.segmenters).keys() == {"ko", "ja", "zh", "th"}
    assert segmented.name.startswith(BIGRAM_TOKENIZER + "+segment(ko:kiwipiepy-")
    monkeypatch.setenv(SEGMENTERS_VARIABLE, "some")
    with pytest.raises(ValueError, match=SEGMENTERS_VARIABLE):
        active_tokenizer()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("적립 제외 대상", ["적립", "제외", "대상"]),
        ("すべての人間は", ["すべて", "の", "人間", "は"]),
        ("ภาษาไทยง่าย", ["ภาษาไทย", "ง่าย"]),
        ("自由", ["自由"]),
        ("ascii only, 123", []),
        (None, []),
    ],
    ids=["kiwipiepy", "fugashi", "pythainlp", "rjieba", "latin", "null"],
)
def test_segmenters_cut_words(
    monkeypatch: pytest.MonkeyPatch, text: str | None, words: list[str]
) -> None:
    monkeypatch.setenv(SEGMENTERS_VARIABLE, "auto")
    assert segment_words(text, active_tokenizer()) == words
    # Without segmenters the same function gives the bigrams SQL gives.
    row = _connection().execute(f"SELECT {bigram_terms_sql('$1')}", [text]).fetchone()
    assert row is not None
    assert segment_words(text, bigram_tokenizer()) == list(row[0] or [])


def test_the_sql_macro_scores_cjk_and_thai_as_the_base_install_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`search_chunks` runs only SQL, hence bigrams: over the same chunks its scores equal the
    index's when no segmenter runs (the base install)."""
    monkeypatch.setenv(SEGMENTERS_VARIABLE, "none")
    connection = _connection()
    register_tokenizer(connection)
    texts = {"ko": KOREAN, "zh": CHINESE, "ja": JAPANESE, "th": THAI, "ru": RUSSIAN, "en": ENGLISH}
    _index(connection, texts)
    connection.execute("CREATE VIEW current_chunks AS SELECT * FROM _c")
    for statement in search_macro_statements():
        connection.execute(statement)
    for query, _ in QUERIES:
        ours = dict(bm25_ranking(connection, query, 10, SearchFilters()))
        rows = connection.execute(
            "SELECT chunk_id, score FROM search_chunks(?, 10)", [query]
        ).fetchall()
        assert ours and dict(rows) == pytest.approx(ours), query
