"""MathML formulas as LaTeX (`$...$` inline, `$$...$$` for `display="block"`), from lxml
elements (ODF formula objects, XML documents) or BeautifulSoup tags (HTML, EPUB).

Hostile input is bounded: below `MAX_MATH_DEPTH` levels, or past `MAX_MATH_NODES` elements,
the rest of a formula is kept as its plain text, and a formula's LaTeX is cut at
`MAX_LATEX_CHARS`. A TeX annotation (`<annotation encoding="application/x-tex">`) is the
author's own LaTeX and is used as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from content_core.extract._mathsymbols import (
    LARGE_OPERATORS,
    accent_command,
    delimiter,
    escape_text,
    group,
    join_latex,
    script_base,
    symbols_to_latex,
)

__all__ = [
    "MAX_LATEX_CHARS",
    "MAX_MATH_DEPTH",
    "MAX_MATH_NODES",
    "fence_latex",
    "limit_latex",
    "mathml_body_latex",
    "mathml_element_latex",
    "mathml_soup_latex",
]

MAX_MATH_DEPTH = 48
MAX_MATH_NODES = 20_000
MAX_LATEX_CHARS = 20_000
_TEX_ENCODINGS = frozenset({"application/x-tex", "tex", "latex", "application/x-latex"})
_UNDER_BRACES = frozenset({"⏟", "︸"})
_OVER_BRACES = frozenset({"⏞", "︷"})
_LINES = frozenset({"¯", "‾", "_", "\u0332", "―", "─"})


@dataclass(frozen=True, slots=True)
class _Node:
    """One MathML element: its local name, the attributes read here, children and text."""

    name: str
    attrs: dict[str, str]
    children: tuple[_Node, ...]
    text: str


class _Budget:
    def __init__(self) -> None:
        self.nodes = 0

    def take(self) -> bool:
        self.nodes += 1
        return self.nodes <= MAX_MATH_NODES


def _leaf(text: str) -> _Node:
    """A subtree past the limits: its plain text, kept as text."""
    return _Node("mtext", {}, (), " ".join(text.split())[:1000])


def _from_lxml(element: Any, budget: _Budget, depth: int = 0) -> _Node:
    if depth > MAX_MATH_DEPTH or not budget.take():
        return _leaf("".join(element.itertext()))
    name = element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""
    attrs = {k.rsplit("}", 1)[-1].lower(): v for k, v in element.attrib.items()}
    children = tuple(
        _from_lxml(child, budget, depth + 1) for child in element if isinstance(child.tag, str)
    )
    return _Node(name, attrs, children, element.text or "" if not children else "")


def _from_soup(tag: Any, budget: _Budget, depth: int = 0) -> _Node:
    if depth > MAX_MATH_DEPTH or not budget.take():
        return _leaf(tag.get_text())
    name = str(tag.name).rsplit(":", 1)[-1].lower()
    attrs = {str(k).rsplit(":", 1)[-1].lower(): str(v) for k, v in tag.attrs.items()}
    children = tuple(
        _from_soup(child, budget, depth + 1) for child in tag.find_all(True, recursive=False)
    )
    return _Node(name, attrs, children, "" if children else str(tag.get_text()))


def mathml_element_latex(element: Any, *, display: bool | None = None) -> str:
    """The `$...$` or `$$...$$` LaTeX of a MathML `math` element (lxml), or "" when empty;
    `display` overrides the element's own `display` attribute."""
    return _fenced(_from_lxml(element, _Budget()), display)


def mathml_body_latex(element: Any) -> str:
    """The LaTeX of a MathML `math` element (lxml) without its `$` fences."""
    return limit_latex(_latex(_from_lxml(element, _Budget())))


def mathml_soup_latex(tag: Any, *, display: bool | None = None) -> str:
    """As `mathml_element_latex`, for a BeautifulSoup `math` tag."""
    return _fenced(_from_soup(tag, _Budget()), display)


def limit_latex(latex: str) -> str:
    """`latex` cut at `MAX_LATEX_CHARS`, and with its `$` escaped so it cannot close the fence."""
    latex = " ".join(latex.split())[:MAX_LATEX_CHARS]
    return latex.replace("\\$", "\x00").replace("$", "\\$").replace("\x00", "\\$")


def fence_latex(latex: str, display: bool) -> str:
    """`latex` between `$` (inline) or `$$` (display), or "" when it is empty."""
    latex = limit_latex(latex)
    if not latex:
        return ""
    return f"$${latex}$$" if display else f"${latex}$"


def _fenced(node: _Node, display: bool | None) -> str:
    if display is None:
        display = node.attrs.get("display") == "block" or node.attrs.get("mode") == "display"
    return fence_latex(_latex(node), display)


def _row(nodes: tuple[_Node, ...] | Iterator[_Node]) -> str:
    return join_latex(_latex(node) for node in nodes)


def _arg(node: _Node | None) -> str:
    return _latex(node) if node is not None else ""


def _child(node: _Node, index: int) -> _Node | None:
    return node.children[index] if index < len(node.children) else None


def _latex(node: _Node) -> str:  # noqa: PLR0911, PLR0912 - one branch per MathML element
    name, kids = node.name, node.children
    if name in ("mi", "mn", "mo"):
        return _token(node)
    if name == "mtext":
        text = node.text
        return f"\\text{{{escape_text(text)}}}" if text.strip() else (" " if text else "")
    if name == "ms":
        return f'\\text{{"{escape_text(node.text)}"}}'
    if name == "mspace":
        return "\\ "
    if name == "semantics":
        return _semantics(node)
    if name in ("annotation", "annotation-xml", "none", "mprescripts", "malignmark"):
        return ""
    if name == "mfrac":
        return _fraction(node)
    if name == "msqrt":
        return f"\\sqrt{{{_row(kids)}}}"
    if name == "mroot":
        return f"\\sqrt[{_arg(_child(node, 1))}]{{{_arg(_child(node, 0))}}}"
    if name in ("msub", "msup", "msubsup"):
        base = script_base(_arg(_child(node, 0)))
        first, second = _arg(_child(node, 1)), _arg(_child(node, 2))
        if name == "msub":
            return f"{base}_{group(first)}"
        if name == "msup":
            return f"{base}^{group(first)}"
        return f"{base}_{group(first)}^{group(second)}"
    if name in ("munder", "mover", "munderover"):
        return _under_over(node)
    if name == "mmultiscripts":
        return _multiscripts(node)
    if name == "mfenced":
        return _mfenced(node)
    if name == "mtable":
        return _table(node)
    if name == "mphantom":
        return f"\\phantom{{{_row(kids)}}}"
    if name == "menclose":
        notation = node.attrs.get("notation", "longdiv")
        if "box" in notation or "roundedbox" in notation:
            return f"\\boxed{{{_row(kids)}}}"
        if "radical" in notation:
            return f"\\sqrt{{{_row(kids)}}}"
        return _row(kids)
    if name == "maction":
        return _arg(_child(node, 0))
    if name == "mglyph":
        return escape_text(node.attrs.get("alt", ""))
    if not kids:
        return symbols_to_latex(node.text)
    # math, mrow, mstyle, mpadded, merror, and unknown containers: their children in order.
    return _row(kids)


def _token(node: _Node) -> str:
    text = node.text.strip()
    if not text:
        return ""
    latex = symbols_to_latex(text)
    variant = node.attrs.get("mathvariant", "")
    if (
        node.name == "mi"
        and len(text) > 1
        and latex == text
        and text.isalpha()
        and variant in ("", "normal")
    ):
        return f"\\mathrm{{{text}}}"  # a multi-letter identifier is a name, set upright
    if node.name == "mi" and variant == "bold":
        return f"\\mathbf{{{latex}}}"
    return latex


def _semantics(node: _Node) -> str:
    for child in node.children:
        if child.name == "annotation" and child.attrs.get("encoding", "").lower() in (
            _TEX_ENCODINGS
        ):
            tex = child.text.strip()
            if tex:
                return tex
    return _arg(_child(node, 0))


def _fraction(node: _Node) -> str:
    num, den = _arg(_child(node, 0)), _arg(_child(node, 1))
    if node.attrs.get("bevelled") == "true":
        return f"{group(num)}/{group(den)}"
    if node.attrs.get("linethickness", "").strip() in ("0", "0px", "0pt", "0em"):
        return f"\\genfrac{{}}{{}}{{0pt}}{{}}{{{num}}}{{{den}}}"
    return f"\\frac{{{num}}}{{{den}}}"


def _under_over(node: _Node) -> str:
    base_node = _child(node, 0)
    base = _arg(base_node)
    under_node = _child(node, 1) if node.name != "mover" else None
    over_node = (
        _child(node, 2 if node.name == "munderover" else 1) if node.name != "munder" else None
    )
    under, over = _arg(under_node), _arg(over_node)
    under_char = under_node.text.strip() if under_node is not None else ""
    over_char = over_node.text.strip() if over_node is not None else ""
    if (
        base.strip() in LARGE_OPERATORS
        or base.startswith(("\\overbrace{", "\\underbrace{"))
        or (base_node is not None and base_node.name == "mo")
    ):
        scripts = (f"_{group(under)}" if under else "") + (f"^{group(over)}" if over else "")
        return base + scripts
    if over_char in _OVER_BRACES:
        return f"\\overbrace{{{base}}}"
    if under_char in _UNDER_BRACES:
        return f"\\underbrace{{{base}}}"
    if over_char in _LINES:
        single = group(base) == base.strip() and over_char != "‾"
        return f"\\bar{{{base}}}" if single else f"\\overline{{{base}}}"
    if under_char in _LINES:
        return f"\\underline{{{base}}}"
    accent = accent_command(over_char) if over_char else None
    if accent:
        return f"{accent}{{{base}}}"
    if node.name == "munder":
        return f"\\underset{{{under}}}{{{base}}}"
    if node.name == "mover":
        return f"\\overset{{{over}}}{{{base}}}"
    return f"\\underset{{{under}}}{{\\overset{{{over}}}{{{base}}}}}"


def _multiscripts(node: _Node) -> str:
    kids = list(node.children)
    base = script_base(_arg(kids[0])) if kids else "{}"
    post: list[str] = []
    pre: list[str] = []
    target = post
    pairs = kids[1:]
    index = 0
    while index < len(pairs):
        if pairs[index].name == "mprescripts":
            target = pre
            index += 1
            continue
        sub = _latex(pairs[index])
        sup = _latex(pairs[index + 1]) if index + 1 < len(pairs) else ""
        target.append((f"_{group(sub)}" if sub else "") + (f"^{group(sup)}" if sup else ""))
        index += 2
    prefix = "{}" + "".join(pre) if pre else ""
    return prefix + base + "".join(post)


def _mfenced(node: _Node) -> str:
    opening = node.attrs.get("open", "(")
    closing = node.attrs.get("close", ")")
    separators = "".join(node.attrs.get("separators", ",").split())
    parts: list[str] = []
    for index, child in enumerate(node.children):
        if index and separators:
            parts.append(symbols_to_latex(separators[min(index - 1, len(separators) - 1)]))
        parts.append(_latex(child))
    return f"\\left{delimiter(opening)}{join_latex(parts)}\\right{delimiter(closing)}"


def _table(node: _Node) -> str:
    rows = []
    for row in node.children:
        if row.name not in ("mtr", "mlabeledtr"):
            continue
        cells = row.children[1:] if row.name == "mlabeledtr" else row.children
        rows.append(" & ".join(_latex(cell) for cell in cells))
    return "\\begin{matrix}" + " \\\\ ".join(rows) + "\\end{matrix}"
