"""A real MCP server for tests, built on the official `mcp` package (`MCPServer`, mcp 2's name
for FastMCP): a vision tool, an audio tool and resources, over stdio or streamable HTTP.

Run as a script (`python tests/support/mcp_server.py [options]`): it imports only `mcp`,
Pillow and pypdfium2, so the child process needs no PYTHONPATH. Answers are computed from the
bytes and deterministic:

- `describe_media(data, media_type, prompt)`: an image's format, size and dominant colour; a
  PDF's page count and its first page's text. Its `media_type` enum lists the types it reads
  (the project's media-tool convention, content_core.chat.mcp): `application/pdf` is there unless
  `--images-only`.
- `transcribe_audio(data, media_type)`: a WAV file's channels, rate and duration.
- resources `notes://readme` (text) and `notes://{name}` (a template).

`--fail` makes every tool answer an error result; `--hang-s N` makes every tool sleep first.
"""

from __future__ import annotations

import argparse
import base64
import io
import time
import wave
from typing import Literal

from mcp.server.mcpserver import MCPServer

README_TEXT = "MCP-RESOURCE-MARKER-7f3a: the notes server's readme."

ImageTypes = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
MediaTypes = Literal["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"]


def describe_bytes(data: bytes, media_type: str) -> str:
    """What the vision tool says of `data`."""
    if media_type == "application/pdf":
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(data)
        try:
            page = document[0]
            text = page.get_textpage().get_text_range().strip()
            count = len(document)
        finally:
            document.close()
        return f"PDF with {count} pages; page 1 reads: {' '.join(text.split())[:200]}"
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
        colours = rgb.getcolors(rgb.width * rgb.height) or []
        _, dominant = max(colours)
        hex_colour = "#{:02x}{:02x}{:02x}".format(*dominant)
        return f"{image.format} image {image.width}x{image.height}, dominant colour {hex_colour}"


def build_server(*, images_only: bool, fail: bool, hang_s: float) -> MCPServer:
    server = MCPServer("content-test-tools")

    def before() -> None:
        if hang_s:
            time.sleep(hang_s)
        if fail:
            raise RuntimeError("tool failure requested by --fail")

    if images_only:

        @server.tool()
        def describe_media(data: str, media_type: ImageTypes, prompt: str = "") -> str:
            """Describe an image (base64 `data`)."""
            before()
            return describe_bytes(base64.b64decode(data), media_type)

    else:

        @server.tool(name="describe_media")
        def describe_media_pdf(data: str, media_type: MediaTypes, prompt: str = "") -> str:
            """Describe an image or a PDF (base64 `data`)."""
            before()
            return describe_bytes(base64.b64decode(data), media_type)

    @server.tool()
    def transcribe_audio(data: str, media_type: Literal["audio/wav"]) -> str:
        """Say what a WAV recording holds (base64 `data`)."""
        before()
        with wave.open(io.BytesIO(base64.b64decode(data))) as audio:
            seconds = audio.getnframes() / audio.getframerate()
            return (
                f"WAV {audio.getnchannels()} channel(s), {audio.getframerate()} Hz, "
                f"{seconds:.2f} s"
            )

    @server.resource("notes://readme", mime_type="text/plain")
    def readme() -> str:
        return README_TEXT

    @server.resource("notes://{name}", mime_type="text/plain")
    def note(name: str) -> str:
        return f"note {name}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--images-only", action="store_true")
    parser.add_argument("--fail", action="store_true")
    parser.add_argument("--hang-s", type=float, default=0.0)
    args = parser.parse_args()
    server = build_server(images_only=args.images_only, fail=args.fail, hang_s=args.hang_s)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
