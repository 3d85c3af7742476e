"""URL parts fetched under a FetchPolicy, against a real HTTP server on 127.0.0.1: fetched
bytes are processed like uploads, revalidated by ETag / Last-Modified, and every refusal or
failure (private addresses, redirects to them, the size cap, a wrong declared type) ends as a
text part saying why."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from content_core import FetchPolicy
from content_core.agents import ChatMessage, ModelCapabilities
from content_core.chat import AttachmentStore, prepare_messages
from content_core.chat.fetch import fetch_url
from content_core.chat.messages import ImageURLPart, TextPart
from content_core.errors import FetchError, FetchRefusedError
from tests.fixtures.corpus import CORPUS
from tests.support.file_server import FileServer, Route
from tests.support.tls import make_certificates

MEMO = (CORPUS / "pdf" / "fake-memo.pdf").read_bytes()
LAST_MODIFIED = "Wed, 21 Oct 2026 07:28:00 GMT"


def png(width: int = 7, height: int = 5) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def server() -> Iterator[FileServer]:
    routes = {
        "/memo.pdf": Route(MEMO, "application/pdf", etag='"memo-v1"'),
        "/red.png": Route(png(), "image/png", last_modified=LAST_MODIFIED),
        "/notes": Route(b"Lantern notes FETCH-7731.\n", "text/plain", etag='"n1"'),
        "/fake.png": Route(b"<html><body>login page</body></html>", "image/png"),
        "/report.pdf": Route(b"Plain words, not a PDF: MISLABEL-4410.\n", "application/pdf"),
        "/big": Route(b"x" * 50_000, "text/plain"),
        "/big-chunked": Route(b"y" * 50_000, "text/plain", chunked=True),
        "/headers": Route(content_type="application/json", echo_headers=True),
        "/loop": Route(status=302, location="/loop"),
        "/to-file": Route(status=302, location="file:///etc/passwd"),
        "/to-metadata": Route(status=302, location="http://169.254.169.254/latest/meta-data/"),
        "/moved": Route(status=301, location="/notes"),
        "/stall": Route(content_type="text/plain", stall=True),
    }
    with FileServer(routes) as running:
        running.routes["/to-localhost"] = Route(
            status=307, location=running.url("/notes", host="localhost")
        )
        yield running


def allowed(**limits: object) -> FetchPolicy:
    return FetchPolicy(allow_hosts={"127.0.0.1"}, **limits)  # type: ignore[arg-type]


def file_part(url: str, filename: str | None = None) -> dict[str, object]:
    return {"type": "file", "file": {"url": url, "filename": filename}}


def image_part(url: str) -> dict[str, object]:
    return {"type": "image_url", "image_url": {"url": url}}


async def prepare(
    *parts: dict[str, object],
    policy: FetchPolicy | None,
    vision: bool = False,
    attachments: AttachmentStore | None = None,
) -> list[object]:
    out = await prepare_messages(
        [{"role": "user", "content": list(parts)}],
        ModelCapabilities(vision=vision),
        attachments=attachments,
        fetch_policy=policy,
    )
    (message,) = out
    assert isinstance(message, ChatMessage) and isinstance(message.content, list)
    assert {p.type for p in message.content} <= {"text", "image_url", "input_audio"}
    return list(message.content)


async def test_url_parts_are_fetched_and_processed_like_uploads(server: FileServer) -> None:
    memo, moved, image = await prepare(
        file_part(server.url("/memo.pdf")),
        file_part(server.url("/moved"), "notes.txt"),
        image_part(server.url("/red.png")),
        policy=allowed(),
    )
    assert isinstance(memo, TextPart) and "20,000 bottles of water" in memo.text
    assert memo.text.startswith(f"[file {server.url('/memo.pdf')}]")
    assert moved == TextPart(text="[file notes.txt]\nLantern notes FETCH-7731.")
    assert isinstance(image, TextPart) and "7x5 pixels" in image.text  # no vision: described

    (seen,) = await prepare(image_part(server.url("/red.png")), policy=allowed(), vision=True)
    assert isinstance(seen, ImageURLPart)
    # The model gets the bytes that were checked, as a data URL, not the address.
    assert seen.image_url.url == "data:image/png;base64," + base64.b64encode(png()).decode()


async def test_without_a_policy_nothing_is_fetched(server: FileServer) -> None:
    (part,) = await prepare(file_part(server.url("/memo.pdf")), policy=None)
    assert isinstance(part, TextPart) and "could not be read" in part.text
    assert server.seen == []


async def test_fetches_are_revalidated_by_etag_and_last_modified(server: FileServer) -> None:
    store = AttachmentStore()
    parts = (file_part(server.url("/notes")), image_part(server.url("/red.png")))
    first = await prepare(*parts, policy=allowed(), attachments=store)
    again = await prepare(*parts, policy=allowed(), attachments=store)
    assert again == first
    notes, image = server.requests_to("/notes"), server.requests_to("/red.png")
    assert [s.status for s in notes] == [200, 304] and [s.status for s in image] == [200, 304]
    assert notes[1].headers["if-none-match"] == '"n1"'
    assert image[1].headers["if-modified-since"] == LAST_MODIFIED

    # A new version (new ETag) is fetched and processed again.
    server.routes["/notes"] = Route(b"Revised notes FETCH-9902.\n", "text/plain", etag='"n2"')
    (revised,) = await prepare(parts[0], policy=allowed(), attachments=store)
    assert isinstance(revised, TextPart) and "FETCH-9902" in revised.text
    assert [s.status for s in server.requests_to("/notes")] == [200, 304, 200]
    # Within one call a URL is fetched once however often it is referenced.
    await prepare(parts[0], parts[0], policy=allowed())
    assert len(server.requests_to("/notes")) == 4


@pytest.mark.parametrize(
    ("path", "host", "policy", "expected"),
    [
        # `localhost` resolves to 127.0.0.1 (and ::1): refused, only the address is allowed.
        ("/notes", "localhost", allowed(), "FetchRefusedError: refused localhost ("),
        ("/notes", "localhost", FetchPolicy(), "a loopback address"),
        ("/notes", "127.0.0.1", FetchPolicy(), "refused 127.0.0.1: a loopback address"),
        # An allowed host redirecting to a private name or the metadata service.
        ("/to-localhost", "127.0.0.1", allowed(), "refused localhost ("),
        ("/to-metadata", "127.0.0.1", allowed(), "169.254.169.254: a cloud metadata address"),
        ("/to-file", "127.0.0.1", allowed(), "only http and https URLs are fetched"),
        ("/loop", "127.0.0.1", allowed(max_redirects=3), "more than 3 redirects"),
        ("/big", "127.0.0.1", allowed(max_bytes=10_000), "announces 50000 bytes, over the cap"),
        ("/big-chunked", "127.0.0.1", allowed(max_bytes=10_000), "passed the cap of 10000"),
        ("/missing", "127.0.0.1", allowed(), "FetchError: http://127.0.0.1:"),
        ("/stall", "127.0.0.1", allowed(timeout_s=0.5), "no complete answer within 0.5 s"),
    ],
    ids=[
        "localhost-not-allowed",
        "localhost-default-policy",
        "loopback-literal",
        "redirect-to-localhost",
        "redirect-to-metadata",
        "redirect-to-file-scheme",
        "redirect-loop",
        "over-cap-announced",
        "over-cap-streamed",
        "http-404",
        "timeout",
    ],
)
async def test_refused_or_failed_fetches_become_text_saying_why(
    server: FileServer, path: str, host: str, policy: FetchPolicy, expected: str
) -> None:
    (part,) = await prepare(file_part(server.url(path, host=host)), policy=policy)
    assert isinstance(part, TextPart)
    assert part.text.startswith(f"[file {server.url(path, host=host)} could not be read: ")
    assert expected in part.text
    if path == "/missing":
        assert part.text.endswith("/missing: the server answered HTTP 404]")
    if path == "/to-localhost":
        # The allowed hop was fetched; the private one never was.
        assert [s.status for s in server.seen] == [307]
    if host == "localhost" or "127.0.0.1" not in policy.allow_hosts:
        assert server.seen == []


async def test_private_addresses_are_refused_before_connecting() -> None:
    for url, reason in [
        ("http://10.1.2.3/x", "a private address"),
        ("http://[::1]:9/x", "a loopback address"),
        ("http://[::ffff:169.254.169.254]/", "a cloud metadata address"),
        ("http://[fd00:ec2::254]/", "a cloud metadata address"),
        ("http://224.0.0.1/", "a multicast address"),
        ("http://0.0.0.0:9/", "an unspecified address"),
        ("http://100.64.0.1/", "a non-public address"),  # carrier-grade NAT
    ]:
        with pytest.raises(FetchRefusedError, match=reason):
            await fetch_url(url, FetchPolicy())


async def test_a_wrong_declared_type_is_not_trusted(server: FileServer) -> None:
    image, report = await prepare(
        image_part(server.url("/fake.png")),
        file_part(server.url("/report.pdf")),
        policy=allowed(),
        vision=True,
    )
    # An image part whose bytes are HTML is refused, whatever the header said.
    assert isinstance(image, TextPart)
    assert "FetchTypeError" in image.text
    assert "declared image/png, but the bytes are text/html" in image.text
    # A file is read as what its bytes are, and the part says the header disagreed.
    assert isinstance(report, TextPart)
    assert "(declared application/pdf, the bytes are text/plain)" in report.text
    assert "MISLABEL-4410" in report.text


async def test_the_host_name_is_kept_while_the_checked_address_is_connected(
    server: FileServer,
) -> None:
    # localhost may resolve to ::1 first; the server listens on 127.0.0.1 only, so the
    # fetch goes on to the next checked address, and the request still names the host.
    policy = FetchPolicy(allow_hosts={"LOCALHOST"})
    fetched = await fetch_url(
        server.url("/headers", host="localhost"), policy, headers={"X-Api-Key": "k-1"}
    )
    headers = json.loads(fetched.data)
    assert headers["host"] == f"localhost:{server.port}"
    assert headers["x-api-key"] == "k-1"
    assert headers["user-agent"] == "content-pipeline"


async def test_https_checks_the_certificate_against_the_name_not_the_address(
    tmp_path: Path,
) -> None:
    ca, cert, key = make_certificates(tmp_path, "localhost")
    routes = {"/notes": Route(b"Secure notes TLS-6604.\n", "text/plain")}
    with FileServer(routes, tls=(str(cert), str(key))) as secure:
        trusted = FetchPolicy(allow_hosts={"localhost", "127.0.0.1"}, ca_bundle=str(ca))
        fetched = await fetch_url(secure.url("/notes", host="localhost"), trusted)
        assert fetched.data == b"Secure notes TLS-6604.\n"
        # The same server by address: its certificate names localhost, not 127.0.0.1.
        with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
            await fetch_url(secure.url("/notes"), trusted)
        # Without the test CA the default bundle does not trust it.
        untrusted = FetchPolicy(allow_hosts={"localhost"})
        with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
            await fetch_url(secure.url("/notes", host="localhost"), untrusted)
