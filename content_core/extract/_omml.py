"""Office Math (OMML: `m:oMath`, `m:oMathPara`) as LaTeX, for DOCX and Word XML paragraphs.

Inline formulas become `$...$`, a formula paragraph (`m:oMathPara`) `$$...$$`. The limits of
`_math` apply: below `MAX_MATH_DEPTH` levels, or past `MAX_MATH_NODES` elements, the rest of a
formula is its plain text.
"""

from __future__ import annotations

from typing import Any

from content_core.extract._math import MAX_MATH_DEPTH, MAX_MATH_NODES, fence_latex
from content_core.extract._mathsymbols import (
    LARGE_OPERATORS,
    SYMBOLS,
    accent_command,
    delimiter,
    escape_text,
    group,
    join_latex,
    script_base,
    symbols_to_latex,
)

__all__ = ["OMATH", "OMATH_PARA", "omml_latex"]

_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
OMATH = f"{_M}oMath"
OMATH_PARA = f"{_M}oMathPara"
_VAL = f"{_M}val"
_BRACES = {"⏞": "\\overbrace", "︷": "\\overbrace", "⏟": "\\underbrace", "︸": "\\underbrace"}


def omml_latex(element: Any) -> str:
    """The fenced LaTeX of an `m:oMath` (`$...$`) or `m:oMathPara` (`$$...$$`, its formulas
    one per line), or "" for an empty formula."""
    converter = _Converter()
    if element.tag == OMATH_PARA:
        lines = [converter.latex(math) for math in element.iter(OMATH)]
        return fence_latex(" \\\\ ".join(line for line in lines if line.strip()), True)
    return fence_latex(converter.latex(element), False)


def _prop(element: Any, container: str, name: str, default: str = "") -> str:
    """The `m:val` of `<container><name m:val=.../>` under `element` (`default` when absent;
    an element without `m:val` means "on" for the on/off properties)."""
    found = element.find(f"{_M}{container}/{_M}{name}")
    if found is None:
        return default
    return str(found.get(_VAL, "1" if name.endswith("Hide") else default))


class _Converter:
    def __init__(self) -> None:
        self._nodes = 0

    def latex(self, element: Any, depth: int = 0) -> str:
        """The LaTeX of the children of `element`, in order."""
        return join_latex(self._one(child, depth + 1) for child in element)

    def _part(self, element: Any, name: str, depth: int) -> str:
        found = element.find(f"{_M}{name}")
        return self.latex(found, depth) if found is not None else ""

    def _one(self, element: Any, depth: int) -> str:  # noqa: PLR0911, PLR0912
        tag = element.tag
        if not isinstance(tag, str) or tag.endswith("Pr"):
            return ""  # comments, and the property elements (m:fPr, m:rPr, w:rPr, ...)
        self._nodes += 1
        if depth > MAX_MATH_DEPTH or self._nodes > MAX_MATH_NODES:
            return (
                "\\text{" + escape_text(" ".join("".join(element.itertext()).split())[:1000]) + "}"
            )
        name = tag[len(_M) :] if tag.startswith(_M) else ""
        if name == "r" or tag == f"{_W}r":
            return self._run(element)
        if name == "f":
            return self._fraction(element, depth)
        if name in ("sSub", "sSup", "sSubSup", "sPre"):
            base = script_base(self._part(element, "e", depth))
            sub, sup = self._part(element, "sub", depth), self._part(element, "sup", depth)
            scripts = (f"_{group(sub)}" if name != "sSup" else "") + (
                f"^{group(sup)}" if name != "sSub" else ""
            )
            return "{}" + scripts + base if name == "sPre" else base + scripts
        if name == "rad":
            degree = self._part(element, "deg", depth)
            body = self._part(element, "e", depth)
            hidden = _prop(element, "radPr", "degHide", "0") in ("1", "on", "true")
            return f"\\sqrt{{{body}}}" if hidden or not degree else f"\\sqrt[{degree}]{{{body}}}"
        if name == "nary":
            return self._nary(element, depth)
        if name == "d":
            return self._delimiter(element, depth)
        if name == "func":
            function = self._part(element, "fName", depth).strip()
            if function.isalpha() and len(function) > 1:
                function = f"\\operatorname{{{function}}}"
            return join_latex([function, self._part(element, "e", depth)]).strip()
        if name in ("limLow", "limUpp"):
            base = self._part(element, "e", depth).strip()
            limit = self._part(element, "lim", depth)
            script = "_" if name == "limLow" else "^"
            if base in LARGE_OPERATORS or base.startswith(("\\overbrace{", "\\underbrace{")):
                return f"{base}{script}{group(limit)}"
            command = "\\underset" if name == "limLow" else "\\overset"
            return f"{command}{{{limit}}}{{{base}}}"
        if name == "acc":
            body = self._part(element, "e", depth)
            command = accent_command(_prop(element, "accPr", "chr", "\u0302")) or "\\hat"
            return f"{command}{{{body}}}"
        if name == "bar":
            body = self._part(element, "e", depth)
            top = _prop(element, "barPr", "pos", "bot") == "top"
            return f"\\overline{{{body}}}" if top else f"\\underline{{{body}}}"
        if name == "groupChr":
            return self._group_char(element, depth)
        if name == "m":
            rows = [
                " & ".join(self.latex(cell, depth + 1) for cell in row.iterfind(f"{_M}e"))
                for row in element.iterfind(f"{_M}mr")
            ]
            return "\\begin{matrix}" + " \\\\ ".join(rows) + "\\end{matrix}"
        if name == "eqArr":
            lines = [self.latex(line, depth + 1) for line in element.iterfind(f"{_M}e")]
            return "\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}"
        if name == "borderBox":
            return f"\\boxed{{{self._part(element, 'e', depth)}}}"
        # m:oMath, m:e, m:box, m:phant, m:argPr's siblings, w: wrappers: their content in order.
        return self.latex(element, depth)

    def _run(self, run: Any) -> str:
        text = "".join(t.text or "" for t in run if t.tag in (f"{_M}t", f"{_W}t"))
        if not text:
            return ""
        plain = run.find(f"{_M}rPr/{_M}nor") is not None or run.tag == f"{_W}r"
        if plain and any(c.isalpha() for c in text):
            return f"\\text{{{escape_text(text)}}}"
        return symbols_to_latex(text)

    def _fraction(self, element: Any, depth: int) -> str:
        num, den = self._part(element, "num", depth), self._part(element, "den", depth)
        kind = _prop(element, "fPr", "type", "bar")
        if kind in ("lin", "skw"):
            return f"{group(num)}/{group(den)}"
        if kind == "noBar":
            return f"\\genfrac{{}}{{}}{{0pt}}{{}}{{{num}}}{{{den}}}"
        return f"\\frac{{{num}}}{{{den}}}"

    def _nary(self, element: Any, depth: int) -> str:
        char = _prop(element, "naryPr", "chr", "∫")
        operator = SYMBOLS.get(char, char)
        sub = (
            ""
            if _prop(element, "naryPr", "subHide", "0") in ("1", "on", "true")
            else (self._part(element, "sub", depth))
        )
        sup = (
            ""
            if _prop(element, "naryPr", "supHide", "0") in ("1", "on", "true")
            else (self._part(element, "sup", depth))
        )
        scripts = (f"_{group(sub)}" if sub else "") + (f"^{group(sup)}" if sup else "")
        return join_latex([operator + scripts, " ", self._part(element, "e", depth)]).strip()

    def _delimiter(self, element: Any, depth: int) -> str:
        opening = _prop(element, "dPr", "begChr", "(")
        closing = _prop(element, "dPr", "endChr", ")")
        separator = symbols_to_latex(_prop(element, "dPr", "sepChr", "|"))
        items = [self.latex(part, depth + 1) for part in element.iterfind(f"{_M}e")]
        body = separator.join(items)
        return f"\\left{delimiter(opening)}{body}\\right{delimiter(closing)}"

    def _group_char(self, element: Any, depth: int) -> str:
        body = self._part(element, "e", depth)
        char = _prop(element, "groupChrPr", "chr", "⏟")
        command = _BRACES.get(char)
        if command:
            return f"{command}{{{body}}}"
        symbol = SYMBOLS.get(char, char)
        top = _prop(element, "groupChrPr", "pos", "bot") == "top"
        return f"\\overset{{{symbol}}}{{{body}}}" if top else f"\\underset{{{symbol}}}{{{body}}}"
