"""The model limits table: packaged rows, a user file over them, and its errors."""

from __future__ import annotations

import fnmatch
import logging
import tomllib
from pathlib import Path

import pytest

from content_core import ConfigError, get_model_limits, load_model_limits
from content_core.agents.openai import OpenAICompatibleAgent
from content_core.encodings import encoding_name_for_model
from content_core.model_limits import LIMITS_FILE_ENV, part_format_for_model

REPO = Path(__file__).resolve().parents[2]
PACKAGED = REPO / "content_core" / "model_limits.toml"


def _packaged_keys() -> list[str]:
    with PACKAGED.open("rb") as handle:
        return list(tomllib.load(handle)["models"])


@pytest.mark.parametrize("key", _packaged_keys())
def test_every_packaged_row_is_usable_and_agrees_with_the_encoding_map(key: str) -> None:
    limits = get_model_limits(key)
    assert limits.known and limits.model == key
    assert 0 < limits.max_output < limits.max_context, "a prompt must have room"
    # One source of truth: an OpenAI model's encoding is the encodings module's.
    assert limits.encoding == encoding_name_for_model(key)
    assert (limits.encoding is not None) == (limits.provider == "openai")


@pytest.mark.parametrize(
    ("model", "provider", "vision", "audio", "pdf"),
    [
        ("gpt-4o-2024-08-06", "openai", True, False, True),
        ("gpt-4o-mini", "openai", True, False, True),
        ("gpt-4.1-mini-2025-04-14", "openai", True, False, True),
        ("gpt-5-nano", "openai", True, False, True),
        ("o3-mini", "openai", False, False, False),  # o3-mini reads text only
        ("o4-mini-2025-04-16", "openai", True, False, True),
        ("gpt-4o-audio-preview-2024-12-17", "openai", False, True, False),
        ("gpt-oss-120b", "openai", False, False, False),
        ("claude-3-5-sonnet-20241022", "anthropic", True, False, True),
        ("claude-3-7-sonnet-latest", "anthropic", True, False, True),
        ("claude-sonnet-4-5-20250929", "anthropic", True, False, True),
        ("claude-opus-4-1-20250805", "anthropic", True, False, True),
        ("claude-haiku-4-5", "anthropic", True, False, True),
        ("gemini-1.5-flash-002", "google", True, True, True),
        ("models/gemini-2.5-pro", "google", True, True, True),  # Google's resource prefix
        ("mistral-large-latest", "mistral", False, False, False),
        ("mistral-medium-2505", "mistral", True, False, False),
        ("codestral-2501", "mistral", False, False, False),
        ("pixtral-large-latest", "mistral", True, False, False),
        ("meta-llama/llama-4-maverick", "meta", True, False, False),
        ("llama-3.3-70b-instruct", "meta", False, False, False),
        ("qwen3-32b", "qwen", False, False, False),
        ("qwen2.5-vl-72b-instruct", "qwen", True, False, False),
        ("deepseek-r1-distill", "deepseek", False, False, False),
    ],
)
def test_current_families_resolve_with_their_input_kinds(
    model: str, provider: str, vision: bool, audio: bool, pdf: bool
) -> None:
    limits = get_model_limits(model)
    assert limits.known
    assert (limits.provider, limits.vision, limits.audio, limits.pdf) == (
        provider,
        vision,
        audio,
        pdf,
    )


def test_the_packaged_file_ships_in_the_wheel() -> None:
    with (REPO / "pyproject.toml").open("rb") as handle:
        globs = tomllib.load(handle)["tool"]["setuptools"]["package-data"]["content_core"]
    assert any(fnmatch.fnmatch(PACKAGED.name, glob) for glob in globs)


def test_a_user_file_adds_and_overrides_rows_field_by_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "limits.toml"
    user.write_text(
        """
        [models."acme-7b"]
        context = 32_000
        max_output = 2_000
        provider = "acme"
        vision = true
        encoding = "cl100k_base"

        [models."gpt-4o"]
        max_output = 4_000   # only this figure changes

        [families]
        "acme" = "acme-7b"
        """
    )
    monkeypatch.setenv(LIMITS_FILE_ENV, str(user))
    added = get_model_limits("acme-7b-instruct-q4")
    assert (added.model, added.max_context, added.max_input) == ("acme-7b", 32_000, 30_000)
    assert added.vision and added.encoding == "cl100k_base" and added.provider == "acme"
    assert get_model_limits("my-acme-model").model == "acme-7b"  # the user's family
    changed = get_model_limits("gpt-4o-2024-11-20")
    assert (changed.max_context, changed.max_output, changed.vision) == (128_000, 4_000, True)
    assert changed.encoding == "o200k_base"
    # The agent reads the same table: its reply cap follows the corrected row.
    agent = OpenAICompatibleAgent("gpt-4o", max_output_tokens=10_000)
    assert agent.max_output_tokens == 4_000

    # An edited file is read again; without the variable the packaged rows are back.
    user.write_text('[models."gpt-4o"]\nmax_output = 8_000\n')
    assert get_model_limits("gpt-4o").max_output == 8_000
    monkeypatch.delenv(LIMITS_FILE_ENV)
    assert get_model_limits("gpt-4o").max_output == 16_384
    assert get_model_limits("acme-7b").known is False
    # An argument names a file without the environment.
    assert get_model_limits("gpt-4o", limits_file=user).max_output == 8_000
    assert load_model_limits(user).lookup("acme-7b").known is False


def test_a_user_default_replaces_the_stated_default(tmp_path: Path) -> None:
    user = tmp_path / "limits.toml"
    user.write_text("[default]\ncontext = 8_192\nmax_output = 1_024\n")
    limits = get_model_limits("house-model", limits_file=user)
    assert (limits.known, limits.max_context, limits.max_output) == (False, 8_192, 1_024)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[models."x"\ncontext = 1\n', "is not valid TOML"),
        ('[models."x"]\ncontext = "big"\n', 'models."x": context'),
        ('[models."x"]\ncontext = -5\n', "greater than 0"),
        ('[models."x"]\nwindow = 5\n', "window: Extra inputs"),  # a misspelt field
        ("[model.x]\ncontext = 5\n", "unknown table"),  # `model`, not `models`
        ('models = ["x"]\n', "`models` must be a table"),
        ('[families]\nfoo = "no-such-model"\n', "names no model"),
        ("[default]\nmax_output = 0\n", "default: max_output"),
    ],
    ids=["toml", "type", "negative", "field", "table", "models-shape", "family", "default"],
)
def test_a_malformed_user_file_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    user = tmp_path / "limits.toml"
    user.write_text(text)
    with pytest.raises(ConfigError, match=message) as caught:
        get_model_limits("gpt-4o", limits_file=user)
    assert str(user) in caught.value.message


def test_a_missing_user_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be read"):
        get_model_limits("gpt-4o", limits_file=tmp_path / "absent.toml")


def test_an_unknown_model_warns_once_and_gets_the_stated_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="content_core.model_limits"):
        first = get_model_limits("zz-unheard-of-model-1")
        again = get_model_limits("ZZ-unheard-of-model-1")  # the same model, spelt otherwise
        other = get_model_limits("zz-unheard-of-model-2")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings
    assert "zz-unheard-of-model-1" in warnings[0] and "128000 context" in warnings[0]
    assert (first.max_context, first.max_output, first.known) == (128_000, 4_096, False)
    assert again == first and other.model == "zz-unheard-of-model-2"


@pytest.mark.parametrize(
    ("model", "format_"),
    [
        ("claude-sonnet-4-5", "anthropic"),
        ("anthropic/claude-3-5-haiku-latest", "anthropic"),
        ("gpt-4o", "openai"),
        ("gemini-2.5-flash", "openai"),  # Google's OpenAI-compatible endpoint
        ("zz-unheard-of-model-1", "openai"),
        (None, "openai"),
    ],
)
def test_the_part_format_follows_the_provider(model: str | None, format_: str) -> None:
    assert part_format_for_model(model) == format_


def test_the_agent_config_names_a_limits_file(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from content_core.agents import AgentConfig
    from content_core.agents.extraction import build_agent

    class Facts(BaseModel):
        title: str

    user = tmp_path / "limits.toml"
    user.write_text('[models."house-13b"]\ncontext = 16_000\nmax_output = 1_000\n')
    config = AgentConfig(kind="openai", model="house-13b", limits_file=str(user))
    agent = build_agent(config, Facts)
    assert isinstance(agent, OpenAICompatibleAgent) and agent.limits == (15_000, 1_000)
