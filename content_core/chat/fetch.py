"""Safe fetching of http(s) URLs for message parts and `api` data sources: `FetchPolicy`,
`fetch_url`, and the cache of fetched parts keyed by URL and validators.

Every hop (redirects are followed here, not by httpx) is checked: the scheme, then every address
the host resolves to. The connection then goes to the checked address itself, with the host
name kept for the `Host` header and TLS (SNI and certificate), so a DNS answer that changes
between the check and the connection (DNS rebinding) cannot reach another address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator

from content_core.errors import (
    ContentError,
    FetchError,
    FetchRefusedError,
    FetchTooLargeError,
    FetchTypeError,
)

__all__ = [
    "FetchCache",
    "FetchPolicy",
    "Fetched",
    "Validators",
    "describe_failure",
    "fetch_cached",
    "fetch_parts",
    "fetch_url",
    "is_http_url",
]

T = TypeVar("T")
logger = logging.getLogger(__name__)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services: named in the refusal (both are non-global ranges anyway).
_METADATA = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Why an address is refused, most specific first (0.0.0.0 is also "private", ::1 "reserved").
_CATEGORIES = (
    ("is_unspecified", "an unspecified address"),
    ("is_loopback", "a loopback address"),
    ("is_link_local", "a link-local address"),
    ("is_multicast", "a multicast address"),
    ("is_private", "a private address"),
    ("is_reserved", "a reserved address"),
)
# Declared types that say nothing about the bytes.
_GENERIC = frozenset({"application/octet-stream", "binary/octet-stream", "application/unknown"})
# Declared types read as text whatever their exact subtype.
_TEXTUAL = ("text/", "application/json", "application/xml", "application/xhtml", "+json", "+xml")
# Headers that carry credentials: never sent on to another origin after a redirect.
_CREDENTIALS = frozenset({"authorization", "cookie", "proxy-authorization", "x-api-key"})


class FetchPolicy(BaseModel):
    """What fetching an http(s) URL may do; nothing is fetched without one.

    Only `http` and `https` are fetched. A host whose addresses include a loopback, private,
    link-local, multicast, reserved or cloud-metadata address is refused, redirects included,
    unless `allow_hosts` names it (a host name or an IP literal, case-insensitive). The body is
    read up to `max_bytes`; `timeout_s` bounds the whole fetch, redirects included.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow_hosts: frozenset[str] = frozenset()
    max_bytes: int = Field(default=20 << 20, gt=0)
    timeout_s: float = Field(default=30.0, gt=0)
    max_redirects: int = Field(default=5, ge=0)
    user_agent: str = "content-pipeline"
    # A PEM file of the certificate authorities to trust instead of the default bundle (an
    # endpoint behind a private CA); the certificate is always checked against the host name.
    ca_bundle: str | None = None

    @field_validator("allow_hosts", mode="before")
    @classmethod
    def _normalise_hosts(cls, value: object) -> frozenset[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (set, frozenset, list, tuple)):
            raise ValueError("allow_hosts takes host names or IP literals")
        return frozenset(str(h).strip().strip("[]").rstrip(".").lower() for h in value)

    def allows(self, host: str) -> bool:
        """True when `host` is named in `allow_hosts` (its addresses are then not checked)."""
        return host.strip("[]").rstrip(".").lower() in self.allow_hosts


@dataclass(frozen=True, slots=True)
class Validators:
    """What a server said identifies a response's version: `ETag` and `Last-Modified`."""

    etag: str | None = None
    last_modified: str | None = None

    def __bool__(self) -> bool:
        return bool(self.etag or self.last_modified)

    def request_headers(self) -> dict[str, str]:
        """The conditional request headers that revalidate this version."""
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched response: the final URL, its bytes (empty when `not_modified`), the media
    type the server declared (a hint only) and the validators of this version."""

    url: str
    data: bytes
    declared: str | None
    validators: Validators
    not_modified: bool = False

    def type_note(self, declared: str | None, sniffed: str, *, image: bool) -> str:
        """What a part says of its type: empty when the server's declared type (or the
        part's own, `declared`) agrees with `sniffed`, the type read from the bytes, else a
        note naming both; the bytes decide how the part is processed.

        Raises:
            FetchTypeError: `image` (an `image_url` part) and the bytes are not an image.
        """
        said = self.declared or (declared.split(";", 1)[0].strip().lower() if declared else None)
        if image and not sniffed.startswith("image/"):
            raise FetchTypeError(
                f"{self.url}: declared {said or 'no type'}, but the bytes are {sniffed}; "
                "an image part needs an image"
            )
        if said is None or said in _GENERIC or _family(said) == _family(sniffed):
            return ""
        return f" (declared {said}, the bytes are {sniffed})"


def _family(media_type: str) -> str:
    """What a type is, coarsely: image, audio, video, text, or the type itself."""
    major = media_type.split("/", 1)[0]
    if major in ("image", "audio", "video"):
        return major
    if media_type.startswith(_TEXTUAL[:1]) or any(t in media_type for t in _TEXTUAL[1:]):
        return "text"
    return media_type


def is_http_url(ref: str) -> bool:
    """True for an `http://` or `https://` URL (case-insensitive scheme)."""
    return ref[:8].lower().startswith(("http://", "https://"))


def _refusal(address: IPAddress) -> str | None:
    """Why `address` may not be reached, or None for a public unicast address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in _METADATA:
        return "a cloud metadata address"
    for name, phrase in _CATEGORIES:
        if getattr(address, name):
            return phrase
    if not address.is_global:
        return "a non-public address"
    return None


async def _checked_addresses(host: str, port: int, policy: FetchPolicy) -> list[str]:
    """The addresses of `host`, each checked; all of them, since any may be connected to."""
    try:
        literal: IPAddress | None = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise FetchError(f"cannot resolve host {host!r}: {exc}") from exc
        addresses = []
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            if address not in addresses:
                addresses.append(address)
    if not policy.allows(host):
        for address in addresses:
            reason = _refusal(address)
            if reason is not None:
                shown = host if literal is not None else f"{host} ({address})"
                raise FetchRefusedError(
                    f"refused {shown}: {reason}; allow the host in FetchPolicy.allow_hosts "
                    "to fetch it"
                )
    return [str(a) for a in addresses]


class _PinnedTransport(httpx.AsyncBaseTransport):
    """Connects each request to a checked address of its host, not to a fresh DNS answer."""

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy
        # No keep-alive: a pooled TLS connection to one address must not serve another name.
        verify: ssl.SSLContext | bool = True
        if policy.ca_bundle is not None:
            verify = ssl.create_default_context(cafile=policy.ca_bundle)
        self.inner = httpx.AsyncHTTPTransport(
            verify=verify, limits=httpx.Limits(max_keepalive_connections=0), trust_env=False
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = await _checked_addresses(host, port, self.policy)
        extensions = dict(request.extensions)
        if url.scheme == "https":
            extensions["sni_hostname"] = host  # TLS checks the certificate against the name
        failure: httpx.ConnectError | None = None
        for address in addresses:
            pinned = httpx.Request(
                request.method,
                url.copy_with(host=address),
                headers=request.headers,  # keeps `Host: <name>` from the original URL
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return await self.inner.handle_async_request(pinned)
            except httpx.ConnectError as exc:
                failure = exc  # the next address of the name may answer
        raise failure or httpx.ConnectError(f"no address for {host}", request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _declared(response: httpx.Response) -> str | None:
    value = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return value or None


async def _read_capped(response: httpx.Response, url: str, max_bytes: int) -> bytes:
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise FetchTooLargeError(
            f"{url}: the server announces {int(length)} bytes, over the cap of {max_bytes}",
            limit="FetchPolicy.max_bytes",
            value=int(length),
            maximum=max_bytes,
        )
    body = bytearray()
    async for piece in response.aiter_bytes():
        body += piece
        if len(body) > max_bytes:  # stop reading at the cap: the rest is never downloaded
            raise FetchTooLargeError(
                f"{url}: the body passed the cap of {max_bytes} bytes",
                limit="FetchPolicy.max_bytes",
                maximum=max_bytes,
            )
    return bytes(body)


async def _fetch(
    client: httpx.AsyncClient,
    url: str,
    policy: FetchPolicy,
    headers: Mapping[str, str],
    validators: Validators | None,
) -> Fetched:
    current = httpx.URL(url)
    sent = {"User-Agent": policy.user_agent, **headers}
    if validators:
        sent.update(validators.request_headers())
    for _hop in range(policy.max_redirects + 1):
        if current.scheme not in ("http", "https"):
            raise FetchRefusedError(f"refused {current}: only http and https URLs are fetched")
        async with client.stream("GET", current, headers=sent) as response:
            if response.status_code in _REDIRECTS and "location" in response.headers:
                target = current.join(response.headers["location"])
                if (target.scheme, target.host, target.port) != (
                    current.scheme,
                    current.host,
                    current.port,
                ):
                    sent = {k: v for k, v in sent.items() if k.lower() not in _CREDENTIALS}
                current = target
                continue
            if response.status_code == 304 and validators:
                return Fetched(str(current), b"", _declared(response), validators, True)
            if response.status_code >= 400 or response.status_code < 200:
                raise FetchError(f"{current}: the server answered HTTP {response.status_code}")
            data = await _read_capped(response, str(current), policy.max_bytes)
            found = Validators(response.headers.get("etag"), response.headers.get("last-modified"))
            return Fetched(str(current), data, _declared(response), found)
    raise FetchRefusedError(f"refused {url}: more than {policy.max_redirects} redirects")


async def fetch_url(
    url: str,
    policy: FetchPolicy,
    *,
    headers: Mapping[str, str] | None = None,
    validators: Validators | None = None,
) -> Fetched:
    """Fetch `url` under `policy`, following redirects (each hop checked).

    With `validators` the request is conditional; a `304 Not Modified` returns a `Fetched`
    with `not_modified` set and no bytes.

    Raises:
        FetchRefusedError: a scheme, host address or redirect count the policy refuses.
        FetchTooLargeError: the body is over `policy.max_bytes`.
        FetchError: the host cannot be resolved or reached, the fetch timed out, or the
            server answered with an error status.
    """
    if not is_http_url(url):
        raise FetchRefusedError(f"refused {url[:80]!r}: only http and https URLs are fetched")
    transport = _PinnedTransport(policy)
    # trust_env=False: a proxy from the environment would connect to an unchecked address.
    async with httpx.AsyncClient(
        transport=transport, timeout=policy.timeout_s, follow_redirects=False, trust_env=False
    ) as client:
        try:
            async with asyncio.timeout(policy.timeout_s):
                return await _fetch(client, url, policy, headers or {}, validators)
        except TimeoutError as exc:
            raise FetchError(f"{url}: no complete answer within {policy.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class _Entry(Generic[T]):
    validators: Validators
    value: T


@dataclass
class FetchCache(Generic[T]):
    """What was made of fetched URLs, by key (the URL and how it was prepared), with the
    validators of the version it was made from."""

    entries: dict[str, _Entry[T]] = field(default_factory=dict)

    def get(self, key: str) -> tuple[Validators, T] | None:
        """The validators and value saved under `key`, if any."""
        entry = self.entries.get(key)
        return None if entry is None else (entry.validators, entry.value)

    def save(self, key: str, validators: Validators, value: T) -> None:
        """Remember `value` for `key`; a response without validators cannot be revalidated,
        so it is not kept."""
        if validators:
            self.entries[key] = _Entry(validators, value)


async def fetch_cached(
    url: str,
    key: str,
    policy: FetchPolicy,
    cache: FetchCache[T],
    make: Callable[[Fetched], Awaitable[tuple[T, bool]]],
) -> T:
    """The value `make` builds from `url`'s bytes, or the one `cache` holds for `key` when the
    server answers `304 Not Modified` to the saved validators.

    `make` returns the value and whether it may be saved (not when part of it failed).

    Raises:
        ContentError: fetching (`FetchError` and its kinds) or `make` failed.
    """
    saved = cache.get(key)
    fetched = await fetch_url(url, policy, validators=saved[0] if saved else None)
    if fetched.not_modified and saved is not None:
        return saved[1]
    value, keep = await make(fetched)
    if keep:
        cache.save(key, fetched.validators, value)
    return value


def describe_failure(exc: ContentError) -> str:
    """A failure as the model reads it: the error class and its message."""
    return f"{exc.error_class}: {exc.message}"


async def fetch_parts(
    url: str,
    key: str,
    policy: FetchPolicy,
    cache: FetchCache[list[T]],
    make: Callable[[Fetched], Awaitable[tuple[list[T], bool]]],
    failed: Callable[[str], T],
) -> list[T]:
    """`fetch_cached`, with a failure turned into the one part `failed` makes of its
    description (logged): a refused or failed fetch never raises out of message preparation."""
    try:
        return await fetch_cached(url, key, policy, cache, make)
    except ContentError as exc:
        logger.warning("%s could not be fetched or read: %s", url, exc)
        return [failed(describe_failure(exc))]
