"""prepare_messages in each provider's part shapes, with capabilities from the limits table."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from content_core.agents import ModelCapabilities
from content_core.chat import AttachmentStore, prepare_messages
from tests.fixtures.corpus import CORPUS

MEMO = (CORPUS / "pdf" / "fake-memo.pdf").read_bytes()


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (6, 4), (20, 90, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# The seed's "Frontend Message Format": an image attachment and a file attachment, as the
# InputArea sends them.
SEED_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What do these show?"},
            {
                "type": "image_url",
                "image_url": {"url": "__yao.attachment://file_id", "detail": "auto"},
            },
            {
                "type": "file",
                "file": {"url": "__yao.attachment://doc_id", "filename": "document.pdf"},
            },
        ],
    }
]


def attachments() -> AttachmentStore:
    store = AttachmentStore()
    store.add("file_id", png(), filename="chart.png")
    store.add("doc_id", MEMO, filename="document.pdf")
    return store


async def test_the_seed_example_in_openai_shapes() -> None:
    (message,) = await prepare_messages(SEED_MESSAGES, model="gpt-4o", attachments=attachments())
    body = message.to_openai()
    text, image, document = body["content"]
    assert text == {"type": "text", "text": "What do these show?"}
    assert image == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{b64(png())}", "detail": "auto"},
    }
    # OpenAI's only shape for a whole PDF is a `file` part, which the seed never sends: text.
    assert document["type"] == "text"
    assert document["text"].startswith("[file document.pdf]\n")
    assert "20,000 bottles" in document["text"]


async def test_the_seed_example_in_anthropic_shapes() -> None:
    (message,) = await prepare_messages(
        SEED_MESSAGES, model="claude-sonnet-4-5-20250929", attachments=attachments()
    )
    assert message.to_openai() == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What do these show?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": b64(png())},
            },
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": b64(MEMO)},
                "title": "document.pdf",
            },
        ],
    }


@pytest.mark.parametrize(
    ("model", "provider", "expected"),
    [
        # Claude 3 Haiku sees images but takes no whole PDF: the PDF becomes its text.
        ("claude-3-haiku-20240307", None, ["text", "image", "text"]),
        # The caller's provider wins over the model's vendor (a proxy speaking OpenAI's API).
        ("claude-sonnet-4-5", "openai", ["text", "image_url", "text"]),
        ("gpt-4-turbo", "anthropic", ["text", "image", "text"]),  # sees images, no whole PDFs
        ("gpt-4o", "anthropic", ["text", "image", "document"]),
        # A text-only model gets neither image nor PDF: both become text.
        ("o3-mini", None, ["text", "text", "text"]),
        ("zz-house-model", None, ["text", "text", "text"]),  # unknown: no capabilities
    ],
)
async def test_capabilities_and_shapes_follow_the_model_and_provider(
    model: str, provider: Any, expected: list[str]
) -> None:
    (message,) = await prepare_messages(
        SEED_MESSAGES, model=model, provider=provider, attachments=attachments()
    )
    assert isinstance(message.content, list)
    assert [part.type for part in message.content] == expected


async def test_given_capabilities_win_over_the_table() -> None:
    (message,) = await prepare_messages(
        SEED_MESSAGES,
        ModelCapabilities(vision=False),
        model="claude-sonnet-4-5",
        attachments=attachments(),
    )
    assert isinstance(message.content, list)
    assert [part.type for part in message.content] == ["text", "text", "text"]
    assert ModelCapabilities.for_model("gemini-2.5-flash") == ModelCapabilities(
        vision=True, audio=True, pdf=True
    )


async def test_anthropic_image_urls_are_sent_by_reference() -> None:
    (message,) = await prepare_messages(
        [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": "https://example.org/a.png"}],
            }
        ],
        provider="anthropic",
        model="claude-opus-4-1",
    )
    assert message.to_openai()["content"] == [
        {"type": "image", "source": {"type": "url", "url": "https://example.org/a.png"}}
    ]


@pytest.mark.parametrize(
    ("url", "media_type", "data"),
    [
        ("data:image/png;base64,iVBORw0KGgo=", "image/png", "iVBORw0KGgo="),
        # Parameters before `;base64` are not part of the type.
        ("data:image/gif;name=a.gif;base64,R0lGODlh", "image/gif", "R0lGODlh"),
        # A percent-encoded data URL is sent base64-encoded.
        ("data:image/svg+xml,%3Csvg%2F%3E", "image/svg+xml", b64(b"<svg/>")),
    ],
)
async def test_anthropic_image_blocks_carry_a_data_url_s_bytes(
    url: str, media_type: str, data: str
) -> None:
    (message,) = await prepare_messages(
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
        model="claude-haiku-4-5",
    )
    assert message.to_openai()["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    ]
