"""Model limits as data: context window, reply cap, encoding and input kinds per model family,
from the packaged `model_limits.toml` plus an optional user file that adds or overrides rows."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from content_core.encodings import encoding_name_for_model
from content_core.errors import ConfigError

__all__ = [
    "LIMITS_FILE_ENV",
    "ModelLimits",
    "ModelLimitsTable",
    "get_model_limits",
    "load_model_limits",
    "part_format_for_model",
]

logger = logging.getLogger(__name__)

# The variable naming a user limits file (TOML, the packaged file's shape); read per call.
LIMITS_FILE_ENV = "CONTENT_MODEL_LIMITS"
_PACKAGED = "model_limits.toml"
_PROVIDER_PREFIX = re.compile(r"^(?:[\w.-]+[:/])+")
_TOP_KEYS = frozenset({"default", "families", "models"})


class _Row(BaseModel):
    """One `[models."<name>"]` table as written; every field optional so a user row may
    override a single figure."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context: int | None = Field(default=None, gt=0)
    max_output: int | None = Field(default=None, gt=0)
    provider: str | None = Field(default=None, min_length=1)
    vision: bool | None = None
    audio: bool | None = None
    pdf: bool | None = None
    encoding: str | None = Field(default=None, min_length=1)


class ModelLimits(BaseModel):
    """The context window of a model, in tokens (what it reads plus what it writes), and what
    it takes besides text. `model` is the table key the name matched."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    max_context: int
    max_output: int
    provider: str = "openai"
    vision: bool = False
    audio: bool = False
    pdf: bool = False
    # The tiktoken encoding its tokens count in; None for a vendor whose tokenizer is not one.
    encoding: str | None = None
    # False when no key or family matched and the table's default was used.
    known: bool = True

    @computed_field  # type: ignore[prop-decorator]
    @property
    def max_input(self) -> int:
        """Tokens left for the prompt once the longest reply is reserved."""
        return self.max_context - self.max_output


@dataclass(frozen=True, slots=True)
class ModelLimitsTable:
    """The rows of the packaged file with a user file's rows laid over them (field by field),
    the family fallbacks in order, and the default row."""

    rows: Mapping[str, _Row]
    families: tuple[tuple[str, str], ...]
    default: _Row

    def lookup(self, model: str) -> ModelLimits:
        """The limits of `model`: its exact row, else the longest key that prefixes it up to a
        separator, else the first family needle found in it, else the default (`known=False`)."""
        name = _normalise(model)
        key = name if name in self.rows else _longest_prefix(name, self.rows)
        if key is None:
            key = next((k for needle, k in self.families if needle in name), None)
        if key is None or key not in self.rows:
            return self._limits(name, self.default, known=False)
        return self._limits(key, self.rows[key], known=True)

    def _limits(self, key: str, row: _Row, *, known: bool) -> ModelLimits:
        base = self.default
        context = row.context or base.context or 0
        max_output = row.max_output or base.max_output or 0
        provider = row.provider or base.provider or "openai"
        encoding = row.encoding or (encoding_name_for_model(key) if known else None)
        return ModelLimits(
            model=key,
            max_context=context,
            max_output=max_output,
            provider=provider,
            vision=bool(row.vision),
            audio=bool(row.audio),
            pdf=bool(row.pdf),
            encoding=encoding,
            known=known,
        )


def _normalise(model: str) -> str:
    """Lower-case `model` without a provider prefix ("openai:", "anthropic/", "models/")."""
    return _PROVIDER_PREFIX.sub("", model.strip().lower())


def _longest_prefix(name: str, keys: Mapping[str, object]) -> str | None:
    best = ""
    for key in keys:
        if name.startswith(key) and len(key) > len(best):
            rest = name[len(key) :]
            # "gpt-4" must not claim "gpt-40x"; a key ends at a separator or the name's end.
            if not rest or not rest[0].isalnum():
                best = key
    return best or None


def _parse(data: Mapping[str, object], where: str) -> tuple[dict[str, _Row], dict[str, str], _Row]:
    """Rows, families and default of one file's TOML document.

    Raises:
        ConfigError: an unknown top-level table, a field of the wrong type, an unknown field.
    """
    unknown = set(data) - _TOP_KEYS
    if unknown:
        expected = sorted(_TOP_KEYS)
        raise ConfigError(f"{where}: unknown table(s) {sorted(unknown)}; expected {expected}")
    rows: dict[str, _Row] = {}
    models = data.get("models", {})
    if not isinstance(models, Mapping):
        raise ConfigError(f"{where}: `models` must be a table of model tables")
    for name, raw in models.items():
        rows[_normalise(str(name))] = _row(raw, f'{where}: models."{name}"')
    families = data.get("families", {})
    if not isinstance(families, Mapping) or not all(isinstance(v, str) for v in families.values()):
        raise ConfigError(f"{where}: `families` must map a name fragment to a model key")
    default = _row(data.get("default", {}), f"{where}: default")
    return rows, {str(k).lower(): _normalise(str(v)) for k, v in families.items()}, default


def _row(raw: object, where: str) -> _Row:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a table")
    try:
        return _Row.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"{where}: {problems}") from exc


def _read(path: Path) -> Mapping[str, object]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"model limits file {path} cannot be read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"model limits file {path} is not valid TOML: {exc}") from exc


def _merge(base: _Row, over: _Row) -> _Row:
    """`base` with every field `over` sets replaced."""
    return base.model_copy(update=over.model_dump(exclude_none=True))


@functools.lru_cache(maxsize=1)
def _packaged() -> tuple[dict[str, _Row], dict[str, str], _Row]:
    text = resources.files("content_core").joinpath(_PACKAGED).read_text(encoding="utf-8")
    return _parse(tomllib.loads(text), _PACKAGED)


@functools.lru_cache(maxsize=8)
def _table(path: str | None, stamp: int) -> ModelLimitsTable:
    # `stamp` (the file's mtime) is part of the key so an edited file is read again.
    rows, families, default = _packaged()
    rows = dict(rows)
    families = dict(families)
    if path is not None:
        user_rows, user_families, user_default = _parse(_read(Path(path)), path)
        for name, row in user_rows.items():
            rows[name] = _merge(rows[name], row) if name in rows else row
        families = {**user_families, **families} if user_families else families
        default = _merge(default, user_default)
    for needle, key in families.items():
        if key not in rows:
            raise ConfigError(f"{path or _PACKAGED}: family {needle!r} names no model {key!r}")
    return ModelLimitsTable(rows, tuple(families.items()), default)


def load_model_limits(path: str | os.PathLike[str] | None = None) -> ModelLimitsTable:
    """The limits table: the packaged rows, overlaid by the user file at `path` (or, when
    `path` is None, at `$CONTENT_MODEL_LIMITS` if set). A user row adds a model or overrides
    the fields it sets; its `[families]` come before the packaged ones; its `[default]`
    replaces the default's fields it sets.

    Raises:
        ConfigError: the user file cannot be read, is not TOML, or holds an invalid entry.
    """
    chosen = os.fspath(path) if path is not None else os.environ.get(LIMITS_FILE_ENV) or None
    if chosen is None:
        return _table(None, 0)
    try:
        stamp = Path(chosen).stat().st_mtime_ns
    except OSError as exc:
        raise ConfigError(f"model limits file {chosen} cannot be read: {exc.strerror}") from exc
    return _table(chosen, stamp)


_warned: set[str] = set()
_warned_lock = threading.Lock()


def get_model_limits(
    model: str, *, limits_file: str | os.PathLike[str] | None = None
) -> ModelLimits:
    """Return the limits of `model`, matched by family (see `ModelLimitsTable.lookup`).

    Exact names win; otherwise the longest table key that prefixes the name (so
    "gpt-4o-mini-2024-07-18" gets gpt-4o-mini); otherwise a family fallback; otherwise the
    table's default (128,000 tokens of context, 4,096 of reply), with one warning per model
    name and process. `limits_file` (or `$CONTENT_MODEL_LIMITS`) adds or corrects rows.

    Raises:
        ConfigError: the user limits file is unreadable or invalid.
    """
    limits = load_model_limits(limits_file).lookup(model)
    if not limits.known:
        with _warned_lock:
            first = limits.model not in _warned
            _warned.add(limits.model)
        if first:
            logger.warning(
                "no limits known for model %r; using the default of %d context and %d reply "
                "tokens (add it to a file named by %s)",
                model,
                limits.max_context,
                limits.max_output,
                LIMITS_FILE_ENV,
            )
    return limits


def part_format_for_model(model: str | None) -> Literal["openai", "anthropic"]:
    """The content-part shapes `model`'s API takes: "anthropic" for Anthropic's models, else
    "openai" (the chat-completions shapes other vendors' compatible endpoints take too)."""
    if model is None:
        return "openai"
    limits = load_model_limits().lookup(model)
    return "anthropic" if limits.known and limits.provider == "anthropic" else "openai"
