"""A paper as an HTML page (the exam and the key): Markdown with every formula as MathML.

The page needs no script and no network (the exam room may have none); the LMS export and the
PDF reuse ``markdown_to_html`` with their own math hook.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from .markdown import environment, exam_markdown, key_markdown
from .variants import ExamInstance

_INLINE_MATH = re.compile(r'<span class="math">\\\((.*?)\\\)</span>', re.S)
_BLOCK_MATH = re.compile(r'<div class="math">\$\$(.*?)\$\$</div>', re.S)


# Cached like pdf.math_svg: the value depends on the two arguments alone, and a class's papers,
# keys and LMS pools repeat the same few hundred formulas thousands of times.
@lru_cache(maxsize=4096)
def tex_to_mathml(tex: str, display: bool = False) -> str:
    """LaTeX -> MathML at render time: every current browser shows it with no script and no network
    (the exam room may have none). The TeX stays in an annotation, for screen readers and copying."""
    from latex2mathml.converter import convert

    mathml = convert(_aligned_as_array(tex.strip()), display="block" if display else "inline")
    annotation = f'<annotation encoding="application/x-tex">{html.escape(tex.strip())}</annotation>'
    # keep the MathML well-formed: wrap the converted content in a semantics element
    head, _, rest = mathml.partition(">")
    body = rest[: rest.rfind("</math>")]
    if display:  # a wide formula scrolls on a phone: focusable, so a keyboard can scroll it too
        head = head.replace("<math", '<math tabindex="0"', 1)
    return f"{head}><semantics><mrow>{body}</mrow>{annotation}</semantics></math>"


def _aligned_as_array(tex: str) -> str:
    """``aligned`` (right, left, right, left ... columns) as the ``array`` the converter knows."""

    def column_spec(m: re.Match) -> str:
        body = m.group(1)
        columns = max(row.count("&") for row in body.split(r"\\")) + 1
        return r"\begin{array}{" + "rl" * (columns // 2) + "r" * (columns % 2) + "}" + body + r"\end{array}"

    return re.sub(r"\\begin\{aligned\}(.*?)\\end\{aligned\}", column_spec, tex, flags=re.S)


def markdown_to_html(text: str, math=tex_to_mathml) -> str:
    """Markdown -> HTML with every formula typeset by ``math(tex, display=...)``: MathML for
    screens (HTML exam, key, LMS quiz); the PDF passes SVG images, since WeasyPrint lays out no
    MathML. Either way no TeX is left in the page."""
    import mistune

    rendered = mistune.create_markdown(escape=True, plugins=["table", "math"])(text)
    assert isinstance(rendered, str)  # the HTML renderer's output (an AST only without one)
    rendered = _BLOCK_MATH.sub(lambda m: math(html.unescape(m.group(1)).strip(), display=True), rendered)
    return _INLINE_MATH.sub(lambda m: math(html.unescape(m.group(1))), rendered)


def _page(inst: ExamInstance, markdown: str) -> str:
    body = markdown_to_html(markdown)
    return (
        environment().get_template("exam.html.j2").render(exam=inst.exam, student=inst.student, body=body).rstrip()
        + "\n"
    )


def exam_html(inst: ExamInstance) -> str:
    return _page(inst, exam_markdown(inst))


def key_html(inst: ExamInstance) -> str:
    """The key as a page: the same offline math (MathML) and no-network policy as the exam."""
    return _page(inst, key_markdown(inst))
