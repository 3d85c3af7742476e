"""Search over real ingests through the real CLI: a new batch is searchable at once and a
deleted file drops out, the `search` command in both formats (highlight, parent context,
filters, no Dagster import), the `search_chunks` macro in the DuckDB CLI, and the seeds' RAG."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from content_core import RAG, Searcher, SearchFilters, SearchHit, format_hits
from content_core.embeddings import WordLlamaEmbedder
from content_core.store import extension_path
from tests.conftest import SAMPLE_INBOX
from tests.support.cli import main_imports, run_cli
from tests.support.embeddings_server import EmbeddingsServer

pytestmark = pytest.mark.timeout(900)
DUCKDB_CLI = Path(sys.executable).parent / "duckdb"

ZEBRA = "The quarterly zebrafish census counted seven aquariums in the east wing."
CONTRACT = "# Termination\n\nEither party may end the agreement with thirty days notice.\n"


@dataclass(frozen=True)
class Stores:
    """A store of two sources (`docs`: text, Markdown and the sample PDF; `lab`: one text)."""

    store: Path
    home: Path
    docs: str
    lab: str


def _ingest(folder: Path, home: Path, store: Path, **env: str) -> None:
    done = run_cli("ingest", str(folder), home=home, store=store, **env)
    assert done.returncode == 0, done.stdout + done.stderr


def _search(store: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli("search", *args, home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _jsonl(store: Path, home: Path, *args: str) -> list[dict[str, object]]:
    done = _search(store, home, *args, "--format", "jsonl")
    return [json.loads(line) for line in done.stdout.splitlines()]


def _bm25(store: Path, home: Path, *args: str) -> list[dict[str, object]]:
    """Keyword hits only: a vector search always finds a nearest chunk."""
    return _jsonl(store, home, *args, "--mode", "bm25")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Stores:
    root = tmp_path_factory.mktemp("search")
    docs, lab = root / "docs", root / "lab"
    docs.mkdir()
    lab.mkdir()
    (docs / "zebra.txt").write_text(ZEBRA)
    (docs / "contract.md").write_text(CONTRACT)
    shutil.copy(SAMPLE_INBOX / "handbook.pdf", docs / "handbook.pdf")
    (lab / "tank.txt").write_text("Zebrafish tanks are cleaned every morning by the lab.")
    store, home = root / "store", root / "home"
    _ingest(docs, home, store)
    _ingest(lab, home, store)
    sources = {hit.path: hit.source_id for hit in Searcher(store).search("zebrafish", 10, "bm25")}
    return Stores(store, home, sources["zebra.txt"], sources["tank.txt"])


def test_a_new_batch_is_searchable_and_a_deleted_file_drops_out(tmp_path: Path) -> None:
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    folder.mkdir()
    (folder / "zebra.txt").write_text(ZEBRA)
    _ingest(folder, home, store)
    assert [hit["path"] for hit in _bm25(store, home, "zebrafish")] == ["zebra.txt"]
    assert _bm25(store, home, "platypus") == []

    (folder / "platypus.txt").write_text("A platypus lays eggs although it is a mammal.")
    _ingest(folder, home, store)
    assert [hit["path"] for hit in _bm25(store, home, "platypus")] == ["platypus.txt"]
    # Vectors always have a nearest chunk: the new one must come first.
    for mode in ("vector", "hybrid"):
        hits = _jsonl(store, home, "platypus", "--mode", mode)
        assert hits[0]["path"] == "platypus.txt", mode

    (folder / "zebra.txt").unlink()
    _ingest(folder, home, store)
    assert _bm25(store, home, "zebrafish") == []
    assert [hit["path"] for hit in _bm25(store, home, "platypus")] == ["platypus.txt"]
    for mode in ("vector", "hybrid"):
        paths = {hit["path"] for hit in _jsonl(store, home, "zebrafish", "--mode", mode)}
        assert paths == {"platypus.txt"}, mode
    # The macro reads the same current chunks.
    assert _macro(store, "zebrafish") == []


def test_the_table_shows_path_page_score_and_the_match_highlighted(stores: Stores) -> None:
    out = _search(stores.store, stores.home, "zebrafish census").stdout
    first = out.split("\n\n")[0]
    assert first.startswith(f"1. {stores.docs}:zebra.txt  score ")
    assert "**zebrafish** **census**" in first
    pdf = _search(stores.store, stores.home, "operator handbook", "-k", "1").stdout
    assert pdf.startswith(f"1. {stores.docs}:handbook.pdf  pp.1-2  score ")
    assert "**Handbook**" in pdf


def test_jsonl_has_one_object_per_hit_with_the_keys_scripts_need(stores: Stores) -> None:
    hits = _jsonl(stores.store, stores.home, "zebrafish", "--k", "5", "--mode", "bm25")
    assert {hit["path"] for hit in hits} == {"zebra.txt", "tank.txt"}
    for hit in hits:
        assert {"source_id", "path", "page_start", "score", "content"} <= hit.keys()
        assert "zebrafish" in str(hit["content"]).lower()
    scores = [float(str(hit["score"])) for hit in hits]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0


def test_filters_on_source_path_media_type_and_page(stores: Stores) -> None:
    searcher = Searcher(stores.store)

    def paths(query: str, **given: object) -> set[str]:
        filters = SearchFilters(**given)  # type: ignore[arg-type]
        return {hit.path for hit in searcher.search(query, 10, "bm25", filters)}

    assert paths("zebrafish") == {"zebra.txt", "tank.txt"}
    assert paths("zebrafish", source_id=stores.lab) == {"tank.txt"}
    assert paths("zebrafish", path_prefix="zeb") == {"zebra.txt"}
    assert paths("the", media_type="application/pdf") == {"handbook.pdf"}
    assert paths("inbox", page_from=2, page_to=2) == {"handbook.pdf"}
    assert paths("inbox", page_from=7) == set()
    # A text file has no pages: a page filter leaves it out.
    assert paths("zebrafish", page_from=1) == set()
    cli = _jsonl(stores.store, stores.home, "zebrafish", "--source-id", stores.lab)
    assert [hit["path"] for hit in cli] == ["tank.txt"]
    searcher.close()


def test_the_search_path_imports_no_dagster(stores: Stores) -> None:
    argv = ["search", "zebrafish", "--store", str(stores.store)]
    assert main_imports(argv, ("dagster", "content_core.pipeline")) == "0 []"


def _macro(store: Path, query: str) -> list[dict[str, str]]:
    """Rows of `search_chunks(query, 5)` as the venv's DuckDB CLI prints them (JSON)."""
    fts = str(extension_path("fts")).replace("'", "''")
    sql = f"LOAD '{fts}'; SELECT path, score FROM search_chunks('{query}', 5);"
    done = subprocess.run(
        [str(DUCKDB_CLI), "-readonly", "-json", str(store / "content.duckdb"), "-c", sql],
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, str]] = json.loads(done.stdout or "[]")
    return rows


def test_the_sql_macro_in_the_duckdb_cli_scores_as_the_index(stores: Stores) -> None:
    rows = _macro(stores.store, "zebrafish census")
    hits = Searcher(stores.store).search("zebrafish census", 5, "bm25")
    assert [row["path"] for row in rows] == [hit.path for hit in hits]
    assert [float(row["score"]) for row in rows] == pytest.approx([hit.score for hit in hits])


def test_the_seeds_rag_api(stores: Stores) -> None:
    rag = RAG(store=stores.store, k=3)
    assert rag.mode == "bm25" and rag.index() >= 4
    hits = rag.search("zebrafish census")
    assert isinstance(hits[0], SearchHit) and hits[0].path == "zebra.txt"
    assert hits[0].source == f"{stores.docs}:zebra.txt" and hits[0].parent_content == ""
    again = asyncio.run(rag.asearch("zebrafish census"))
    assert again == hits
    assert asyncio.run(rag.aindex()) == rag.index()
    text = format_hits(hits)
    assert text.startswith(f"[1] {stores.docs}:zebra.txt (score ") and ZEBRA in text
    rag.close()


def test_the_hierarchical_chunker_brings_the_parent_context(tmp_path: Path) -> None:
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    folder.mkdir()
    filler = " ".join(f"paragraph {n} describes routine maintenance." for n in range(400))
    (folder / "manual.txt").write_text(filler + " The kiwifruit valve must stay shut. " + filler)
    _ingest(folder, home, store, CONTENT_CHUNKER="hierarchical")
    hits = RAG(store=store).search("kiwifruit valve", 1)
    assert hits[0].parent_content is not None and "kiwifruit" in hits[0].parent_content
    assert len(hits[0].parent_content) > len(hits[0].content)
    assert "[Parent context: " in format_hits(hits)
    table = _search(store, home, "kiwifruit valve", "-k", "1").stdout
    assert "   parent: " in table and "**kiwifruit**" in table


def test_the_cli_embeds_queries_with_the_assets_configured_embedder(tmp_path: Path) -> None:
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    folder.mkdir()
    (folder / "zebra.txt").write_text(ZEBRA)
    (folder / "tank.txt").write_text("Zebrafish tanks are cleaned every morning by the lab.")
    with EmbeddingsServer(dimension=16) as server:
        env = {
            "CONTENT_EMBEDDER": "openai",
            "CONTENT_EMBED_URL": server.base_url,
            "CONTENT_EMBED_MODEL": "test-embed",
        }
        _ingest(folder, home, store, **env)
        sent = server.texts_sent
        done = run_cli(
            "search", ZEBRA, "--mode", "vector", "--format", "jsonl", home=home, store=store, **env
        )
        assert done.returncode == 0, done.stderr
        hits = [json.loads(line) for line in done.stdout.splitlines()]
        # The query went to the store's model, and met the vector of the same text.
        assert server.texts_sent == sent + 1
        assert hits[0]["path"] == "zebra.txt" and float(hits[0]["score"]) > 0.99
    # Without the variables the default model is asked, whose vectors the store lacks.
    assert _jsonl(store, home, ZEBRA, "--mode", "vector") == []


def test_rag_searches_with_its_embedder_and_loads_the_vectors_once(stores: Stores) -> None:
    rag = RAG(embed=WordLlamaEmbedder(), store=stores.store, k=3)
    assert rag.mode == "hybrid"
    first = rag.search(ZEBRA, mode="vector")
    assert first[0].path == "zebra.txt" and first[0].score > 0.99
    assert rag.search("zebrafish census")[0].path == "zebra.txt"  # hybrid
    index = rag.vector_index
    assert index is not None and index.loads == 1
    assert asyncio.run(rag.asearch(ZEBRA, mode="vector")) == first
    assert index.loads == 1
    rag.close()
    # The seeds hand in a function: it embeds the query, as the model the store holds.
    calls: list[list[str]] = []
    model = WordLlamaEmbedder()

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return model.embed(texts)

    seeded = RAG(embed=embed, store=stores.store, k=3)
    assert seeded.search(ZEBRA, mode="vector") == first
    assert [ZEBRA] in calls
    seeded.close()
    # An embedder of another model meets none of the store's vectors.
    other = RAG(embed=WordLlamaEmbedder(64), store=stores.store, mode="vector")
    assert other.search(ZEBRA) == []
    other.close()


def test_a_document_is_found_by_its_title_alone(tmp_path: Path) -> None:
    """Each format's declared title is a normalised_artifacts column, and `search` finds the
    document by a title word its body does not hold (the title is indexed with its chunks)."""
    from content_core.store import ContentStore
    from tests.fixtures.titled import titled_doc, titled_docx, titled_html, titled_odt, titled_pdf

    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    folder.mkdir()
    body = "Minutes of the meeting about the budget and the delivery dates"
    titles = {
        "page.html": ("Marzipan harbour survey", titled_html),
        "report.docx": ("Quokka census ledger", titled_docx),
        "notes.odt": ("Xylophone repair notebook", titled_odt),
        "scan.pdf": ("Pelican railway timetable", titled_pdf),
        "old.doc": ("Wombat weather diary", titled_doc),
    }
    for name, (title, build) in titles.items():
        (folder / name).write_bytes(build(title, body))
    _ingest(folder, home, store)
    rows = ContentStore(store).query(
        "SELECT path, title, text FROM current_normalised_artifacts"
    ).to_pylist()
    assert {r["path"]: r["title"] for r in rows} == {n: t for n, (t, _) in titles.items()}
    assert all(body in r["text"] for r in rows)
    for name, (title, _) in titles.items():
        word = title.split()[0]
        hits = _bm25(store, home, word.lower())
        assert [(h["path"], h["title"]) for h in hits] == [(name, title)], word
    printed = _search(store, home, "quokka", "--mode", "bm25").stdout
    assert "report.docx" in printed and "title: **Quokka** census ledger" in printed
