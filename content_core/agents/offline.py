"""OfflineExtractor: a deterministic, model-free agent that fills the facts schema with rules."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from pydantic import BaseModel, ValidationError

from content_core.agents.base import AgentResult, Usage
from content_core.agents.schemas import ExtractedFacts
from content_core.compression.extractive import _terms, extractive_compress
from content_core.errors import LLMOutputError
from content_core.tokens import default_estimator

__all__ = ["OFFLINE_MODEL", "OfflineExtractor", "extract_facts"]

# Part of every cache key: bump it when the rules below change what they extract.
OFFLINE_MODEL = "offline-facts-v2"

# The templates put the chunk between <document> and </document> lines; the instructions
# above may mention the tags inline, so only whole-line tags count.
# (The first opening line, the last closing line after it: what `^<document>[ \t]*\n(.*)\n
# </document>[ \t]*$` with DOTALL finds, without rescanning the text from every opening line.)
_DOCUMENT_OPEN = re.compile(r"^<document>[ \t]*+\n", re.MULTILINE)
_DOCUMENT_CLOSE = re.compile(r"\n</document>[ \t]*+$", re.MULTILINE)
# E-mail addresses, as `\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`
# finds them; that pattern retries its local part from every word boundary of a long run
# ("a.a.a.a..."), so `_emails` finds each run once and the boundary inside it.
_EMAIL_LOCAL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++(?=@)")
_BOUNDARY = re.compile(r"\b")
_EMAIL_DOMAIN = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`)\]}]+", re.IGNORECASE)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}\.?,? \d{{4}}"
    rf"|{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}})\b"
)
_NUMBER = r"\d{1,3}(?:[,\u202f ]\d{3})*(?:\.\d+)?|\d+(?:[.,]\d+)?"
_SCALE = r"(?:\s?(?:million|billion|thousand|bn|[kKmM])\b)?"
_CODES = r"(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR)"
_AMOUNT = re.compile(
    rf"(?:[$€£¥]\s?(?:{_NUMBER}){_SCALE})"
    rf"|(?:\b{_CODES}\s?(?:{_NUMBER}){_SCALE})"
    rf"|(?:(?<![\w.])(?:{_NUMBER}){_SCALE}\s?(?:{_CODES}|dollars|euros|pounds)\b)"
    rf"|(?:(?<![\w.])(?:{_NUMBER})\s?[€£])"
)
# Every alternative of _AMOUNT holds one of these literally: a cheap scan rules most text out.
_CURRENCY = re.compile(rf"[$€£¥]|{_CODES}|dollars|euros|pounds")
_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SETEXT = re.compile(r"^(\S[^\n]*)\n\s{0,3}(?:=+|-+)\s*$", re.MULTILINE)
# A code fence opening or closing a block (```json, ~~~): markup, never a title.
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})")
_TITLE_CHARS = 120
_SUMMARY_TOKENS = 80
_MAX_TERMS = 10


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _email_spans(text: str) -> list[tuple[int, int]]:
    """Where each e-mail address in `text` starts and ends, left to right, in linear time."""
    spans: list[tuple[int, int]] = []
    end = 0
    for run in _EMAIL_LOCAL.finditer(text):
        at = run.end()
        start = max(run.start(), end)
        if start >= at:
            continue
        boundary = _BOUNDARY.search(text, start, at)
        if boundary is None or boundary.start() >= at:
            continue
        domain = _EMAIL_DOMAIN.match(text, at + 1)
        if domain is None:
            continue
        end = domain.end()
        spans.append((boundary.start(), end))
    return spans


def _document(prompt: str) -> str | None:
    """The text between the first whole-line <document> and the last </document> after it."""
    opening = _DOCUMENT_OPEN.search(prompt)
    if opening is None:
        return None
    closing = None
    for match in _DOCUMENT_CLOSE.finditer(prompt, opening.end()):
        closing = match
    return None if closing is None else prompt[opening.end() : closing.start()]


def extract_facts(text: str) -> ExtractedFacts:
    """Fill `ExtractedFacts` from `text` with regular expressions and term statistics."""
    headings = _headings(text)
    title = _title(headings, text)
    prose = _ATX.sub("", _SETEXT.sub("", text))
    summary = " ".join(extractive_compress(prose, _SUMMARY_TOKENS, default_estimator()).split())
    # Heading words count twice: a heading names what its section is about.
    words = _terms(_URL.sub(" ", _without_emails(prose))) + 2 * _terms(" ".join(headings))
    counts = Counter(t for t in words if any(c.isalpha() for c in t))
    key_terms = [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return ExtractedFacts(
        title=title,
        summary=summary,
        key_terms=[t for t in key_terms if len(t) > 3][:_MAX_TERMS],
        emails=_unique([text[a:b] for a, b in _email_spans(text)]),
        urls=_unique([u.rstrip(".,;:!?") for u in _URL.findall(text)]),
        dates=_unique(_DATE.findall(text)),
        amounts=_unique([" ".join(a.split()) for a in _amounts(text)]),
        headings=headings,
    )


def _without_emails(text: str) -> str:
    """`text` with each e-mail address replaced by a space."""
    parts: list[str] = []
    position = 0
    for start, end in _email_spans(text):
        parts.append(text[position:start])
        parts.append(" ")
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _amounts(text: str) -> list[str]:
    """Every money amount in `text` (none without a currency sign, code or name)."""
    return _AMOUNT.findall(text) if _CURRENCY.search(text) else []


def _is_title(line: str) -> bool:
    """Whether a line can title a document: it has a letter or digit and is no code fence (a
    JSON document's first line is `{` or `[`)."""
    return any(c.isalnum() for c in line) and not _FENCE.match(line)


def _title(headings: list[str], text: str) -> str | None:
    """The first heading that can title the text, else its first line that can, shortened;
    None when no line can."""
    lines = (line.strip() for line in [*headings, *text.splitlines()])
    return next((line[:_TITLE_CHARS] for line in lines if _is_title(line)), None)


def _headings(text: str) -> list[str]:
    found = [(m.start(), m.group(1).strip()) for m in _ATX.finditer(text)]
    found += [(m.start(), m.group(1).strip()) for m in _SETEXT.finditer(text)]
    return _unique([h for _, h in sorted(found)])


class OfflineExtractor:
    """An agent that needs no model: `run(prompt)` extracts facts from the prompt's document.

    When the prompt wraps the chunk in `<document>` tags (as the bundled templates do), only
    that part is read, so instructions never leak into the facts. A `schema` other than
    ExtractedFacts is filled from the facts fields it shares with them; if it then does not
    validate, `LLMOutputError` is raised, as for a model reply.
    """

    def __init__(self, schema: type[BaseModel] = ExtractedFacts) -> None:
        self.schema = schema
        self.model = OFFLINE_MODEL

    async def run(self, prompt: str, **kwargs: Any) -> AgentResult[BaseModel]:
        """Return the facts of the prompt's document as an instance of the schema."""
        # Any: kwargs are accepted for contract compatibility with other agents and ignored.
        del kwargs
        document = _document(prompt)
        facts = extract_facts(prompt if document is None else document)
        if self.schema is ExtractedFacts:
            return AgentResult(output=facts, model=self.model, usage=Usage())
        shared = {k: v for k, v in facts.model_dump().items() if k in self.schema.model_fields}
        try:
            output = self.schema.model_validate(shared)
        except ValidationError as exc:
            raise LLMOutputError(
                f"offline extractor cannot fill schema {self.schema.__name__}: {exc}",
                stage="extract",
            ) from exc
        return AgentResult(output=output, model=self.model, usage=Usage())
