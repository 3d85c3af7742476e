"""`type="data"` parts: each source becomes readable text that says where it came from.

Sources are dispatched by type through `RESOLVERS` (`table`, `kb_document`, `kb_collection`,
`api`, `model`); `DataSources.resolvers` adds or replaces types (e.g. `mcp_resource`). A source
that carries its payload inline (`rows`, `content`, `data` or `value`) is formatted as given.
A source that fails becomes text naming the failure; nothing raises out of `format_data`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field, field_validator

from content_core.agents.base import Agent
from content_core.chat.fetch import FetchPolicy, fetch_url, is_http_url
from content_core.errors import ContentError, LLMError, SourceError
from content_core.store import StoreLayout

__all__ = [
    "RESOLVERS",
    "ApiEndpoint",
    "DataContext",
    "DataSources",
    "SourceResolver",
    "SourceText",
    "format_data",
]

logger = logging.getLogger(__name__)

_INLINE_KEYS = ("rows", "content", "data", "value")


class ApiEndpoint(BaseModel):
    """An HTTP endpoint a user configured for `api` sources: its URL and request headers
    (credentials stay here, never in messages; they are not sent on to another origin)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    headers: dict[str, str] = Field(default_factory=dict, repr=False)

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not is_http_url(value):
            raise ValueError("an api endpoint is an http(s) URL")
        return value


class DataSources(BaseModel):
    """What `data` parts may read: the content store (`table`, `kb_document`,
    `kb_collection`), a `RAG` for collection search (default: BM25 over `store`), the agent
    that answers `model` sources, the `api` endpoints by name, and limits.

    `resolvers` adds source types or replaces the built-in ones, by type name.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    # Any: a ContentStore, RAG or agent object, checked where it is used (pydantic cannot
    # validate the protocol-typed and lazily imported classes without importing them all).
    store: Any = None
    rag: Any = None
    agent: Any = None
    endpoints: dict[str, ApiEndpoint] = Field(default_factory=dict)
    resolvers: dict[str, Any] = Field(default_factory=dict)
    max_rows: int = Field(default=50, ge=1)
    max_hits: int = Field(default=5, ge=1)
    max_chars: int = Field(default=20_000, ge=1)
    query_timeout_s: float = Field(default=30.0, gt=0)
    search_mode: str = "bm25"

    def store_root(self, kind: str) -> Path:
        """The store's folder; `SourceError` when none is configured."""
        if self.store is None:
            raise SourceError(f"{kind} sources need a content store (DataSources(store=...))")
        # A ContentStore, or its folder (a Path's own `.root` is "/", not a store).
        root = self.store if isinstance(self.store, (str, Path)) else self.store.root
        return Path(root).expanduser().resolve()


@dataclass(frozen=True, slots=True)
class DataContext:
    """What a resolver is given besides its source: the configuration and the fetch policy."""

    sources: DataSources
    fetch_policy: FetchPolicy | None


@dataclass(frozen=True, slots=True)
class SourceText:
    """A source's text and where it came from (the `Source:` line)."""

    origin: str
    text: str


# Any: a data source is client JSON.
SourceResolver = Callable[[Mapping[str, Any], DataContext], Awaitable[SourceText]]


def _field(source: Mapping[str, Any], *names: str) -> Any:
    """The first of `names` on the source, else in its `filters` or `metadata` (Yao's shape)."""
    for holder in (source, source.get("filters") or {}, source.get("metadata") or {}):
        if isinstance(holder, Mapping):
            for name in names:
                if holder.get(name) not in (None, ""):
                    return holder[name]
    return None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- the store: table and kb_document ---------------------------------------------------------


def _connect(root: Path) -> duckdb.DuckDBPyConnection:
    """The store's catalog, read-only, able to read only the store's own table files."""
    layout = StoreLayout(root)
    catalog = layout.catalog
    if not catalog.is_file():
        raise SourceError(f"no content store catalog at {catalog}")
    try:
        connection = duckdb.connect(str(catalog), read_only=True)
        # A SELECT may call read_csv('/etc/passwd') or COPY: only the store's files are open
        # to it, and the query cannot unlock that again.
        folders = [str(layout.tables) + "/", str(layout.batches) + "/"]
        connection.execute("SET allowed_directories = ?", [folders])
        connection.execute("SET enable_external_access = false")
        connection.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        raise SourceError(f"cannot open the store catalog {catalog}: {exc}") from exc
    return connection


def _select(
    root: Path, sql: str, parameters: Sequence[object], max_rows: int, timeout_s: float
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Columns and at most `max_rows` + 1 rows of one SELECT (DuckDB's parser decides)."""
    connection = _connect(root)
    timer = threading.Timer(timeout_s, connection.interrupt)
    try:
        statements = connection.extract_statements(sql)
        kinds = [s.type for s in statements]
        if kinds != [duckdb.StatementType.SELECT]:
            named = ", ".join(k.name for k in kinds) or "nothing"
            raise SourceError(f"only one read-only SELECT is run, not: {named}")
        timer.start()
        relation = connection.sql(sql, params=list(parameters) or None)
        rows = relation.limit(max_rows + 1).fetchall()
        return list(relation.columns), rows
    except duckdb.InterruptException as exc:
        raise SourceError(f"the query ran past {timeout_s:g} s") from exc
    except duckdb.Error as exc:
        raise SourceError(f"the query failed: {_one_line(str(exc), 300)}") from exc
    finally:
        timer.cancel()
        connection.close()


def _cell(value: Any) -> str:  # Any: a SQL or JSON value
    return ("" if value is None else str(value)).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as a Markdown table (pipes escaped, line breaks flattened)."""
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


async def _table(source: Mapping[str, Any], context: DataContext) -> SourceText:
    config = context.sources
    root = config.store_root("table")
    sql = _field(source, "query", "sql")
    if not sql:
        view = source.get("name") or source.get("id")
        if not view:
            raise SourceError("a table source needs `query` (one SELECT) or `name` (a view)")
        sql = 'SELECT * FROM "' + str(view).replace('"', '""') + '"'
    sql = str(sql)
    columns, rows = await asyncio.to_thread(
        _select, root, sql, (), config.max_rows, config.query_timeout_s
    )
    shown = rows[: config.max_rows]
    count = f"first {len(shown)} rows" if len(rows) > len(shown) else _count(len(rows), "row")
    text = markdown_table(columns, shown) if shown else "(no rows)"
    return SourceText(f"table (SQL: {_one_line(sql)}; {count})", text)


_DOCUMENT_SQL = (
    "SELECT source_id, path, filename, media_type, text, error_type, error_message, "
    "len(derived_from) AS depth FROM current_normalised_artifacts "
    "WHERE path = ? AND (? IS NULL OR source_id = ?) ORDER BY source_id, depth, filename"
)


async def _kb_document(source: Mapping[str, Any], context: DataContext) -> SourceText:
    config = context.sources
    root = config.store_root("kb_document")
    path = _field(source, "path", "id")
    source_id = _field(source, "source_id", "name")
    if not path:
        raise SourceError("a kb_document source needs `path` (and `source_id`)")
    parameters = [str(path), source_id, source_id]
    _, rows = await asyncio.to_thread(
        _select, root, _DOCUMENT_SQL, parameters, 10_000, config.query_timeout_s
    )
    if not rows:
        raise SourceError(f"no current document {path!r} in {source_id or 'any source'}")
    owners = sorted({r[0] for r in rows})
    if len(owners) > 1:
        raise SourceError(f"{path!r} is in several sources ({', '.join(owners)}): give source_id")
    blocks = []
    for _sid, _path, filename, media_type, text, error_type, error_message, depth in rows:
        if error_type:
            body = f"(not readable: {error_type}: {error_message})"
        else:
            body = text or "(no text)"
        blocks.append(body if depth == 0 else f"## {filename} ({media_type})\n{body}")
    text = "\n\n".join(blocks)
    if len(text) > config.max_chars:
        text = text[: config.max_chars] + f"\n… (cut at {config.max_chars} of {len(text)} chars)"
    return SourceText(f"kb_document ({owners[0]}:{path}, {rows[0][3]})", text)


async def _kb_collection(source: Mapping[str, Any], context: DataContext) -> SourceText:
    from content_core.rag import RAG
    from content_core.search import SEARCH_MODES, SearchFilters, format_hits

    config = context.sources
    query = _field(source, "query", "prompt")
    if not query:
        raise SourceError("a kb_collection source needs `query`")
    filters = SearchFilters(
        source_id=_field(source, "source_id") or source.get("id"),
        path_prefix=_field(source, "path_prefix"),
        media_type=_field(source, "media_type"),
        page_from=_field(source, "page_from"),
        page_to=_field(source, "page_to"),
    )
    k = int(_field(source, "k", "limit") or config.max_hits)
    mode = str(_field(source, "mode") or config.search_mode)
    if mode not in SEARCH_MODES:
        raise SourceError(f"unknown search mode {mode!r}; one of {', '.join(SEARCH_MODES)}")
    rag = config.rag if isinstance(config.rag, RAG) else RAG(store=config.store_root("search"))
    try:
        hits = await rag.asearch(str(query), k, mode=mode, filters=filters)
    finally:
        if rag is not config.rag:
            rag.close()
    text = format_hits(hits) if hits else "(no hits)"
    origin = f"kb_collection (search {mode}: {_one_line(str(query))}; {_count(len(hits), 'hit')})"
    return SourceText(origin, text)


# -- api and model ------------------------------------------------------------------------------


async def _api(source: Mapping[str, Any], context: DataContext) -> SourceText:
    import httpx

    name = str(source.get("name") or source.get("id") or "")
    endpoint = context.sources.endpoints.get(name)
    if endpoint is None:
        known = ", ".join(sorted(context.sources.endpoints)) or "none"
        raise SourceError(f"no api endpoint named {name!r} is configured (configured: {known})")
    if context.fetch_policy is None:
        raise SourceError("api sources are fetched only under a fetch_policy")
    params = _field(source, "params")
    url = endpoint.url
    if isinstance(params, Mapping):
        url = str(httpx.URL(url).copy_merge_params({str(k): str(v) for k, v in params.items()}))
    fetched = await fetch_url(url, context.fetch_policy, headers=endpoint.headers)
    try:
        text = json.dumps(json.loads(fetched.data), ensure_ascii=False, indent=2)
    except (UnicodeDecodeError, json.JSONDecodeError):
        text = fetched.data.decode("utf-8", "replace")
    return SourceText(f"api (GET {fetched.url}, {fetched.declared or 'no type'})", text)


async def _model(source: Mapping[str, Any], context: DataContext) -> SourceText:
    agent = context.sources.agent
    if not isinstance(agent, Agent):
        raise SourceError("model sources need an agent (DataSources(agent=...))")
    prompt = _field(source, "prompt", "query")
    if not prompt:
        raise SourceError("a model source needs `prompt`")
    try:
        result = await agent.run(str(prompt))
    except ContentError:
        raise
    except Exception as exc:  # the agent is foreign code: its failure is this source's text
        raise LLMError(f"the agent failed: {type(exc).__name__}: {exc}") from exc
    output = getattr(result, "output", result)
    if isinstance(output, BaseModel):
        text = output.model_dump_json(indent=2)
    elif isinstance(output, str):
        text = output
    else:
        text = json.dumps(output, ensure_ascii=False, indent=2, default=str)
    model = getattr(result, "model", None) or type(agent).__name__
    return SourceText(f"model ({model}; prompt: {_one_line(str(prompt))})", text)


RESOLVERS: dict[str, SourceResolver] = {
    "table": _table,
    "kb_document": _kb_document,
    "kb_collection": _kb_collection,
    "api": _api,
    "model": _model,
}


# -- formatting ---------------------------------------------------------------------------------


def _inline(value: Any) -> str:  # Any: arbitrary JSON
    if isinstance(value, list) and value and all(isinstance(r, Mapping) for r in value):
        columns: list[str] = []
        for row in value:
            columns.extend(str(k) for k in row if str(k) not in columns)
        return markdown_table(columns, [[row.get(c) for c in columns] for row in value])
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


async def _resolve(source: Mapping[str, Any], context: DataContext) -> str:
    kind = str(source.get("type", "data"))
    resolver = context.sources.resolvers.get(kind) or RESOLVERS.get(kind)
    if resolver is None:
        known = ", ".join(sorted({*RESOLVERS, *context.sources.resolvers}))
        return f"Source: {kind} (failed: no reader for this source type; known: {known})"
    try:
        found: SourceText = await resolver(source, context)
    except ContentError as exc:
        logger.warning("data source %s failed: %s", kind, exc.message)
        return f"Source: {kind} (failed: {exc.error_class}: {exc.message})"
    return f"Source: {found.origin}\n{found.text}"


async def format_data(
    payload: Mapping[str, Any],
    sources: DataSources | None = None,
    fetch_policy: FetchPolicy | None = None,
) -> str:
    """A `data` part's sources as readable text: one block per source, headed by its type and
    name; fetched sources say where their text came from (`Source: ...`)."""
    context = DataContext(sources or DataSources(), fetch_policy)
    blocks: list[str] = []
    for source in payload.get("sources") or []:
        kind = source.get("type", "data")
        label = source.get("name") or source.get("title") or source.get("id") or ""
        head = f"[{kind} {label}]".replace(" ]", "]")
        inline = next((source[k] for k in _INLINE_KEYS if k in source), None)
        if inline is not None:
            body = _inline(inline)
        else:
            body = await _resolve(source, context)
        blocks.append(f"{head}\n{body}")
    return "\n\n".join(blocks) if blocks else "[data: no sources]"
