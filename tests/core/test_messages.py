"""prepare_messages (Yao seed): file and data parts become text, image_url or input_audio."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from content_core.agents import ChatMessage, ModelCapabilities, OpenAICompatibleAgent, PdfHandling
from content_core.chat import AttachmentStore, PreparedFor, prepare_messages
from content_core.chat.messages import ImageURLPart, InputAudioPart, TextPart
from tests.fixtures.corpus import CORPUS
from tests.support.chat_server import ChatServer, Fault

ALLOWED = {"text", "image_url", "input_audio"}


def png(width: int = 7, height: int = 5) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def wav() -> bytes:
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)
    return buffer.getvalue()


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def parts_of(messages: list[ChatMessage]) -> list[object]:
    out: list[object] = []
    for message in messages:
        assert isinstance(message.content, list)
        out.extend(message.content)
    return out


def assert_model_ready(messages: list[ChatMessage]) -> None:
    for message in messages:
        if isinstance(message.content, list):
            assert {p.type for p in message.content} <= ALLOWED


def file_part(url: str, filename: str | None = None) -> dict[str, object]:
    return {"type": "file", "file": {"url": url, "filename": filename}}


async def test_documents_become_text_and_plain_text_passes() -> None:
    store = AttachmentStore()
    store.add("memo", (CORPUS / "pdf" / "fake-memo.pdf").read_bytes(), filename="memo.pdf")
    messages = [
        {"role": "system", "content": "You help."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Summarise:"},
                file_part("__yao.attachment://memo", "memo.pdf"),
                {
                    "type": "file",
                    "file": {
                        "file_data": data_url(
                            "application/vnd.openxmlformats-officedocument."
                            "wordprocessingml.document",
                            (CORPUS / "docx" / "handbook-1p.docx").read_bytes(),
                        ),
                        "filename": "handbook.docx",
                    },
                },
            ],
        },
    ]
    out = await prepare_messages(messages, ModelCapabilities(), attachments=store)
    assert_model_ready(out)
    assert out[0] == ChatMessage(role="system", content="You help.")
    text, memo, handbook = parts_of(out[1:])
    assert text == TextPart(text="Summarise:")
    assert isinstance(memo, TextPart) and "20,000 bottles of water" in memo.text
    assert memo.text.startswith("[file memo.pdf]")
    assert isinstance(handbook, TextPart)
    assert "The United States Trustee appoints and supervises standing trustees" in handbook.text
    # The extracted text is saved for the attachment, as the uploader's preview.
    assert "20,000 bottles" in (store.get_text("memo") or "")


async def test_saved_preview_is_used_instead_of_reprocessing() -> None:
    store = AttachmentStore()
    store.add("f1", b"%PDF-broken", filename="x.pdf")
    store.save_text("f1", "previously extracted text")
    out = await prepare_messages(
        [{"role": "user", "content": [file_part("__uploader://f1")]}],
        ModelCapabilities(),
        attachments=store,
    )
    assert parts_of(out) == [TextPart(text="previously extracted text")]


async def test_images_for_vision_models_become_data_urls() -> None:
    image = png()
    store = AttachmentStore()
    store.add("img", image, filename="red.png")
    out = await prepare_messages(
        [
            {
                "role": "user",
                "content": [
                    file_part("__uploader://img"),
                    {"type": "image_url", "image_url": {"url": "__uploader://img"}},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.org/a.png", "detail": "low"},
                    },
                ],
            }
        ],
        ModelCapabilities(vision=True),
        attachments=store,
    )
    first, second, remote = parts_of(out)
    assert isinstance(first, ImageURLPart) and first == second
    assert first.image_url.url == data_url("image/png", image)
    assert isinstance(remote, ImageURLPart) and remote.image_url.detail == "low"


async def test_images_without_vision_are_described_once_per_call() -> None:
    store = AttachmentStore()
    store.add("img", png(), filename="red.png")
    content = [file_part("__uploader://img"), file_part("__uploader://img")]
    with ChatServer(responder=lambda body, text: "a small red rectangle") as server:
        agent = OpenAICompatibleAgent("gpt-4o", base_url=server.base_url, output_type=str)
        out = await prepare_messages(
            [{"role": "user", "content": content}, {"role": "user", "content": content}],
            ModelCapabilities(),
            attachments=store,
            vision_agent=agent,
        )
        await agent.aclose()
    assert_model_ready(out)
    texts = parts_of(out)
    assert texts == [TextPart(text="[image red.png: a small red rectangle]")] * 4
    assert len(server.calls) == 1, "one file, one description, however often it is referenced"
    sent = server.calls[0].body["messages"][0]["content"]
    assert [p["type"] for p in sent] == ["text", "image_url"]
    assert sent[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_description_saved_for_a_text_model_never_reaches_a_vision_model() -> None:
    """The saved text of an image is kept for the kind of model and route it was made for:
    a vision model asking later for the same image, with the same store, gets the image."""
    image = png()
    store = AttachmentStore()
    store.add("img", image, filename="red.png")
    content = [
        file_part("__uploader://img"),
        {"type": "image_url", "image_url": {"url": "__uploader://img"}},
    ]
    with ChatServer(responder=lambda body, text: "a small red rectangle QMSG-01") as server:
        agent = OpenAICompatibleAgent("gpt-4o", base_url=server.base_url, output_type=str)
        described = await prepare_messages(
            [{"role": "user", "content": content}],
            ModelCapabilities(),
            attachments=store,
            vision_agent=agent,
        )
        seen = await prepare_messages(
            [{"role": "user", "content": content}],
            ModelCapabilities(vision=True),
            attachments=store,
            vision_agent=agent,
        )
        again = await prepare_messages(
            [{"role": "user", "content": content}],
            ModelCapabilities(),
            attachments=store,
            vision_agent=agent,
        )
        await agent.aclose()
    description = TextPart(text="[image red.png: a small red rectangle QMSG-01]")
    assert parts_of(described) == [description] * 2
    for part in parts_of(seen):
        assert isinstance(part, ImageURLPart)
        assert part.image_url.url == data_url("image/png", image)
    # The text model's description was saved for it and is used again, not made again.
    assert parts_of(again) == [description] * 2 and len(server.calls) == 1
    made_for = PreparedFor(vision_route="agent", pdf_handling=PdfHandling().fingerprint())
    assert store.get_text("img", made_for) == description.text
    assert store.get_text("img") is None  # not the uploader's preview: a route made it


async def test_images_without_vision_or_agent_say_what_they_are() -> None:
    out = await prepare_messages(
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "file",
                        "file": {
                            "file_data": data_url("image/png", png(9, 4)),
                            "filename": "tiny.png",
                        },
                    },
                    {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}},
                ],
            }
        ],
        ModelCapabilities(),
    )
    local, remote = parts_of(out)
    assert isinstance(local, TextPart) and "9x4 pixels" in local.text
    assert isinstance(remote, TextPart) and "https://example.org/a.png" in remote.text


@pytest.mark.parametrize("audio", [True, False], ids=["audio-model", "text-model"])
async def test_audio_is_kept_or_turned_into_text(audio: bool) -> None:
    store = AttachmentStore()
    store.add("voice", wav(), filename="note.wav")
    out = await prepare_messages(
        [
            {
                "role": "user",
                "content": [
                    file_part("__uploader://voice"),
                    {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}},
                ],
            }
        ],
        ModelCapabilities(audio=audio),
        attachments=store,
    )
    from_file, inline = parts_of(out)
    if audio:
        assert isinstance(from_file, InputAudioPart) and from_file.input_audio.format == "wav"
        assert base64.b64decode(from_file.input_audio.data) == wav()
        assert inline == InputAudioPart.model_validate(
            {"input_audio": {"data": "AAAA", "format": "mp3"}}
        )
    else:
        assert isinstance(from_file, TextPart) and "note.wav" in from_file.text
        assert isinstance(inline, TextPart) and "mp3" in inline.text


async def test_audio_is_transcribed_by_an_audio_agent() -> None:
    with ChatServer(responder=lambda body, text: "hello from the recording") as server:
        agent = OpenAICompatibleAgent("whisperish", base_url=server.base_url, output_type=str)
        out = await prepare_messages(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
                    ],
                }
            ],
            ModelCapabilities(),
            audio_agent=agent,
        )
        await agent.aclose()
    assert parts_of(out) == [TextPart(text="[audio audio transcript]\nhello from the recording")]
    assert server.calls[0].body["messages"][0]["content"][1]["type"] == "input_audio"


async def test_data_parts_become_readable_text() -> None:
    out = await prepare_messages(
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "data",
                        "data": {
                            "sources": [
                                {
                                    "type": "table",
                                    "name": "cups",
                                    "rows": [
                                        {"team": "Maple Leafs", "wins": 13},
                                        {"team": "Oilers | AB", "wins": None},
                                    ],
                                },
                                {
                                    "type": "kb_document",
                                    "title": "Policy",
                                    "content": "Refunds within 30 days.",
                                },
                                {
                                    "type": "api",
                                    "name": "status",
                                    "data": {"ok": True, "items": [1, 2]},
                                },
                            ]
                        },
                    }
                ],
            }
        ],
        ModelCapabilities(vision=True),
    )
    (part,) = parts_of(out)
    assert isinstance(part, TextPart)
    assert "[table cups]\n| team | wins |\n|---|---|\n| Maple Leafs | 13 |" in part.text
    assert "| Oilers \\| AB |  |" in part.text
    assert "[kb_document Policy]\nRefunds within 30 days." in part.text
    assert '"ok": true' in part.text


@pytest.mark.parametrize(
    "part",
    [
        file_part("__uploader://missing", "gone.pdf"),
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,@@@not-base64"}},
        file_part("https://example.org/remote.pdf"),
        {"type": "file", "file": {"file_data": data_url("application/pdf", b"%PDF-1.7 broken")}},
    ],
    ids=["missing-attachment", "bad-base64", "remote-url", "corrupt-pdf"],
)
async def test_unreadable_files_become_text_never_file_parts(part: dict[str, object]) -> None:
    out = await prepare_messages([{"role": "user", "content": [part]}], ModelCapabilities())
    assert_model_ready(out)
    (only,) = parts_of(out)
    assert isinstance(only, TextPart) and "could not be read" in only.text


async def test_prepared_messages_go_straight_to_the_agent() -> None:
    store = AttachmentStore()
    store.add("doc", b"Plain notes about harbour lanterns.\n", filename="notes.txt")
    prepared = await prepare_messages(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Read:"}, file_part("__uploader://doc")],
            }
        ],
        ModelCapabilities(),
        attachments=store,
    )
    with ChatServer() as server:
        agent = OpenAICompatibleAgent("gpt-4o", base_url=server.base_url, output_type=str)
        await agent.run("unused when messages are given", messages=prepared)
        await agent.aclose()
    sent = server.calls[0].body["messages"][0]["content"]
    assert [p["type"] for p in sent] == ["text", "text"]
    assert "harbour lanterns" in sent[1]["text"]


class BrokenAgent:
    """A user's own agent that fails every call, as a broken vision service would."""

    def __init__(self) -> None:
        self.calls = 0

    async def run(self, prompt: str, **kwargs: object) -> object:
        self.calls += 1
        raise RuntimeError("vision service is down")


async def test_a_failing_agent_is_logged_and_the_messages_are_still_prepared(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = AttachmentStore()
    store.add("img", png(9, 4), filename="red.png")
    agent = BrokenAgent()
    # The audio agent is our OpenAI-compatible client against a server answering 500s.
    with ChatServer() as server:
        server.script(Fault(status=500), Fault(status=500))
        transcriber = OpenAICompatibleAgent(
            "whisperish", base_url=server.base_url, output_type=str, max_retries=1, backoff_s=0.01
        )
        out = await prepare_messages(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "what is this?"},
                        file_part("__uploader://img"),
                        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                    ],
                }
            ],
            ModelCapabilities(),
            attachments=store,
            vision_agent=agent,
            audio_agent=transcriber,
        )
        await transcriber.aclose()
    assert_model_ready(out)
    text, image, audio = parts_of(out)
    assert text == TextPart(text="what is this?")
    assert isinstance(image, TextPart)
    assert image.text.startswith("[image red.png: ")
    assert "description failed (RuntimeError: vision service is down)" in image.text
    assert "9x4 pixels" in image.text  # the plain summary the seed falls back to
    assert isinstance(audio, TextPart)
    assert "transcription failed (LLMUnavailableError" in audio.text
    assert agent.calls == 1 and len(server.calls) == 2
    failures = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("vision agent failed on image red.png" in m for m in failures)
    assert any("audio agent failed" in m for m in failures)
    # A failed description is not saved as the attachment's text: the next call tries again.
    assert store.get_text("img") is None and not store.prepared


def test_an_unreadable_image_part_fails_with_the_same_message_every_time() -> None:
    # Bytes Pillow cannot identify (text declared as BMP): the error is a row, and two runs
    # of the same file must store equal rows, so no object address may reach the message.
    from content_core.agents import PdfHandling
    from content_core.agents.parts import artifact_parts
    from content_core.errors import ImageConversionError

    data = (CORPUS / "txt" / "UDHR_first_article_all.txt").read_bytes()[:200]
    messages = set()
    for _ in range(2):
        with pytest.raises(ImageConversionError) as caught:
            artifact_parts(
                data, media_type="image/bmp", text=None, pages=(), handling=PdfHandling()
            )
        messages.add(caught.value.message)
    assert messages == {"cannot re-encode image/bmp as PNG: Pillow cannot identify the image"}


def test_a_heic_part_decodes_in_a_process_that_normalised_nothing() -> None:
    # A Celery worker may make the message parts of a batch another worker normalised: the
    # HEIF opener must not depend on an earlier decode in the same process.
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from content_core.agents import PdfHandling\n"
        "from content_core.agents.parts import artifact_parts\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "(part,) = artifact_parts(data, media_type='image/heic', text=None, pages=(),"
        " handling=PdfHandling())\n"
        "print(part.part.image_url.url[:22])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(CORPUS / "heic" / "example.heic")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "data:image/png;base64,"
