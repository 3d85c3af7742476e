"""The LaTeX spelling of the Unicode characters formulas are written with, and the small
helpers both formula converters (`_math` for MathML, `_omml` for Office Math) share."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "FUNCTIONS",
    "LARGE_OPERATORS",
    "SYMBOLS",
    "accent_command",
    "delimiter",
    "escape_text",
    "group",
    "join_latex",
    "script_base",
    "symbols_to_latex",
]

_GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "varsigma sigma tau upsilon phi chi psi omega"
).split()
SYMBOLS: dict[str, str] = {
    **{chr(0x3B1 + i): "\\" + name for i, name in enumerate(_GREEK) if name != "omicron"},
    "ο": "o",
    **{
        chr(0x391 + i): ("\\" + name.capitalize())
        for i, name in enumerate(_GREEK)
        if name in ("gamma", "delta", "theta", "lambda", "xi", "pi", "sigma", "upsilon", "phi",
                    "psi", "omega")
    },
    "ϑ": "\\vartheta", "ϕ": "\\phi", "ϵ": "\\epsilon", "ϱ": "\\varrho", "ϖ": "\\varpi",
    # operators
    "±": "\\pm", "∓": "\\mp", "×": "\\times", "÷": "\\div", "·": "\\cdot", "⋅": "\\cdot",
    "∘": "\\circ", "∗": "\\ast", "∙": "\\bullet", "•": "\\bullet", "−": "-", "⁄": "/",
    "⊕": "\\oplus", "⊗": "\\otimes", "⊖": "\\ominus", "⊙": "\\odot", "∧": "\\wedge",
    "∨": "\\vee", "∩": "\\cap", "∪": "\\cup", "∖": "\\setminus", "†": "\\dagger",
    "‡": "\\ddagger", "⋆": "\\star", "≀": "\\wr", "⊎": "\\uplus", "⊓": "\\sqcap",
    "⊔": "\\sqcup", "⋄": "\\diamond", "△": "\\triangle", "▽": "\\triangledown",
    # relations
    "≤": "\\leq", "≥": "\\geq", "≠": "\\neq", "≈": "\\approx", "≡": "\\equiv", "∼": "\\sim",
    "≃": "\\simeq", "≅": "\\cong", "∝": "\\propto", "≪": "\\ll", "≫": "\\gg", "∈": "\\in",
    "∉": "\\notin", "∋": "\\ni", "⊂": "\\subset", "⊃": "\\supset", "⊆": "\\subseteq",
    "⊇": "\\supseteq", "⊄": "\\not\\subset", "⊊": "\\subsetneq", "⊥": "\\perp",
    "∥": "\\parallel", "∣": "\\mid", "≺": "\\prec", "≻": "\\succ", "⪯": "\\preceq",
    "⪰": "\\succeq", "≐": "\\doteq", "≜": "\\triangleq", "⊢": "\\vdash", "⊨": "\\models",
    "≦": "\\leqq", "≧": "\\geqq", "⩽": "\\leqslant", "⩾": "\\geqslant", "≔": ":=",
    "≍": "\\asymp", "⊲": "\\lhd", "⊳": "\\rhd",
    # arrows
    "→": "\\rightarrow", "←": "\\leftarrow", "↔": "\\leftrightarrow", "⇒": "\\Rightarrow",
    "⇐": "\\Leftarrow", "⇔": "\\Leftrightarrow", "↦": "\\mapsto", "↑": "\\uparrow",
    "↓": "\\downarrow", "⟶": "\\longrightarrow", "⟵": "\\longleftarrow",
    "⟹": "\\Longrightarrow", "⟸": "\\Longleftarrow", "⟺": "\\Longleftrightarrow",
    "↗": "\\nearrow", "↘": "\\searrow", "↪": "\\hookrightarrow", "⇝": "\\leadsto",
    "⇀": "\\rightharpoonup", "⇌": "\\rightleftharpoons", "↕": "\\updownarrow",
    # large operators
    "∑": "\\sum", "∏": "\\prod", "∐": "\\coprod", "∫": "\\int", "∬": "\\iint",
    "∭": "\\iiint", "∮": "\\oint", "∯": "\\oiint", "⋃": "\\bigcup", "⋂": "\\bigcap",
    "⨁": "\\bigoplus", "⨂": "\\bigotimes", "⋁": "\\bigvee", "⋀": "\\bigwedge",
    # letters and other symbols
    "∞": "\\infty", "∂": "\\partial", "∇": "\\nabla", "ℏ": "\\hbar", "ℓ": "\\ell",
    "ℝ": "\\mathbb{R}", "ℕ": "\\mathbb{N}", "ℤ": "\\mathbb{Z}", "ℚ": "\\mathbb{Q}",
    "ℂ": "\\mathbb{C}", "ℙ": "\\mathbb{P}", "ℵ": "\\aleph", "℘": "\\wp", "ℜ": "\\Re",
    "ℑ": "\\Im", "∅": "\\emptyset", "∀": "\\forall", "∃": "\\exists", "∄": "\\nexists",
    "¬": "\\neg", "′": "'", "″": "''", "‴": "'''", "…": "\\ldots", "⋯": "\\cdots",
    "⋮": "\\vdots", "⋱": "\\ddots", "°": "^{\\circ}", "∠": "\\angle", "∴": "\\therefore",
    "∵": "\\because", "√": "\\surd", "⊤": "\\top", "□": "\\square", "♯": "\\sharp",
    "♭": "\\flat", "ð": "\\eth", "⟨": "\\langle", "⟩": "\\rangle", "〈": "\\langle",
    "〉": "\\rangle", "⌊": "\\lfloor", "⌋": "\\rfloor", "⌈": "\\lceil", "⌉": "\\rceil",
    "‖": "\\|", "∤": "\\nmid", "∦": "\\nparallel",
    # LaTeX's own special characters, as they are meant in running formula text
    "{": "\\{", "}": "\\}", "#": "\\#", "$": "\\$", "%": "\\%", "&": "\\&", "_": "\\_",
    "\\": "\\backslash", "~": "\\sim",
    # invisible operators (function application, times, separator, plus) and spaces
    "\u2061": "", "\u2062": "", "\u2063": "", "\u2064": "", "\u200b": "",
    "\u00a0": " ", "\u2009": " ", "\u200a": " ", "\u2005": " ", "\u2003": " ", "\u2002": " ",
}  # fmt: skip
LARGE_OPERATORS = frozenset(
    {"\\sum", "\\prod", "\\coprod", "\\int", "\\iint", "\\iiint", "\\oint", "\\oiint",
     "\\bigcup", "\\bigcap", "\\bigoplus", "\\bigotimes", "\\bigvee", "\\bigwedge",
     "\\lim", "\\max", "\\min", "\\sup", "\\inf", "\\limsup", "\\liminf", "\\det", "\\Pr",
     "\\gcd", "\\overbrace", "\\underbrace"}
)  # fmt: skip
FUNCTIONS = frozenset(
    "sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth log ln lg exp lim max "
    "min sup inf det dim gcd deg arg ker hom Pr limsup liminf".split()
)
_ACCENTS = {
    "\u0302": "\\hat", "^": "\\hat", "ˆ": "\\hat", "\u0304": "\\bar", "\u0305": "\\bar",
    "¯": "\\bar", "‾": "\\bar", "\u0307": "\\dot", "˙": "\\dot", "\u0308": "\\ddot",
    "¨": "\\ddot", "\u20db": "\\dddot", "\u0303": "\\tilde", "~": "\\tilde", "˜": "\\tilde",
    "\u20d7": "\\vec", "\u20d1": "\\vec", "→": "\\vec", "\u0301": "\\acute", "´": "\\acute",
    "\u0300": "\\grave", "`": "\\grave", "\u030c": "\\check", "ˇ": "\\check",
    "\u0306": "\\breve", "˘": "\\breve", "\u20d6": "\\overleftarrow", "←": "\\overleftarrow",
    "\u20e1": "\\overleftrightarrow", "↔": "\\overleftrightarrow",
}  # fmt: skip
_DELIMITERS = {
    "{": "\\{", "}": "\\}", "⟨": "\\langle", "⟩": "\\rangle", "〈": "\\langle",
    "〉": "\\rangle", "⌊": "\\lfloor", "⌋": "\\rfloor", "⌈": "\\lceil", "⌉": "\\rceil",
    "‖": "\\|", "∥": "\\|", "": ".",
}  # fmt: skip
_TEXT_ESCAPES = {c: "\\" + c for c in "{}#$%&_"} | {
    "\\": "\\textbackslash{}",
    "^": "\\^{}",
    "~": "\\~{}",
}
_ATOM = re.compile(r"\\[A-Za-z]+|\\.|[^\\{}\s]|\{[^{}]*\}")
_COMMAND_WITH_ARGUMENT = re.compile(r"\\[A-Za-z]+\{[^{}]*\}")
_WORDS = re.compile(r"[A-Za-z]+|[^A-Za-z]")
_SCRIPT_END = re.compile(r"[_^][A-Za-z0-9]$")
_COMMAND_END = re.compile(r"\\[A-Za-z]+$")


def symbols_to_latex(text: str) -> str:
    """`text` (formula characters) with each symbol spelled as LaTeX; a run that is a known
    function name ("sin", "lim") becomes its command."""
    stripped = text.strip()
    if stripped in FUNCTIONS:
        return "\\" + stripped
    if all(c.isascii() and c not in "{}#$%&_\\~" for c in text):
        return text
    pieces: list[str] = []
    for word in _WORDS.findall(text):
        if word in FUNCTIONS:
            pieces.append("\\" + word)  # "sinθ" typed as one run
        elif word.isascii() and word.isalpha():
            pieces.append(word)
        else:
            pieces.extend(SYMBOLS.get(c, c) for c in word)
    return join_latex(pieces)


def escape_text(text: str) -> str:
    """`text` as the argument of `\\text{}`."""
    return "".join(_TEXT_ESCAPES.get(c, c) for c in text)


def join_latex(parts: Iterable[str]) -> str:
    """Concatenate LaTeX pieces, with a space where a command word would run into a letter."""
    out: list[str] = []
    last = ""
    for part in parts:
        if not part:
            continue
        if last and (
            (_COMMAND_END.search(last) and part[0].isalpha())
            or (_SCRIPT_END.search(last) and part[0].isalnum())
        ):
            out.append(" ")  # `\\sin x`, not `\\sinx`; `\\sum_{i}^n i`, not `^ni`
        out.append(part)
        last = part
    return "".join(out)


def group(latex: str) -> str:
    """`latex` as one argument: braced unless it is already a single atom."""
    latex = latex.strip()
    return latex if _ATOM.fullmatch(latex) else "{" + latex + "}"


def script_base(latex: str) -> str:
    """`latex` as the base of a sub/superscript (a trailing command or `\\right)` counts as one
    atom; `{}` holds the place of an empty base)."""
    latex = latex.strip()
    if not latex:
        return "{}"
    if (
        _ATOM.fullmatch(latex)
        or _COMMAND_WITH_ARGUMENT.fullmatch(latex)
        or (
            latex.startswith("\\left")
            and latex.count("\\left") == 1
            and re.search(r"\\right\\?.$", latex)
        )
    ):
        return latex
    return "{" + latex + "}"


def accent_command(char: str) -> str | None:
    """The LaTeX accent command for an accent character, or None for an unknown one."""
    return _ACCENTS.get(char)


def delimiter(char: str) -> str:
    """A fence character as the argument of `\\left` / `\\right`."""
    return _DELIMITERS.get(char, char)
