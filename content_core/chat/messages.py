"""prepare_messages: turn `file` and `data` parts into parts a chat model accepts.

Output parts are only `text`, `image_url` and `input_audio`; a `file` or `data` part never
reaches the model. Images stay images for a vision model, otherwise become a description
(through a vision agent) or what can be read from them; audio likewise. Documents become their
extracted text. Each file is processed once per call, cached by file id. With a `FetchPolicy`,
http(s) URLs are fetched safely (`fetch.py`) and processed like uploads; `data` parts read their
sources (`data_sources.py`); local paths are read under a `LocalPolicy` (`local.py`). Parts
take the provider's shapes: OpenAI's chat-completions parts, or Anthropic's `image` and
`document` blocks.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import io
import json
import logging
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from content_core.agents.base import Agent
from content_core.agents.chat import (
    Base64Source,
    ChatMessage,
    DocumentPart,
    ImagePart,
    ImageURL,
    ImageURLPart,
    InputAudio,
    InputAudioPart,
    ModelCapabilities,
    Part,
    TextPart,
    URLSource,
)
from content_core.agents.pages import PdfHandling, data_url, pdf_page_texts, render_pdf_pages
from content_core.chat.attachments import Attachment, AttachmentStore, PreparedFor
from content_core.chat.data_sources import DataSources, format_data
from content_core.chat.fetch import Fetched, FetchPolicy, fetch_parts, is_http_url
from content_core.chat.local import LocalPolicy, is_local_ref, read_local
from content_core.chat.mcp import PDF, McpServerConfig, McpSessions, ToolKind
from content_core.chat.routing import ToolRouter, Uses
from content_core.errors import ContentError, McpError, SourceError
from content_core.model_limits import part_format_for_model

__all__ = [
    "Attachment",
    "AttachmentStore",
    "ChatMessage",
    "ImageURLPart",
    "InputAudioPart",
    "LocalPolicy",
    "ModelCapabilities",
    "PreparedFor",
    "TextPart",
    "prepare_messages",
]

logger = logging.getLogger(__name__)

# `__uploader://id`, `__yao.attachment://id`: a wrapper naming a file held by an uploader.
_WRAPPER = re.compile(r"^__[\w.-]+://(?P<id>.+)$")
_DATA_URL = re.compile(
    r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?:;[^,;]*)*?(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL
)
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_DESCRIBE_PROMPT = "Describe this image for someone who cannot see it. Transcribe any text in it."
_TRANSCRIBE_PROMPT = "Transcribe this audio verbatim."
_READ_PDF_PROMPT = "Read this document: transcribe its text and describe its figures and tables."
PartFormat = Literal["openai", "anthropic"]


@dataclass
class _Resolved:
    file_id: str
    data: bytes
    filename: str | None
    media_type: str
    label: str | None = None  # how the part names the file, when not its filename


class _Preparer:
    def __init__(
        self,
        capabilities: ModelCapabilities,
        attachments: AttachmentStore | None,
        router: ToolRouter,
        pdf: PdfHandling,
        fetch_policy: FetchPolicy | None = None,
        data_sources: DataSources | None = None,
        part_format: PartFormat = "openai",
        local_policy: LocalPolicy | None = None,
    ) -> None:
        self.caps = capabilities
        self.part_format = part_format
        self.local_policy = local_policy
        # PDFs go to the model whole only as Anthropic `document` blocks (the seed's rule: the
        # model never receives a `file` part, which is OpenAI's only shape for a whole PDF).
        self.whole_pdfs = capabilities.pdf and part_format == "anthropic"
        self.fetch_policy = fetch_policy
        self.data_sources = data_sources
        self.attachments = attachments or AttachmentStore()
        self.router = router
        self.vision_agent = router.agent("vision")
        self.audio_agent = router.agent("audio")
        self.pdf_handling = pdf
        self.cache: dict[str, list[Part]] = {}  # file id -> prepared parts, for this call only
        # What text saved for a file must have been made for to stand in for it here: a
        # description made for a text-only model never reaches a vision model.
        self.made_for = PreparedFor(
            vision=capabilities.vision,
            audio=capabilities.audio,
            vision_route=router.route("vision"),
            audio_route=router.route("audio"),
            pdf_handling=pdf.fingerprint() if capabilities.vision or router.can_see() else None,
            whole_pdfs=self.whole_pdfs,
        )
        self.agent_failures = 0  # a file whose agent failed is not saved as its text

    async def message(self, message: Mapping[str, Any]) -> ChatMessage:
        role = str(message.get("role", "user"))
        content = message.get("content")
        if content is None or isinstance(content, str):
            return ChatMessage(role=role, content=content or "")
        parts: list[Part] = []
        for part in content:
            parts.extend(await self.part(part))
        if self.part_format == "anthropic":
            parts = [_anthropic(part) for part in parts]
        return ChatMessage(role=role, content=parts)

    async def part(self, part: Mapping[str, Any]) -> list[Part]:
        kind = part.get("type")
        if kind == "text":
            return [TextPart(text=str(part.get("text", "")))]
        if kind == "image_url":
            payload = part.get("image_url") or {}
            url = payload if isinstance(payload, str) else str(payload.get("url", ""))
            detail = "auto" if isinstance(payload, str) else str(payload.get("detail", "auto"))
            return await self.image_url(url, detail)
        if kind == "input_audio":
            payload = part.get("input_audio") or {}
            return await self.audio(str(payload.get("data", "")), str(payload.get("format", "wav")))
        if kind == "file":
            return await self.file(part.get("file") or {})
        if kind == "data":
            payload = part.get("data") or {}
            return [TextPart(text=await format_data(payload, self.data_sources, self.fetch_policy))]
        logger.warning("unknown content part type %r turned into text", kind)
        return [TextPart(text=json.dumps(dict(part), ensure_ascii=False, default=str))]

    async def image_url(self, url: str, detail: str) -> list[Part]:
        if self.fetch_policy is not None and is_http_url(url):
            return await self.remote(url, None, None, image=True)
        if url.startswith(("http://", "https://", "data:")) and self.caps.vision:
            return [ImageURLPart(image_url=ImageURL(url=url, detail=detail))]
        if url.startswith(("http://", "https://")):
            # Fetching would reach the network on the caller's behalf; say what is missing.
            return [TextPart(text=f"[image at {url}: not shown, the model has no vision]")]
        return await self.cached(url, lambda: self.resolve(url, None, None))

    async def file(self, payload: Mapping[str, Any]) -> list[Part]:
        filename = payload.get("filename")
        ref = payload.get("url") or payload.get("file_data") or payload.get("file_id") or ""
        ref = str(ref)
        if self.fetch_policy is not None and is_http_url(ref):
            return await self.remote(ref, filename, payload.get("mime_type"), image=False)
        if payload.get("file_id") and not payload.get("url") and not payload.get("file_data"):
            ref = f"__file://{ref}"
        return await self.cached(ref, lambda: self.resolve(ref, filename, payload.get("mime_type")))

    async def cached(self, ref: str, resolve: Callable[[], _Resolved]) -> list[Part]:
        wrapper = _WRAPPER.match(ref)
        file_id = wrapper.group("id") if wrapper else _digest(ref)
        if file_id in self.cache:
            return self.cache[file_id]
        if wrapper and (preview := self.attachments.get_text(file_id, self.made_for)) is not None:
            parts: list[Part] = [TextPart(text=preview)]
        else:
            failures = self.agent_failures
            try:
                resolved = resolve()
                parts = await self.process(resolved)
            except ContentError as exc:
                logger.warning("file %s could not be prepared: %s", file_id, exc)
                parts = [TextPart(text=f"[file {file_id} could not be read: {exc.message}]")]
            else:
                texts = [p.text for p in parts if isinstance(p, TextPart)]
                if wrapper and len(texts) == len(parts) and failures == self.agent_failures:
                    self.attachments.save_text(file_id, "\n".join(texts), self.made_for)
        self.cache[file_id] = parts
        return parts

    async def remote(self, url: str, filename: Any, declared: Any, *, image: bool) -> list[Part]:
        """A fetched URL's parts: from this call, revalidated from `attachments`, or made."""
        kind, failures = ("image" if image else "file"), self.agent_failures
        key = f"{kind} {url} {self.made_for!r}"

        async def make(got: Fetched) -> tuple[list[Part], bool]:
            media_type = _media_type(got.data, got.declared or declared, filename)
            label = f"{filename or got.url}{got.type_note(declared, media_type, image=image)}"
            item = _Resolved(_digest(url), got.data, filename, media_type, label)
            return await self.process(item), failures == self.agent_failures

        if key not in self.cache:
            self.cache[key] = await fetch_parts(
                url, key, self.fetch_policy or FetchPolicy(), self.attachments.fetched, make,
                lambda why: TextPart(text=f"[{kind} {url} could not be read: {why}]"),
            )  # fmt: skip
        return self.cache[key]

    def resolve(self, ref: str, filename: Any, declared: Any) -> _Resolved:
        wrapper = _WRAPPER.match(ref)
        if wrapper:
            attachment = self.attachments.get(wrapper.group("id"))
            if attachment is None:
                raise SourceError(f"no attachment {wrapper.group('id')!r}")
            data = attachment.data
            filename = filename or attachment.filename
            declared = declared or attachment.media_type
        elif (match := _DATA_URL.match(ref)) is not None:
            raw = match.group("data")
            try:
                data = base64.b64decode(raw, validate=True) if match.group("b64") else raw.encode()
            except (binascii.Error, ValueError) as exc:
                raise SourceError("data URL holds invalid base64") from exc
            declared = declared or match.group("type")
        elif is_local_ref(ref):
            path, data = read_local(ref, self.local_policy)
            filename = filename or path.name
        else:
            raise SourceError(f"cannot fetch {ref[:80]!r}: only attachments, data URLs and paths")
        return _Resolved(_digest(ref), data, filename, _media_type(data, declared, filename))

    async def process(self, item: _Resolved) -> list[Part]:
        name = item.label or item.filename or item.file_id[:12]
        if item.media_type.startswith("image/"):
            url = data_url(item.media_type, item.data)
            if self.caps.vision:
                return [ImageURLPart(image_url=ImageURL(url=url))]
            return [TextPart(text=await self.describe_image(name, url, item))]
        if item.media_type.startswith("audio/"):
            fmt = _AUDIO_FORMATS.get(item.media_type, item.media_type.split("/")[-1])
            return await self.audio(base64.b64encode(item.data).decode(), fmt, name)
        note: list[Part] = []
        if item.media_type == "application/pdf" and self.whole_pdfs:
            source = Base64Source(media_type=PDF, data=base64.b64encode(item.data).decode())
            return [DocumentPart(source=source, title=name)]
        if item.media_type == "application/pdf":
            note, done = await self.pdf(item, name)
            if done:
                return note
        from content_core.extract import extract_text

        text = extract_text(item.data, item.media_type, filename=item.filename).text
        return [*note, TextPart(text=f"[file {name}]\n{text}")]

    async def pdf(self, item: _Resolved, name: str) -> tuple[list[Part], bool]:
        """A PDF read whole by an MCP vision tool that declares PDFs, or as page images when
        configured and the model or a vision route can see them (done); else not done, with a
        note when the tool failed, and the caller extracts its text."""
        note: list[Part] = []
        if await self.router.reads_pdf():
            server = self.router.mcp("vision")
            try:
                text = await self.router.run_tool("vision", item.data, PDF, _READ_PDF_PROMPT)
                return [TextPart(text=f"[file {name}, read by mcp:{server}]\n{text}")], True
            except McpError as exc:
                self.agent_failures += 1
                note = [TextPart(text=f"[file {name}: vision tool failed ({exc.message})]")]
        # After the vision tool failed, only a vision model is shown the pages.
        seen = self.caps.vision or (self.router.can_see() and not note)
        if self.pdf_handling.mode != "pages" or not seen:
            return note, False
        pages, count = render_pdf_pages(item.data, self.pdf_handling)
        texts = pdf_page_texts(item.data) if self.pdf_handling.with_text else {}
        header = f"[file {name}: pages 1-{len(pages)} of {count} as images]"
        parts: list[Part] = [*note, TextPart(text=header)]
        for page in pages:
            label = f"{name} page {page.page}"
            image = _Resolved(f"{item.file_id}#{page.page}", page.data, label, page.media_type)
            parts.extend(await self.process(image))
            if page.page in texts:
                parts.append(TextPart(text=f"[{label} text]\n{texts[page.page]}"))
        return parts, True

    async def describe_image(self, name: str, url: str, item: _Resolved) -> str:
        if (server := self.router.mcp("vision")) is not None:
            try:
                text = await self.router.run_tool(
                    "vision", item.data, item.media_type, _DESCRIBE_PROMPT
                )
                return f"[image {name}, described by mcp:{server}: {text}]"
            except McpError as exc:
                self.agent_failures += 1
                summary = _image_summary(item.data, item.media_type)
                return f"[image {name}: description failed ({exc.message}); {summary}]"
        if self.vision_agent is not None:
            message = {
                "role": "user",
                "content": [
                    {"type": "text", "text": _DESCRIBE_PROMPT},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
            try:
                result = await self.vision_agent.run(_DESCRIBE_PROMPT, messages=[message])
                return f"[image {name}: {result.output}]"
            except Exception as exc:  # the agent is foreign code; the seed goes on regardless
                logger.warning("vision agent failed on image %s: %r", name, exc)
                self.agent_failures += 1
                return (
                    f"[image {name}: description failed ({_failure(exc)}); "
                    f"{_image_summary(item.data, item.media_type)}]"
                )
        return f"[image {name}: {_image_summary(item.data, item.media_type)}]"

    async def audio(self, data: str, fmt: str, name: str = "audio") -> list[Part]:
        if self.caps.audio:
            return [InputAudioPart(input_audio=InputAudio(data=data, format=fmt))]
        if (server := self.router.mcp("audio")) is not None:
            media_type = _AUDIO_TYPES.get(fmt, f"audio/{fmt}")
            try:
                raw = base64.b64decode(data)
                text = await self.router.run_tool("audio", raw, media_type, _TRANSCRIBE_PROMPT)
                return [TextPart(text=f"[audio {name} transcript, by mcp:{server}]\n{text}")]
            except (McpError, binascii.Error, ValueError) as exc:
                self.agent_failures += 1
                reason = exc.message if isinstance(exc, McpError) else "invalid base64"
                return [TextPart(text=f"[audio {name} ({fmt}): transcription failed ({reason})]")]
        if self.audio_agent is not None:
            message = {
                "role": "user",
                "content": [
                    {"type": "text", "text": _TRANSCRIBE_PROMPT},
                    {"type": "input_audio", "input_audio": {"data": data, "format": fmt}},
                ],
            }
            try:
                result = await self.audio_agent.run(_TRANSCRIBE_PROMPT, messages=[message])
                return [TextPart(text=f"[audio {name} transcript]\n{result.output}")]
            except Exception as exc:  # the agent is foreign code; the seed goes on regardless
                logger.warning("audio agent failed on %s: %r", name, exc)
                self.agent_failures += 1
                return [
                    TextPart(text=f"[audio {name} ({fmt}): transcription failed ({_failure(exc)})]")
                ]
        return [
            TextPart(text=f"[audio {name} ({fmt}): not included, the model has no audio input]")
        ]


def _anthropic(part: Part) -> Part:
    """`part` in Anthropic's shapes: an `image_url` becomes an `image` block (its data URL's
    bytes inline, an http(s) URL by reference); other parts are the same in both APIs (audio
    never reaches an Anthropic model: its capabilities say it hears none)."""
    if not isinstance(part, ImageURLPart):
        return part
    url = part.image_url.url
    if (match := _DATA_URL.match(url)) is None:
        return ImagePart(source=URLSource(url=url))
    data = match.group("data")
    if not match.group("b64"):  # percent-encoded bytes (an SVG, say): Anthropic takes base64
        data = base64.b64encode(urllib.parse.unquote_to_bytes(data)).decode()
    media_type = match.group("type") or "image/png"
    return ImagePart(source=Base64Source(media_type=media_type, data=data))


def _failure(exc: Exception) -> str:
    """An agent's failure as the model reads it: the error type, and its message if any."""
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _media_type(data: bytes, declared: Any, filename: Any) -> str:
    """The media type sniffed from `data`; the declared type is only the fallback."""
    from content_core.binary import sniff_media_type

    return _sniff_audio(data) or sniff_media_type(
        data, default=str(declared or "application/octet-stream"), filename=filename
    )


def _sniff_audio(data: bytes) -> str | None:
    """Audio media types by magic bytes (the binary sniffer covers documents and images)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:3] == b"ID3" or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    if data[:4] == b"OggS":
        return "audio/ogg"
    if data[:4] == b"fLaC":
        return "audio/flac"
    return None


def _digest(ref: str) -> str:
    return hashlib.sha256(ref.encode("utf-8", "surrogatepass")).hexdigest()


def _image_summary(data: bytes, media_type: str) -> str:
    """What can be said of an image without a model: its format and size."""
    try:
        from PIL import Image, UnidentifiedImageError

        with Image.open(io.BytesIO(data)) as image:
            return f"{media_type}, {image.width}x{image.height} pixels, no description available"
    except (ImportError, OSError, UnidentifiedImageError, ValueError):
        return f"{media_type}, {len(data)} bytes, no description available"


async def prepare_messages(
    messages: Sequence[Mapping[str, Any] | ChatMessage],
    capabilities: ModelCapabilities | None = None,
    *,
    attachments: AttachmentStore | None = None,
    vision_agent: Agent | None = None,
    audio_agent: Agent | None = None,
    fetch_policy: FetchPolicy | None = None,
    data_sources: DataSources | None = None,
    uses: Uses | None = None,
    mcp_servers: Sequence[McpServerConfig] = (),
    pdf: PdfHandling | None = None,
    model: str | None = None,
    provider: PartFormat | None = None,
    local_policy: LocalPolicy | None = None,
    search_store: Path | str | None = None,
) -> list[ChatMessage]:
    """Return `messages` with every part converted to `text`, `image_url` or `input_audio`.

    Files come from `attachments` (ids in `__uploader://id` style URLs or `file_id`), data URLs
    (`file_data`), and http(s) URLs only under a `fetch_policy` (fetched bytes are processed as
    uploads; their parts are kept in `attachments` by URL, ETag and Last-Modified). `data`
    parts read their sources from `data_sources`. A file that cannot be read becomes a text
    part saying so, never a `file` part. Each file is processed once per call. As the seed
    says, a failing vision or audio agent is logged and the messages are still prepared: the
    part becomes text naming the failure (an image keeps its plain summary).

    `uses` routes vision and audio to the agents passed or to an MCP server of `mcp_servers`
    (`Uses(vision="mcp:tools")`); an MCP server that fails or times out is named in the
    part's text, never raised. A PDF goes whole to an MCP vision tool that declares PDFs
    (content_core.chat.mcp.tools); otherwise `pdf` says whether it becomes page images (when the
    model or a vision route can see them) or its extracted text.

    `model` names the target model: without `capabilities`, the model limits table says what
    it takes (vision, audio, whole PDFs; nothing for an unknown model), and without
    `provider` its vendor picks the part shapes. `provider="anthropic"` makes images `image`
    blocks (`source` base64 or url) and, for a model that reads PDFs, a PDF one `document`
    block; `"openai"` (the default) makes `image_url` parts and PDFs text.

    A local path (`/data/a.pdf`, `file:///data/a.pdf`) is read only under `local_policy`, and
    only when it resolves (symlinks and `..` followed) inside one of its folders; otherwise
    the part becomes text naming the refusal (`LocalPathRefusedError`). `Uses(search="store")`
    adds the store's hits for the last user message (the store at `search_store`, else
    `data_sources.store`); `Uses(fetch="policy")` fetches URLs under `fetch_policy` or the
    default `FetchPolicy()`.

    Raises:
        ValueError: `uses` names an MCP server that `mcp_servers` does not configure, or
            "agent" without the matching agent, or `search="store"` without a store.
        ConfigError: the user model limits file is unreadable or invalid.
    """
    # Any: messages are chat JSON from a client.
    if capabilities is None:
        capabilities = ModelCapabilities.for_model(model) if model else ModelCapabilities()
    part_format = provider or part_format_for_model(model)
    if uses is not None and uses.fetch == "policy" and fetch_policy is None:
        fetch_policy = FetchPolicy()
    search_root = _search_root(uses, search_store, data_sources)
    agents: dict[ToolKind, Agent | None] = {"vision": vision_agent, "audio": audio_agent}
    async with McpSessions(mcp_servers) as sessions:
        router = ToolRouter(uses, agents, sessions)
        preparer = _Preparer(
            capabilities,
            attachments,
            router,
            pdf or PdfHandling(),
            fetch_policy,
            router.with_mcp_resources(data_sources),
            part_format,
            local_policy,
        )
        out: list[ChatMessage] = []
        raws = [m.to_openai() if isinstance(m, ChatMessage) else m for m in messages]
        for raw in raws:
            out.append(await preparer.message(raw))
    if search_root is not None:
        await _add_search_hits(out, raws, search_root, data_sources or DataSources())
    return out


def _search_root(
    uses: Uses | None, search_store: Path | str | None, sources: DataSources | None
) -> Path | None:
    """The store `Uses(search="store")` searches, or None when search is not asked for."""
    if uses is None or uses.search != "store":
        return None
    if search_store is not None:
        return Path(search_store).expanduser().resolve()
    if sources is not None and sources.store is not None:
        return sources.store_root("search")
    raise ValueError('Uses(search="store") needs search_store= or DataSources(store=...)')


async def _add_search_hits(
    out: list[ChatMessage],
    raws: Sequence[Mapping[str, Any]],
    root: Path,
    sources: DataSources,
) -> None:
    """Append the store's hits for the last user message's own text to that message."""
    # Any: messages are chat JSON from a client.
    from content_core.search import SEARCH_MODES, SearchMode, format_hits, search

    last = next((i for i in reversed(range(len(raws))) if raws[i].get("role") == "user"), None)
    if last is None:
        return
    content = raws[last].get("content")
    if isinstance(content, str):
        query = content
    else:
        texts = [str(p.get("text", "")) for p in content or [] if p.get("type") == "text"]
        query = "\n".join(texts)
    if not query.strip():
        return
    mode: SearchMode = next((m for m in SEARCH_MODES if m == sources.search_mode), "bm25")
    try:
        hits = await asyncio.to_thread(search, root, query, sources.max_hits, mode)
        text = format_hits(hits) if hits else "(no hits)"
        head = f"[search {mode}: {_plural(len(hits), 'hit')} in the content store]"
    except ContentError as exc:
        logger.warning("store search failed: %s", exc.message)
        head, text = f"[search {mode}: failed ({exc.error_class}: {exc.message})]", ""
    prepared = out[last]
    before: list[Part] = (
        [TextPart(text=prepared.content)] if isinstance(prepared.content, str) else prepared.content
    )
    found = TextPart(text=f"{head}\n{text}".rstrip())
    out[last] = ChatMessage(role=prepared.role, content=[*before, found])


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
