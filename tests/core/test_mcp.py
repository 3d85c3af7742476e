"""MCP servers as tools and data sources for prepare_messages (`Uses`, `mcp_servers`, `pdf`),
against a real MCP server (tests/support/mcp_server.py) over stdio and streamable HTTP."""

from __future__ import annotations

import base64
import io
import wave
from typing import Any

import pytest
from PIL import Image
from pydantic import ValidationError

from content_core import McpServerConfig, Uses
from content_core.agents import ModelCapabilities
from content_core.agents.pages import PdfHandling
from content_core.chat import prepare_messages
from content_core.chat.mcp import find_media_tool, read_mcp_resource
from content_core.chat.mcp.tools import media_tool
from content_core.chat.messages import ChatMessage, ImageURLPart, TextPart
from content_core.errors import McpError
from tests.fixtures.corpus import CORPUS
from tests.support.mcp_server import README_TEXT
from tests.support.mcp_servers import http_mcp_server, stdio_server

NO_VISION = ModelCapabilities()
VISION = ModelCapabilities(vision=True)
MEMO = CORPUS / "pdf" / "fake-memo.pdf"  # one page: "... 20,000 bottles of water ..."
PAPER = CORPUS / "pdf" / "layout-parser-paper-fast.pdf"  # two pages


def png(width: int = 7, height: int = 5, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def wav(frames: int = 800) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * frames)
    return buffer.getvalue()


def file_part(media_type: str, data: bytes, filename: str) -> dict[str, Any]:
    url = f"data:{media_type};base64,{base64.b64encode(data).decode()}"
    return {"type": "file", "file": {"file_data": url, "filename": filename}}


def user(*parts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": list(parts)}]


def parts_of(messages: list[ChatMessage]) -> list[Any]:
    (message,) = messages
    assert isinstance(message.content, list)
    return list(message.content)


def texts_of(messages: list[ChatMessage]) -> list[str]:
    return [p.text for p in parts_of(messages) if isinstance(p, TextPart)]


async def test_images_and_audio_go_to_the_mcp_tools_and_resources_are_read() -> None:
    """One stdio server: an image described by its vision tool, audio transcribed by its audio
    tool, a resource read for a `data` part; the same image twice is one call."""
    server = stdio_server()
    image = file_part("image/png", png(), "red.png")
    messages = user(
        image,
        image,
        {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav()).decode(),
                                                "format": "wav"}},
        {"type": "data", "data": {"sources": [
            {"type": "mcp_resource", "server": "tools", "uri": "notes://readme"},
            {"type": "mcp_resource", "server": "tools", "uri": "notes://nope-missing/deeper"},
        ]}},
    )
    out = await prepare_messages(
        messages, NO_VISION, uses=Uses(vision="mcp:tools", audio="mcp:tools"),
        mcp_servers=[server],
    )
    texts = texts_of(out)
    assert texts[0] == (
        "[image red.png, described by mcp:tools: PNG image 7x5, dominant colour #c81e1e]"
    )
    assert texts[1] == texts[0]
    assert texts[2] == "[audio audio transcript, by mcp:tools]\nWAV 1 channel(s), 8000 Hz, 0.10 s"
    data = texts[3]
    assert f"[mcp_resource]\nSource: mcp:tools notes://readme\n{README_TEXT}" in data
    # A resource the server cannot read: the part says why, nothing is raised.
    assert "[mcp_resource]\nSource: mcp_resource (failed: McpError: MCP server 'tools'" in data


async def test_streamable_http_server_describes_an_image_and_reads_a_resource() -> None:
    with http_mcp_server("web") as server:
        out = await prepare_messages(
            user(file_part("image/png", png(4, 3, (10, 200, 10)), "green.png")),
            NO_VISION, uses=Uses(vision="mcp:web"), mcp_servers=[server],
        )
        assert texts_of(out) == [
            "[image green.png, described by mcp:web: PNG image 4x3, dominant colour #0ac80a]"
        ]
        assert await read_mcp_resource(server, "notes://todo") == "note todo"


async def test_a_pdf_goes_whole_to_a_vision_tool_that_declares_pdfs() -> None:
    out = await prepare_messages(
        user(file_part("application/pdf", MEMO.read_bytes(), "memo.pdf")),
        VISION, uses=Uses(vision="mcp:tools"), mcp_servers=[stdio_server()],
    )
    (text,) = texts_of(out)
    assert text.startswith("[file memo.pdf, read by mcp:tools]\nPDF with 1 pages; page 1 reads:")
    assert "20,000 bottles of water" in text


@pytest.mark.parametrize(
    ("caps", "reads_pdf_override", "expect"),
    [
        # The tool reads images only: a vision model gets the pages as image_url parts.
        pytest.param(VISION, None, "image_url", id="pages-to-vision-model"),
        # No vision model: each page image is described by the MCP tool.
        pytest.param(NO_VISION, None, "described", id="pages-described-by-tool"),
        # A server whose tool declares PDFs, overridden by configuration: pages too.
        pytest.param(VISION, False, "image_url", id="declaration-overridden"),
    ],
)
async def test_pdf_pages_become_images_when_the_tool_does_not_read_pdfs(
    caps: ModelCapabilities, reads_pdf_override: bool | None, expect: str
) -> None:
    flags = () if reads_pdf_override is False else ("--images-only",)
    server = stdio_server("tools", *flags, reads_pdf=reads_pdf_override)
    out = await prepare_messages(
        user(file_part("application/pdf", PAPER.read_bytes(), "paper.pdf")),
        caps, uses=Uses(vision="mcp:tools"), mcp_servers=[server],
        pdf=PdfHandling(mode="pages", dpi=50, with_text=True),
    )
    parts = parts_of(out)
    assert isinstance(parts[0], TextPart)
    assert parts[0].text == "[file paper.pdf: pages 1-2 of 2 as images]"
    if expect == "image_url":
        images = [p for p in parts if isinstance(p, ImageURLPart)]
        assert len(images) == 2
        assert all(p.image_url.url.startswith("data:image/png;base64,") for p in images)
        first = Image.open(io.BytesIO(base64.b64decode(images[0].image_url.url.split(",")[1])))
        assert first.size == (round(612 * 50 / 72), round(792 * 50 / 72))
    else:
        described = [p.text for p in parts if "described by mcp:tools" in p.text]
        assert len(described) == 2
        assert described[0].startswith("[image paper.pdf page 1, described by mcp:tools: PNG image")
    # with_text: each page image is followed by that page's text.
    page_texts = [p.text for p in parts if isinstance(p, TextPart) and " text]\n" in p.text]
    assert [t.split("\n")[0] for t in page_texts] == [
        "[paper.pdf page 1 text]", "[paper.pdf page 2 text]"
    ]


async def test_pdf_text_is_extracted_when_no_tool_reads_pdfs_and_pages_are_not_asked() -> None:
    out = await prepare_messages(
        user(file_part("application/pdf", MEMO.read_bytes(), "memo.pdf")),
        VISION, uses=Uses(vision="mcp:tools"), mcp_servers=[stdio_server("tools", "--images-only")],
    )
    (text,) = texts_of(out)
    assert text.startswith("[file memo.pdf]\n")
    assert "20,000 bottles of water" in text


async def test_pages_without_anyone_to_see_them_fall_back_to_text() -> None:
    out = await prepare_messages(
        user(file_part("application/pdf", MEMO.read_bytes(), "memo.pdf")),
        NO_VISION, pdf=PdfHandling(mode="pages"),
    )
    (text,) = texts_of(out)
    assert text.startswith("[file memo.pdf]\n") and "20,000 bottles" in text


@pytest.mark.parametrize(
    ("flags", "fields", "reason"),
    [
        pytest.param(("--fail",), {}, "tool 'describe_media' answered an error: ", id="error"),
        pytest.param(
            ("--hang-s", "60"), {"timeout_s": 3.0}, "(stdio) timed out after 3 s", id="timeout"
        ),
    ],
)
async def test_a_failing_or_hung_server_becomes_text_saying_why(
    flags: tuple[str, ...], fields: dict[str, Any], reason: str
) -> None:
    server = stdio_server("tools", *flags, **fields)
    out = await prepare_messages(
        user(
            file_part("image/png", png(), "a.png"),
            file_part("image/png", png(3, 3), "b.png"),
            file_part("application/pdf", MEMO.read_bytes(), "memo.pdf"),
        ),
        NO_VISION, uses=Uses(vision="mcp:tools"), mcp_servers=[server],
    )
    texts = texts_of(out)
    assert texts[0].startswith("[image a.png: description failed (")
    assert reason in texts[0]
    assert texts[0].endswith("image/png, 7x5 pixels, no description available]")
    assert reason in texts[1]
    # The PDF: its text, after a note of the tool's failure when the tool was listed (a hung
    # server is not asked again: the same reason at once; on a loaded machine the 3 s may
    # already pass while it starts, and then nothing is listed and there is no note).
    *notes, pdf_text = texts[2:]
    assert pdf_text.startswith("[file memo.pdf]\n") and "20,000 bottles of water" in pdf_text
    assert all(n.startswith("[file memo.pdf: vision tool failed (") for n in notes)
    assert all(reason in n for n in notes) and len(notes) <= 1
    if flags == ("--fail",):
        assert notes


async def test_pages_of_a_pdf_the_failing_tool_could_not_read_go_to_a_vision_model() -> None:
    out = await prepare_messages(
        user(file_part("application/pdf", MEMO.read_bytes(), "memo.pdf")),
        VISION, uses=Uses(vision="mcp:tools"), mcp_servers=[stdio_server("tools", "--fail")],
        pdf=PdfHandling(mode="pages", dpi=36),
    )
    note, header, image = parts_of(out)
    assert isinstance(note, TextPart) and note.text.startswith(
        "[file memo.pdf: vision tool failed (MCP server 'tools': tool 'describe_media' answered"
    )
    assert isinstance(header, TextPart)
    assert header.text == "[file memo.pdf: pages 1-1 of 1 as images]"
    assert isinstance(image, ImageURLPart) and image.image_url.url.startswith("data:image/png")


async def test_a_server_that_cannot_start_becomes_text() -> None:
    server = McpServerConfig(id="gone", command=("/nonexistent/mcp-server",), timeout_s=20)
    out = await prepare_messages(
        user(file_part("image/png", png(), "a.png")),
        NO_VISION, uses=Uses(vision="mcp:gone"), mcp_servers=[server],
    )
    (text,) = texts_of(out)
    assert text.startswith("[image a.png: description failed (MCP server 'gone' (stdio) could not")
    with pytest.raises(McpError, match="could not be started or reached"):
        await read_mcp_resource(server, "notes://readme")


async def test_routes_name_configured_servers() -> None:
    with pytest.raises(ValueError, match="not configured: \\['nowhere'\\]"):
        await prepare_messages(user(), NO_VISION, uses=Uses(vision="mcp:nowhere"))
    with pytest.raises(ValueError, match='Uses\\(audio="agent"\\) needs the audio_agent'):
        await prepare_messages(user(), NO_VISION, uses=Uses(audio="agent"))
    with pytest.raises(ValidationError):
        Uses(vision="openai")
    with pytest.raises(ValidationError, match="exactly one of command and url"):
        McpServerConfig(id="x")
    with pytest.raises(ValidationError, match="must be http"):
        McpServerConfig(id="x", url="file:///tmp/sock")


IMAGES = ["image/png", "image/jpeg"]
DATA = {"type": "string"}


def typed(media_type: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"data": DATA, "media_type": media_type, **more}


@pytest.mark.parametrize(
    ("schema", "kind", "expect"),
    [
        pytest.param(typed({"enum": [*IMAGES, "application/pdf"]}, prompt={"type": "string"}),
                     "vision", (True, True), id="pdf-in-enum"),
        pytest.param(typed({"enum": IMAGES}), "vision", (True, False), id="images-only"),
        pytest.param(typed({"type": "string"}), "vision", (True, False),
                     id="no-enum-reads-images-never-pdf"),
        pytest.param(typed({"enum": ["image/*", "application/pdf"]}), "vision", (True, True),
                     id="wildcard"),
        pytest.param(typed({"const": "audio/wav"}), "vision", None,
                     id="audio-tool-is-no-vision-tool"),
        pytest.param(typed({"const": "audio/wav"}), "audio", (True, False), id="audio-const"),
        pytest.param({"url": DATA, "media_type": DATA}, "vision", None, id="no-data-property"),
        pytest.param({"data": {"type": "integer"}, "media_type": DATA}, "vision", None,
                     id="data-not-a-string"),
    ],
)
def test_the_media_tool_convention(
    schema: dict[str, Any], kind: Any, expect: tuple[bool, bool] | None
) -> None:
    tool = media_tool("t", {"type": "object", "properties": schema}, kind)
    if expect is None:
        assert tool is None
        return
    assert tool is not None
    assert (tool.reads(IMAGES[0] if kind == "vision" else "audio/wav"), tool.reads_pdf) == expect
    assert tool.takes_prompt == ("prompt" in schema)


def test_a_named_tool_is_used_and_the_first_fitting_one_otherwise() -> None:
    class Tool:
        def __init__(self, name: str, schema: dict[str, Any]) -> None:
            self.name, self.input_schema = name, {"type": "object", "properties": schema}

    vision = {"data": {"type": "string"}, "media_type": {"enum": IMAGES}}
    tools = [Tool("search", {"q": {"type": "string"}}), Tool("look", vision), Tool("see", vision)]
    assert (found := find_media_tool(tools, "vision", None)) is not None and found.name == "look"
    assert (found := find_media_tool(tools, "vision", "see")) is not None and found.name == "see"
    assert find_media_tool(tools, "vision", "search") is None
    assert find_media_tool(tools, "audio", None) is None
