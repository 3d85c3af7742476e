"""Formulas as LaTeX: Office Math (OMML, `_omml`) and MathML (`_math`), each construct from
the real formula documents of tests/corpus (LibreOffice's OMML and MathML exporters, a Word
document from markitdown), the extractors' text with the LaTeX in place, and hostile formulas
that stay bounded."""

from __future__ import annotations

import re
import zipfile
from typing import Any

import pytest
from bs4 import BeautifulSoup
from lxml import etree

from content_core.extract import extract_text
from content_core.extract._math import (
    MAX_LATEX_CHARS,
    MAX_MATH_NODES,
    mathml_element_latex,
    mathml_soup_latex,
)
from content_core.extract._omml import OMATH, OMATH_PARA, omml_latex
from content_core.extract.html import html_to_markdown
from tests.fixtures.corpus import CORPUS

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ODT = "application/vnd.oasis.opendocument.text"
_M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
_MATHML = "http://www.w3.org/1998/Math/MathML"
_FORMULAS = "libreoffice-formulas"


def _word_formulas(name: str) -> list[Any]:
    """The top-level formulas (`m:oMathPara`, or `m:oMath` outside one) of a corpus DOCX."""
    xml = zipfile.ZipFile(CORPUS / "docx" / name).read("word/document.xml")
    root = etree.fromstring(xml)
    return [
        e
        for e in root.iter(OMATH_PARA, OMATH)
        if e.tag == OMATH_PARA or e.getparent().tag != OMATH_PARA
    ]


def _odt_formula(number: int) -> Any:
    xml = zipfile.ZipFile(CORPUS / "odt" / f"{_FORMULAS}.odt").read(f"Object {number}/content.xml")
    return etree.fromstring(xml)


# The formula of paragraph "markerN" in the LibreOffice documents, as LaTeX from its OMML
# (LibreOffice's DOCX export) and from its MathML (LibreOffice's ODT objects).
LIBREOFFICE = [
    pytest.param(1, r"\frac{a}{b}", r"\frac{a}{b}", id="fraction"),
    pytest.param(2, "x^2+y_i+z_i^2", "x^2+y_i+z_i^2", id="sub-superscripts"),
    pytest.param(3, r"\sqrt{x}+\sqrt[3]{y}", r"\sqrt{x}+\sqrt[3]{y}", id="radicals-degree"),
    pytest.param(4, r"\sum_{i=1}^n i^2", r"\sum_{i=1}^n i^2", id="nary-sum-limits"),
    pytest.param(5, r"\prod_{k=1}^n k", r"\prod_{k=1}^n k", id="nary-product"),
    pytest.param(6, r"\int_0^\infty e^{-x}dx", r"\int_0^\infty e^{-x}dx", id="nary-integral"),
    pytest.param(7, r"\left(a,b\right)+\left\{x\right\}", r"(a,b)+\{x\}", id="delimiters-brace"),
    pytest.param(
        8, r"\sin\left(x\right)+\log\left(y\right)", r"\sin(x)+\log(y)", id="function-names"
    ),
    pytest.param(
        9,
        r"\frac{\lim_{x\rightarrow0}\sin x}{x}",
        r"\frac{\lim_{x\rightarrow0}\sin x}{x}",
        id="func-limlow",
    ),
    pytest.param(
        10,
        r"\hat{a}+\bar{b}+\dot{c}+\tilde{d}+\vec{v}",
        r"\hat{a}+\bar{b}+\dot{c}+\tilde{d}+\vec{v}",
        id="accents",
    ),
    pytest.param(11, r"\overline{x+y}", r"\overline{x+y}", id="bar-overline"),
    pytest.param(
        12,
        r"\left(\begin{matrix}a & b \\ c & d\end{matrix}\right)",
        r"(\begin{matrix}a & b \\ c & d\end{matrix})",
        id="matrix",
    ),
    pytest.param(
        13,
        r"\begin{aligned}x=1 \\ y=2\end{aligned}",
        r"\begin{matrix}x=1 \\ y=2\end{matrix}",
        id="equation-array-stack",
    ),
    pytest.param(14, r"\alpha+\beta=\Gamma", r"\alpha+\beta=\Gamma", id="greek"),
    pytest.param(
        15,
        r"x\leq y,a\neq b,x\in A,A\subset B,x\rightarrow y,\partial f,\nabla g,a\cdot b\times c",
        r"x\leq y,a\neq b,x\in A,A\subset B,x\rightarrow y,\partial f,\nabla g,a\cdot b\times c",
        id="relations-operators-arrows",
    ),
    pytest.param(16, r"\text{speed}=\frac{d}{t}", r"\text{speed}=\frac{d}{t}", id="plain-text"),
    pytest.param(17, r"\overbrace{a+b}^n", r"\overbrace{a+b}^n", id="overbrace-limupp"),
]


@pytest.mark.parametrize(("number", "from_omml", "from_mathml"), LIBREOFFICE)
def test_libreoffice_formulas(number: int, from_omml: str, from_mathml: str) -> None:
    omml = _word_formulas(f"{_FORMULAS}.docx")[number - 1]
    assert omml_latex(omml) == f"${from_omml}$"
    # LibreOffice marks every formula object display="block"; the ODT's paragraph decides.
    assert mathml_element_latex(_odt_formula(number), display=False) == f"${from_mathml}$"


def test_display_formulas_are_fenced_twice() -> None:
    """`m:oMathPara` and `display="block"` give `$$...$$`."""
    assert omml_latex(_word_formulas(f"{_FORMULAS}.docx")[17]) == "$$E=mc^2$$"
    assert mathml_element_latex(_odt_formula(18)) == "$$E=mc^2$$"


def test_word_equations() -> None:
    """Word's own OMML (markitdown's test file): display paragraphs, `sin` typed as text,
    delimiters, degrees."""
    formulas = [omml_latex(e) for e in _word_formulas("equations.docx")]
    assert formulas == [
        "$m=1$",
        r"$$\sin\theta=\frac{m\lambda}{a}=\frac{(1)\left(550\times{10}^{-6} mm\right)}"
        r"{2.5 mm}=2.2\times{10}^{-4}$$",
        r"$\theta=\sin^{-1}\left(2.2\times{10}^{-4}\right)=2.2\times{10}^{-4}rad$",
        r"$$\frac{a}{\lambda}=\frac{m}{\sin\theta}=\frac{1}{\sin{45.0}^\circ}=1.41.$$",
    ]


def _omml(body: str) -> Any:
    return etree.fromstring(f'<m:oMath xmlns:m="{_M}">{body}</m:oMath>')


def _r(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


# Constructs the exporters above never write, in the shapes the OMML schema gives them.
OMML_SHAPES = [
    pytest.param(
        f'<m:f><m:fPr><m:type m:val="lin"/></m:fPr><m:num>{_r("a")}</m:num>'
        f"<m:den>{_r('b+c')}</m:den></m:f>",
        "a/{b+c}",
        id="linear-fraction",
    ),
    pytest.param(
        f'<m:f><m:fPr><m:type m:val="noBar"/></m:fPr><m:num>{_r("n")}</m:num>'
        f"<m:den>{_r('k')}</m:den></m:f>",
        r"\genfrac{}{}{0pt}{}{n}{k}",
        id="fraction-without-bar",
    ),
    pytest.param(
        f"<m:sPre><m:sub>{_r('1')}</m:sub><m:sup>{_r('14')}</m:sup><m:e>{_r('C')}</m:e></m:sPre>",
        "{}_1^{14}C",
        id="prescripts",
    ),
    pytest.param(
        '<m:nary><m:naryPr><m:chr m:val="∮"/><m:supHide/></m:naryPr>'
        f"<m:sub>{_r('C')}</m:sub><m:sup/><m:e>{_r('F·dr')}</m:e></m:nary>",
        r"\oint_C F\cdot dr",
        id="contour-integral-hidden-upper-limit",
    ),
    pytest.param(
        f"<m:nary><m:sub/><m:sup/><m:e>{_r('f')}</m:e></m:nary>",
        r"\int f",
        id="nary-default-integral",
    ),
    pytest.param(
        '<m:d><m:dPr><m:begChr m:val="⟨"/><m:sepChr m:val="|"/><m:endChr m:val="⟩"/></m:dPr>'
        f"<m:e>{_r('ψ')}</m:e><m:e>{_r('φ')}</m:e></m:d>",
        r"\left\langle\psi|\phi\right\rangle",
        id="bra-ket-separator",
    ),
    pytest.param(
        f'<m:d><m:dPr><m:begChr m:val=""/><m:endChr m:val="|"/></m:dPr><m:e>{_r("x")}</m:e></m:d>',
        r"\left.x\right|",
        id="one-sided-delimiter",
    ),
    pytest.param(
        f"<m:func><m:fName>{_r('cos')}</m:fName><m:e>{_r('θ')}</m:e></m:func>",
        r"\cos\theta",
        id="function",
    ),
    pytest.param(
        f"<m:func><m:fName>{_r('sgn')}</m:fName><m:e>{_r('x')}</m:e></m:func>",
        r"\operatorname{sgn}x",
        id="unknown-function-name",
    ),
    pytest.param(
        f"<m:groupChr><m:e>{_r('1+…+1')}</m:e></m:groupChr>",
        r"\underbrace{1+\ldots+1}",
        id="underbrace-default",
    ),
    pytest.param(
        f"<m:bar><m:e>{_r('AB')}</m:e></m:bar>", r"\underline{AB}", id="bar-default-bottom"
    ),
    pytest.param(
        f"<m:borderBox><m:e>{_r('E=mc²')}</m:e></m:borderBox>", r"\boxed{E=mc²}", id="border-box"
    ),
    pytest.param(
        f"<m:limLow><m:e>{_r('x')}</m:e><m:lim>{_r('→')}</m:lim></m:limLow>",
        r"\underset{\rightarrow}{x}",
        id="limlow-on-a-variable",
    ),
    pytest.param(
        "<m:r><m:rPr><m:nor/></m:rPr><m:t>if x_1 &amp; y</m:t></m:r>",
        r"\text{if x\_1 \& y}",
        id="normal-text-escaped",
    ),
    pytest.param(
        _r("a∉B ⇒ ∀ε∃δ"), r"a\notin B \Rightarrow \forall\epsilon\exists\delta", id="symbol-table"
    ),
]


@pytest.mark.parametrize(("body", "latex"), OMML_SHAPES)
def test_omml_shapes(body: str, latex: str) -> None:
    assert omml_latex(_omml(body)) == f"${latex}$"


def _mathml(body: str, display: str = "") -> Any:
    return etree.fromstring(f'<math xmlns="{_MATHML}"{display}>{body}</math>')


MATHML_SHAPES = [
    pytest.param(
        '<mfenced open="[" close=")"><mi>a</mi><mi>b</mi></mfenced>',
        r"\left[a,b\right)",
        id="mfenced",
    ),
    pytest.param(
        "<mmultiscripts><mi>R</mi><mi>i</mi><none/><mprescripts/><mn>1</mn><mn>2</mn>"
        "</mmultiscripts>",
        "{}_1^2R_i",
        id="mmultiscripts",
    ),
    pytest.param(
        "<munder><mrow><mi>x</mi><mo>+</mo><mi>y</mi></mrow><mo>⏟</mo></munder>",
        r"\underbrace{x+y}",
        id="munder-brace",
    ),
    pytest.param(
        "<munderover><mo>∑</mo><mrow><mi>k</mi><mo>=</mo><mn>0</mn></mrow><mi>∞</mi>"
        "</munderover><msup><mi>x</mi><mi>k</mi></msup>",
        r"\sum_{k=0}^\infty x^k",
        id="munderover-sum",
    ),
    pytest.param(
        '<mfrac bevelled="true"><mn>1</mn><mn>2</mn></mfrac><mspace width="1em"/>'
        '<mfrac linethickness="0"><mi>n</mi><mi>k</mi></mfrac>',
        r"1/2\ \genfrac{}{}{0pt}{}{n}{k}",
        id="bevelled-and-barless-fractions",
    ),
    pytest.param(
        "<mroot><mrow><mi>x</mi><mo>+</mo><mn>1</mn></mrow><mn>3</mn></mroot>",
        r"\sqrt[3]{x+1}",
        id="mroot",
    ),
    pytest.param(
        "<mtable><mtr><mtd><mn>1</mn></mtd><mtd><mn>0</mn></mtd></mtr>"
        "<mtr><mtd><mn>0</mn></mtd><mtd><mn>1</mn></mtd></mtr></mtable>",
        r"\begin{matrix}1 & 0 \\ 0 & 1\end{matrix}",
        id="mtable",
    ),
    pytest.param(
        "<mi>f</mi><mo>&#x2061;</mo><mo>(</mo><mi>x</mi><mo>)</mo><mtext>for all </mtext>"
        '<ms>ok</ms><menclose notation="box"><mi>z</mi></menclose>',
        r'f(x)\text{for all }\text{"ok"}\boxed{z}',
        id="invisible-apply-text-string-enclose",
    ),
    pytest.param(
        "<semantics><mi>x</mi><annotation encoding='application/x-tex'>x_{\\mathrm{max}}"
        "</annotation></semantics>",
        r"x_{\mathrm{max}}",
        id="tex-annotation-wins",
    ),
    pytest.param(
        "<mi>sin</mi><mi>θ</mi><mi>cost</mi><mi mathvariant='bold'>v</mi>",
        r"\sin\theta\mathrm{cost}\mathbf{v}",
        id="identifiers",
    ),
    pytest.param("<mo>$</mo><mn>5</mn>", r"\$5", id="dollar-cannot-close-the-fence"),
]


@pytest.mark.parametrize(("body", "latex"), MATHML_SHAPES)
def test_mathml_shapes(body: str, latex: str) -> None:
    assert mathml_element_latex(_mathml(body)) == f"${latex}$"
    # The HTML parser's tree (BeautifulSoup) gives the same LaTeX.
    soup = BeautifulSoup(f"<math>{body}</math>", "lxml")
    assert mathml_soup_latex(soup.find("math")) == f"${latex}$"


# -- the extractors ----------------------------------------------------------------------------


def _text(folder: str, name: str, media_type: str) -> str:
    return extract_text((CORPUS / folder / name).read_bytes(), media_type, filename=name).text


@pytest.mark.parametrize(
    ("folder", "suffix", "media_type"),
    [
        pytest.param("docx", "docx", DOCX, id="docx-omml"),
        pytest.param("odt", "odt", ODT, id="odt-formula-objects"),
        pytest.param("html", "html", "text/html", id="html-mathml"),
    ],
)
def test_formulas_in_place(folder: str, suffix: str, media_type: str) -> None:
    """Inline formulas sit inside their sentence; the display one is a paragraph of its own
    between the sentences around it."""
    name = f"{_FORMULAS}.{suffix}" if suffix != "html" else "mathml-formulas.html"
    text = _text(folder, name, media_type)
    assert r"Formula frac marker1: $\frac{a}{b}$ end1." in text
    assert r"Formula greek marker14: $\alpha+\beta=\Gamma$ end14." in text
    assert re.search(r"The display equation follows\.\n\n\$\$E=mc\^2\$\$\n\nAfter", text)
    # No formula leaks its raw characters (LibreOffice's StarMath source, Unicode symbols).
    assert "nroot" not in text and "α" not in text and "StarMath" not in text


def test_pptx_equation_boxes_in_slide_order() -> None:
    """PowerPoint-style equation text boxes (`mc:AlternateContent` holding OMML in `a14:m`),
    which python-pptx does not list among the shapes, in their place on the slide."""
    pptx = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    text = _text("pptx", f"{_FORMULAS}.pptx", pptx)
    assert text == (
        "## Slide 1\n\nSlide formulas marker: a fraction and a sum follow.\n\n"
        "$\\frac{a}{b}+\\sqrt{x}$\n\n$\\sum_{i=1}^n \\alpha_i$"
    )


def test_html_tex_annotation_and_escaping() -> None:
    text = _text("html", "mathml-formulas.html", "text/html")
    assert text.endswith(r"$$\int_{-\infty}^{\infty} e^{-x^2}\,dx = \sqrt{\pi}$$")
    assert r"$x^2+y_i+z_i^2$" in text  # markdownify does not escape `_` inside formulas


def test_word_document_text() -> None:
    text = _text("docx", "equations.docx", DOCX)
    assert "For $m=1$," in text
    assert "The angle is $\\theta=\\sin^{-1}" in text


def test_epub_chapters_share_the_html_formulas() -> None:
    """An EPUB chapter is XHTML through the same converter: its MathML becomes LaTeX."""
    xhtml = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        f'<body><p>Energy <math xmlns="{_MATHML}"><mi>E</mi><mo>=</mo><mi>m</mi>'
        "<msup><mi>c</mi><mn>2</mn></msup></math> holds.</p></body></html>"
    )
    assert html_to_markdown(xhtml) == "Energy $E=mc^2$ holds."


# A paragraph of an eLife article (CC BY), as elifetools 0.54.0 (MIT) quotes it in its
# tests/test_utils.py, in a minimal JATS article; and JATS's `alternatives`.
_ELIFE_P = (
    "the following binding affinity regression model: <disp-formula id='equ4'><mml:math "
    "id='m4'><mml:mi>Δ</mml:mi><mml:msub><mml:mtext>G</mml:mtext><mml:mrow><mml:mtext>calc"
    "</mml:mtext></mml:mrow></mml:msub><mml:mo>=</mml:mo><mml:msub><mml:mtext>w</mml:mtext>"
    "<mml:mn>1</mml:mn></mml:msub><mml:msub><mml:mtext>ICs</mml:mtext><mml:mrow><mml:mtext>"
    "charged</mml:mtext><mml:mo>/</mml:mo><mml:mtext>charged</mml:mtext></mml:mrow></mml:msub>"
    "<mml:mo>+</mml:mo><mml:mtext>Q</mml:mtext><mml:mo>.</mml:mo></mml:math></disp-formula>"
    "Each coefficient has been reported as average on the four models trained on the "
    "respective folds."
)
_JATS = (
    f'<?xml version="1.0"?><article xmlns:mml="{_MATHML}" dtd-version="1.1"><front>'
    "<article-meta><title-group><article-title>Binding</article-title></title-group>"
    f"</article-meta></front><body><sec><title>Model</title><p>{_ELIFE_P}</p>"
    "<p>The rate <inline-formula><alternatives><tex-math>\\documentclass{article}"
    "\\begin{document}$k_{\\mathrm{on}}$\\end{document}</tex-math><mml:math><mml:msub>"
    "<mml:mi>k</mml:mi><mml:mi>on</mml:mi></mml:msub></mml:math></alternatives>"
    "</inline-formula> rises.</p><disp-formula><label>(2)</label><mml:math><mml:mi>x</mml:mi>"
    "<mml:mo>=</mml:mo><mml:mn>1</mml:mn></mml:math></disp-formula></sec></body></article>"
)


def test_jats_formulas() -> None:
    text = extract_text(_JATS.encode(), "application/xml", filename="article.xml").text
    assert (
        "regression model: $$\\Delta\\text{G}_{\\text{calc}}=\\text{w}_1"
        "\\text{ICs}_{\\text{charged}/\\text{charged}}+\\text{Q}.$$ Each coefficient"
    ) in text
    assert "The rate $k_{\\mathrm{on}}$ rises." in text  # the TeX alternative, unwrapped
    assert text.endswith("(2) $$x=1$$")


# -- hostile formulas --------------------------------------------------------------------------


def test_deeply_nested_omml_is_bounded() -> None:
    """Ten thousand nested fractions (built in memory; a parser stops far earlier) give a
    bounded string, not a recursion error."""
    math = etree.Element(f"{{{_M}}}oMath")
    parent = math
    for _ in range(10_000):
        fraction = etree.SubElement(parent, f"{{{_M}}}f")
        etree.SubElement(etree.SubElement(fraction, f"{{{_M}}}den"), f"{{{_M}}}r")
        parent = etree.SubElement(fraction, f"{{{_M}}}num")
    etree.SubElement(etree.SubElement(parent, f"{{{_M}}}r"), f"{{{_M}}}t").text = "deep"
    latex = omml_latex(math)
    assert latex.startswith("$\\frac{") and r"\text{deep}" in latex
    assert len(latex) <= MAX_LATEX_CHARS + 2


def test_deeply_nested_mathml_in_html_is_bounded() -> None:
    html = "<p>x <math>" + "<mrow>" * 5000 + "<mi>q</mi>" + "</mrow>" * 5000 + "</math> y</p>"
    text = html_to_markdown(html)
    assert text.startswith("x $") and text.endswith("$ y")


def test_wide_mathml_stops_at_the_node_budget() -> None:
    body = "<mi>a</mi>" * (MAX_MATH_NODES * 2)
    latex = mathml_element_latex(_mathml(body))
    assert 0 < len(latex) <= MAX_LATEX_CHARS + 2
