"""Local paths in message parts: read only inside the folders a LocalPolicy allows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from content_core import LocalPathRefusedError, LocalPolicy
from content_core.agents import ChatMessage, ModelCapabilities
from content_core.chat import prepare_messages
from content_core.chat.local import read_local
from content_core.chat.messages import TextPart
from content_core.errors import LimitExceededError, SourceError, UnsafeInputError
from tests.fixtures.corpus import CORPUS


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """allowed/ with a note, a PDF and links; outside/ with a secret the links point at."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "sub").mkdir(parents=True)
    outside.mkdir()
    (allowed / "note.txt").write_text("Allowed note LOCAL-5150.\n")
    (allowed / "sub" / "memo.pdf").write_bytes((CORPUS / "pdf" / "fake-memo.pdf").read_bytes())
    (outside / "secret.txt").write_text("Secret SECRET-6620.\n")
    (allowed / "escape.txt").symlink_to(outside / "secret.txt")
    (allowed / "escape-dir").symlink_to(outside, target_is_directory=True)
    (allowed / "inner.txt").symlink_to(allowed / "note.txt")
    return tmp_path


async def texts(paths: list[str], policy: LocalPolicy | None) -> list[str]:
    parts = [{"type": "file", "file": {"url": path}} for path in paths]
    (message,) = await prepare_messages(
        [{"role": "user", "content": parts}], ModelCapabilities(), local_policy=policy
    )
    assert isinstance(message, ChatMessage) and isinstance(message.content, list)
    out = []
    for part in message.content:
        assert isinstance(part, TextPart)
        out.append(part.text)
    return out


async def test_files_inside_the_allowed_folder_are_read(tree: Path) -> None:
    policy = LocalPolicy(allow_dirs=[tree / "allowed"])
    note, memo, by_url, relative, inner = await texts(
        [
            str(tree / "allowed" / "note.txt"),
            str(tree / "allowed" / "sub" / "memo.pdf"),
            (tree / "allowed" / "note.txt").as_uri(),
            "sub/../note.txt",  # relative: from the first allowed folder; `..` stays inside
            str(tree / "allowed" / "inner.txt"),  # a link that stays inside is followed
        ],
        policy,
    )
    assert note == "[file note.txt]\nAllowed note LOCAL-5150."
    assert memo.startswith("[file memo.pdf]\n") and "20,000 bottles of water" in memo
    assert by_url == relative == note
    assert inner == "[file note.txt]\nAllowed note LOCAL-5150."  # named after the real file


@pytest.mark.parametrize(
    "name",
    [
        "escape.txt",  # a symlink to a file outside
        "escape-dir/secret.txt",  # a path through a symlinked folder
        "../outside/secret.txt",  # `..` out of the folder
        "sub/../../outside/secret.txt",
        "../outside/absent.txt",  # outside and missing: refused, not "no such file"
    ],
)
async def test_paths_resolving_outside_are_refused(tree: Path, name: str) -> None:
    policy = LocalPolicy(allow_dirs=[tree / "allowed"])
    ref = str(tree / "allowed" / name)
    with pytest.raises(LocalPathRefusedError, match="outside the allowed folders") as caught:
        read_local(ref, policy)
    assert isinstance(caught.value, UnsafeInputError)
    assert caught.value.error_type == "UnsafeInputError"
    (text,) = await texts([ref], policy)
    assert "could not be read: " in text and "outside the allowed folders" in text
    assert "SECRET-6620" not in text


async def test_local_paths_are_refused_without_a_policy(tree: Path) -> None:
    ref = str(tree / "allowed" / "note.txt")
    with pytest.raises(LocalPathRefusedError, match=r"pass LocalPolicy\(allow_dirs="):
        read_local(ref, None)
    (text,) = await texts([ref], None)
    assert "LOCAL-5150" not in text and "local paths are refused" in text


def test_other_local_failures_are_typed(tree: Path) -> None:
    policy = LocalPolicy(allow_dirs=[tree / "allowed"], max_bytes=10)
    with pytest.raises(LimitExceededError, match="larger than the local policy's 10 bytes"):
        read_local(str(tree / "allowed" / "note.txt"), policy)
    with pytest.raises(SourceError, match="no file at"):
        read_local(str(tree / "allowed" / "absent.txt"), policy)
    with pytest.raises(SourceError, match="not a regular file"):
        read_local(str(tree / "allowed" / "sub"), policy)
    os.mkfifo(tree / "allowed" / "pipe")  # would block a plain open() forever
    with pytest.raises(SourceError, match="not a regular file"):
        read_local(str(tree / "allowed" / "pipe"), policy)
    with pytest.raises(LocalPathRefusedError, match="names another host"):
        read_local("file://elsewhere/etc/passwd", policy)


def test_an_allowed_folder_reached_through_a_link_is_its_target(tree: Path) -> None:
    link = tree / "link-to-allowed"
    link.symlink_to(tree / "allowed", target_is_directory=True)
    policy = LocalPolicy(allow_dirs=[link])
    assert policy.allow_dirs == (Path(os.path.realpath(tree / "allowed")),)
    path, data = read_local(str(link / "note.txt"), policy)
    assert data == b"Allowed note LOCAL-5150.\n" and path.parent == policy.allow_dirs[0]
    with pytest.raises(ValueError, match="at least 1 item"):
        LocalPolicy(allow_dirs=[])
