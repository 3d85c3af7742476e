"""Word's automatic numbering (`numbering.xml`): the label a numbered paragraph shows, such as
"1.2" before a heading, computed as Word counts.

A paragraph is numbered by its own `w:numPr` or by its style's (through `basedOn`); `w:num`
points at an `w:abstractNum` whose `w:lvl` elements give each level's start, format
(`numFmt`) and label pattern (`lvlText`, "%1.%2"). Counters run per list in document order;
a level restarts when a shallower level advances.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Numbering"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MAX_LEVELS = 9
_MAX_BASED_ON = 16
# Letters repeat past z ("aa", "bbb"); a hostile start value must not make a huge label.
_MAX_LETTER_NUMBER = 26 * 8
_ROMAN = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Level:
    start: int = 1
    fmt: str = "decimal"
    text: str = ""
    legal: bool = False


@dataclass(slots=True)
class _List:
    levels: dict[int, _Level]
    counters: list[int | None] = field(default_factory=lambda: [None] * _MAX_LEVELS)


def _val(element: Any, path: str) -> str | None:
    found = element.find(path)
    return None if found is None else found.get(f"{_W}val")


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _format(number: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter") and 0 < number <= _MAX_LETTER_NUMBER:
        letter = chr(ord("a") + (number - 1) % 26) * ((number - 1) // 26 + 1)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman") and 0 < number < 4000:
        out, rest = "", number
        for value, symbol in _ROMAN:
            while rest >= value:
                out, rest = out + symbol, rest - value
        return out.upper() if fmt == "upperRoman" else out
    if fmt == "decimalZero":
        return f"{number:02d}"
    return str(number)


class Numbering:
    """Labels of numbered paragraphs, counted in the order `label` is called."""

    def __init__(self, numbering: Any | None, styles: Any | None) -> None:
        """Read `w:numbering` and the style definitions (either may be None)."""
        abstract: dict[str, dict[int, _Level]] = {}
        self._lists: dict[str, _List] = {}
        self._style_numbers: dict[str, tuple[str, int | None]] = {}
        self._level_styles: dict[tuple[str, str], int] = {}
        self._based_on: dict[str, str] = {}
        if numbering is not None:
            style_links: dict[str, str] = {}
            for element in numbering.iter(f"{_W}abstractNum"):
                key = element.get(f"{_W}abstractNumId", "")
                abstract[key] = self._levels(element, key)
                link = _val(element, f"{_W}styleLink")
                if link:
                    style_links[link] = key
            # A definition that only names a numbering style (`numStyleLink`, as Word's
            # outline lists do) takes the levels of the definition that style links to.
            for element in numbering.iter(f"{_W}abstractNum"):
                link = _val(element, f"{_W}numStyleLink")
                key = element.get(f"{_W}abstractNumId", "")
                if link in style_links and not abstract.get(key):
                    abstract[key] = abstract[style_links[link]]
            shared: dict[str, _List] = {}
            for element in numbering.iter(f"{_W}num"):
                key = _val(element, f"{_W}abstractNumId") or ""
                levels = abstract.get(key, {})
                if element.find(f"{_W}lvlOverride") is not None:
                    # A restarted or changed list counts on its own.
                    self._lists[element.get(f"{_W}numId", "")] = _List(
                        self._overridden(levels, element)
                    )
                else:
                    # Lists of one abstract definition continue one another, as in Word.
                    self._lists[element.get(f"{_W}numId", "")] = shared.setdefault(
                        key, _List(levels)
                    )
        if styles is not None:
            for style in styles.iter(f"{_W}style"):
                style_id = style.get(f"{_W}styleId", "")
                based = _val(style, f"{_W}basedOn")
                if based:
                    self._based_on[style_id] = based
                props = style.find(f"{_W}pPr/{_W}numPr")
                if props is not None:
                    level = _val(props, f"{_W}ilvl")
                    self._style_numbers[style_id] = (
                        _val(props, f"{_W}numId") or "",
                        _int(level, 0) if level is not None else None,
                    )

    def _levels(self, element: Any, key: str) -> dict[int, _Level]:
        levels: dict[int, _Level] = {}
        for lvl in element.iter(f"{_W}lvl"):
            index = _int(lvl.get(f"{_W}ilvl"), 0)
            if not 0 <= index < _MAX_LEVELS:
                continue
            levels[index] = _Level(
                start=_int(_val(lvl, f"{_W}start"), 1),
                fmt=_val(lvl, f"{_W}numFmt") or "decimal",
                text=_val(lvl, f"{_W}lvlText") or "",
                legal=lvl.find(f"{_W}isLgl") is not None,
            )
            style = _val(lvl, f"{_W}pStyle")
            if style:
                self._level_styles[(key, style)] = index
        return levels

    def _overridden(self, levels: dict[int, _Level], num: Any) -> dict[int, _Level]:
        out = dict(levels)
        for override in num.iter(f"{_W}lvlOverride"):
            index = _int(override.get(f"{_W}ilvl"), 0)
            lvl = override.find(f"{_W}lvl")
            if lvl is not None:
                out.update(self._levels(_Wrap(lvl), ""))
            start = _val(override, f"{_W}startOverride")
            if start is not None and index in out:
                old = out[index]
                out[index] = _Level(_int(start, 1), old.fmt, old.text, old.legal)
        return out

    def label(self, props: Any | None, style_id: str) -> str:
        """Count the paragraph with properties `props` (its `w:pPr`) and return its label,
        or "" when it is not numbered (or its format is a bullet)."""
        num_id, level = self._number_of(props, style_id)
        numbered = self._lists.get(num_id) if num_id else None
        if numbered is None:
            return ""
        if level is None:
            level = 0
        level = min(max(level, 0), _MAX_LEVELS - 1)
        definition = numbered.levels.get(level, _Level())
        counters = numbered.counters
        current = counters[level]
        counters[level] = definition.start if current is None else current + 1
        for deeper in range(level + 1, _MAX_LEVELS):
            counters[deeper] = None
        if definition.fmt in ("bullet", "none") or not definition.text:
            return ""
        label = definition.text
        for index in range(level, -1, -1):
            parent = numbered.levels.get(index, _Level())
            value = counters[index]
            if value is None:
                value = parent.start
            fmt = "decimal" if definition.legal and index < level else parent.fmt
            label = label.replace(f"%{index + 1}", _format(value, fmt))
        return label.strip()

    def _number_of(self, props: Any | None, style_id: str) -> tuple[str, int | None]:
        own = props.find(f"{_W}numPr") if props is not None else None
        if own is not None:
            own_id = _val(own, f"{_W}numId")
            own_level = _val(own, f"{_W}ilvl")
            if own_id is not None:
                return own_id, _int(own_level, 0) if own_level is not None else None
        style = style_id
        for _ in range(_MAX_BASED_ON):
            if style in self._style_numbers:
                num_id, level = self._style_numbers[style]
                if level is None:
                    level = self._style_level(num_id, style_id)
                return num_id, level
            if style not in self._based_on:
                break
            style = self._based_on[style]
        return "", None

    def _style_level(self, num_id: str, style_id: str) -> int | None:
        for (_, style), index in self._level_styles.items():
            if style == style_id and num_id in self._lists:
                return index
        return None


class _Wrap:
    """Lets `_levels` read one `w:lvl` element as if it were an abstract definition."""

    def __init__(self, lvl: Any) -> None:
        self._lvl = lvl

    def iter(self, tag: str) -> list[Any]:
        return [self._lvl] if tag == f"{_W}lvl" else []
