"""The BM25 index's tokenizer: which one this install runs (character bigrams for Chinese,
Japanese, Korean and Thai, or the word segmenters of the `cjk` extra), and the SQL function
that runs the segmenters inside DuckDB.

The index records the tokenizer's name (`search.index`) and is built anew when the install's
differs, so an index and its queries are always tokenized alike. Without a segmenter, every
term is computed in SQL (`store.search_sql.terms_sql`), as the `search_chunks` macro does.
With one, a run of Korean (kiwipiepy), Japanese (a run holding kana: fugashi with
unidic-lite), Chinese (a run of Han characters only: rjieba, else jieba) or Thai (pythainlp)
letters is cut into its words by a Python function registered on the connection; a script
whose segmenter is missing keeps its bigrams. `CONTENT_SEGMENTERS=none` turns them off.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import duckdb
from duckdb.func import FunctionNullHandling

from content_core.store.search_sql import BIGRAM_TOKENIZER

__all__ = [
    "SEGMENT_FUNCTION",
    "SEGMENTERS_VARIABLE",
    "Tokenizer",
    "active_tokenizer",
    "bigram_tokenizer",
    "register_tokenizer",
    "segment_function",
    "segment_words",
]

SEGMENT_FUNCTION = "content_segment"
SEGMENTERS_VARIABLE = "CONTENT_SEGMENTERS"  # "auto" (default: every one installed) or "none"

# The scripts of `search_sql.BIGRAM_SCRIPTS`, as code point ranges (`re` has no \p{Han}).
_HAN = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f"
)
_KANA = "\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff\uffa0-\uffdc"
_THAI = "\u0e00-\u0e7f"
_OTHER = "\u0e80-\u0eff\u1780-\u17ff\u19e0-\u19ff\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f"
_RUN = re.compile(f"[{_HAN}{_KANA}{_HANGUL}{_THAI}{_OTHER}]+")
_SCRIPT = {
    "ko": re.compile(f"[{_HANGUL}]"),
    "ja": re.compile(f"[{_KANA}]"),
    "th": re.compile(f"[{_THAI}]"),
    "zh": re.compile(f"[{_HAN}]"),
}
# Per script, the packages that segment it, in order of preference: (import name, dist name).
_PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "ko": (("kiwipiepy", "kiwipiepy"),),
    "ja": (("fugashi", "fugashi"),),
    "zh": (("rjieba", "rjieba"), ("jieba", "jieba")),
    "th": (("pythainlp", "pythainlp"),),
}
_WORD = re.compile(r"\w")


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """A tokenizer of the index: its recorded name and, per script code (ko, ja, zh, th),
    the package that segments it (none: bigrams for every script, all in SQL)."""

    name: str
    segmenters: tuple[tuple[str, str], ...] = ()


def bigram_tokenizer() -> Tokenizer:
    """The base install's tokenizer: character bigrams, computed in SQL."""
    return Tokenizer(BIGRAM_TOKENIZER)


def _installed(module: str) -> bool:
    if importlib.util.find_spec(module) is None:
        return False
    # fugashi needs a dictionary package; kiwipiepy its model (a dependency of its wheel).
    if module == "fugashi":
        return importlib.util.find_spec("unidic_lite") is not None
    return True


@cache
def _installed_tokenizer() -> Tokenizer:
    chosen: list[tuple[str, str]] = []
    for script, options in _PACKAGES.items():
        for module, dist in options:
            if _installed(module):
                chosen.append((script, f"{module}-{importlib.metadata.version(dist)}"))
                break
    if not chosen:
        return bigram_tokenizer()
    described = ",".join(f"{script}:{package}" for script, package in chosen)
    return Tokenizer(f"{BIGRAM_TOKENIZER}+segment({described})", tuple(chosen))


def active_tokenizer() -> Tokenizer:
    """The tokenizer this install indexes and queries with: the segmenters installed, unless
    `CONTENT_SEGMENTERS=none` (read on each call) asks for the bigrams alone.

    Raises:
        ValueError: `CONTENT_SEGMENTERS` is neither `auto` nor `none`.
    """
    wanted = os.environ.get(SEGMENTERS_VARIABLE, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "none"):
        raise ValueError(f"{SEGMENTERS_VARIABLE} must be auto or none, not {wanted!r}")
    return bigram_tokenizer() if wanted == "none" else _installed_tokenizer()


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


@cache
def _cutter(module: str) -> Callable[[str], list[str]]:
    """The word cutter of an installed segmenter package (loaded once per process)."""
    if module == "kiwipiepy":
        from kiwipiepy import Kiwi

        kiwi = Kiwi()
        return lambda text: [token.form for token in kiwi.tokenize(text)]
    if module == "fugashi":
        import fugashi

        tagger = fugashi.Tagger()
        return lambda text: [word.surface for word in tagger(text)]
    if module == "rjieba":
        import rjieba

        return lambda text: list(rjieba.cut(text))
    if module == "jieba":
        import jieba

        return lambda text: list(jieba.cut(text))
    from pythainlp.tokenize import word_tokenize

    return lambda text: list(word_tokenize(text, engine="newmm", keep_whitespace=False))


def _script(run: str) -> str:
    for script, pattern in _SCRIPT.items():  # Korean, then kana (Japanese), Thai, Han
        if pattern.search(run):
            return script
    return ""


def segment_words(text: str | None, tokenizer: Tokenizer) -> list[str]:
    """The CJK and Thai terms of `text` (already lower case) under `tokenizer`: each run of
    those scripts cut into words by its script's segmenter, or into character bigrams."""
    if not text:
        return []
    packages = dict(tokenizer.segmenters)
    terms: list[str] = []
    for run in _RUN.findall(text):
        package = packages.get(_script(run))
        if package is None:
            terms.extend(_bigrams(run))
            continue
        cut = _cutter(package.rsplit("-", 1)[0])
        terms.extend(word for word in cut(run) if _WORD.search(word))
    return terms


def register_tokenizer(
    connection: duckdb.DuckDBPyConnection, tokenizer: Tokenizer | None = None
) -> Tokenizer:
    """Register `tokenizer`'s segmenting function on `connection` (the active tokenizer by
    default; nothing to register for bigrams) and return it."""
    tokenizer = tokenizer or active_tokenizer()
    if tokenizer.segmenters and segment_function(connection) is None:
        connection.create_function(
            SEGMENT_FUNCTION,
            lambda text: segment_words(text, tokenizer),
            [duckdb.sqltype("VARCHAR")],
            duckdb.list_type(duckdb.sqltype("VARCHAR")),
            null_handling=FunctionNullHandling.SPECIAL,  # NULL text: no terms
        )
        _REGISTERED[connection] = SEGMENT_FUNCTION
    return tokenizer


def segment_function(connection: duckdb.DuckDBPyConnection) -> str | None:
    """The name of the segmenting function `register_tokenizer` registered on `connection`,
    or None (bigrams)."""
    return _REGISTERED.get(connection)


# The connections holding the function: a lookup here, not in `duckdb_functions()`, which
# lists every function DuckDB has (over 100 ms a query on a loaded machine).
_REGISTERED: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, str] = (
    weakref.WeakKeyDictionary()
)
