"""Paper exams: one PDF per student, one combined PDF for printing, and keys (WeasyPrint).

The question texts are the same Markdown as the HTML exam; math is typeset here, before
WeasyPrint sees the page, because WeasyPrint lays out HTML and CSS but not MathML or TeX: each
``$...$`` / ``$$...$$`` becomes an SVG (instead of the screen exam's MathML) drawn by ziamath (TeX -> MathML via latex2mathml -> glyph
outlines of the bundled STIX Two Math font), embedded as an image. Nothing is fetched from the
network and no TeX installation is needed.

Every page carries the exam title, the student id (top and bottom) and "Page n of N"; each
question is followed by a box sized for its kind of answer. The combined file holds the
students' papers one after another, each starting on a new page with its own page numbers.
Needs the system libraries WeasyPrint uses (Debian: libpango-1.0-0 libpangoft2-1.0-0 and fonts,
e.g. fonts-dejavu-core).
"""

from __future__ import annotations

import base64
import html as htmllib
import re
import shutil
from functools import lru_cache
from pathlib import Path

from ..errors import SeqlabError
from . import timing
from .html import markdown_to_html
from .markdown import environment, paper_context
from .model import NUMERIC, SYMBOLIC
from .timing import check_fits
from .variants import ExamInstance

# Math is drawn at the body's size (11pt ~ 14.7 px at 96 dpi): CSS px in WeasyPrint are 1/96 in.
MATH_PX = 14.5


class PdfError(SeqlabError, RuntimeError):
    """The PDF engine is missing or a formula cannot be typeset; the message says which."""


@lru_cache(maxsize=4096)
def math_svg(tex: str, display: bool = False) -> str:
    """An ``<img>`` holding the typeset formula, aligned on the text's baseline."""
    import ziamath

    try:
        svg = ziamath.Latex(tex, size=MATH_PX * (1.1 if display else 1.0)).svg()
    except Exception as exc:
        raise PdfError(f"cannot typeset the formula {tex[:80]!r}: {exc}") from None
    view = re.search(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"', svg)
    style = ""
    if view:
        top, height = float(view.group(2)), float(view.group(4))
        # the viewBox starts at minus the ascent: what lies below y=0 hangs under the baseline
        style = f' style="vertical-align: {-(height + top):.2f}px"'
    data = base64.b64encode(svg.encode()).decode()
    alt = htmllib.escape(tex, quote=True)
    return f'<img class="math" alt="{alt}" src="data:image/svg+xml;base64,{data}"{style}>'


def _math_image(tex: str, display: bool = False) -> str:
    image = math_svg(tex, display)
    return f'<div class="math">{image}</div>' if display else image


def typeset(markdown: str) -> str:
    """Markdown with TeX -> HTML with every formula as an SVG image (render.markdown_to_html's
    math hook: the same Markdown and math parsing as the screen exam, another output)."""
    return markdown_to_html(markdown, math=_math_image)


def typeset_inline(markdown: str) -> str:
    """One line of Markdown (no paragraph around it), e.g. the "how to write the answer" line."""
    html = typeset(markdown).strip()
    return html[3:-4] if html.startswith("<p>") and html.endswith("</p>") else html


def answer_space(v) -> str:
    """The answer box: a line for a letter or a number, two for a list or a formula."""
    if v.question.kind == SYMBOLIC or (v.question.kind == NUMERIC and isinstance(v.answer, list) and len(v.answer) > 1):
        return "1.6cm"
    return "1.0cm"


# Working space, sized by the question's measured work (``timing.work``): a line of 0.8 cm for
# each intermediate value the derivation writes down (the answer has its box) and one for every
# four calculator operations (a line of handwriting holds about four short steps). At least 2 lines, so a one-step count has room, at
# most 14: a 12-minute derivation on one page with its text, not a page of its own.
WORKING_LINE_CM, WORKING_LINES = 0.8, (2, 14)


def working_space(v) -> str:
    """Room for the working above the answer box ("" for a choice or true/false question)."""
    if v.question.kind not in (NUMERIC, SYMBOLIC):
        return ""
    work = timing.work(v)
    written = work.values - timing.answer_values(v)
    lines = min(max(written + -(-work.operations // 4), WORKING_LINES[0]), WORKING_LINES[1])
    return f"{lines * WORKING_LINE_CM:.1f}cm"


def paper_html(inst: ExamInstance, *, key: bool = False) -> str:
    if not key:
        check_fits(inst)  # as every medium: no paper longer than its duration
    context = paper_context(inst, "paper", key=key)
    context.update(
        key=key,
        rules_html=typeset(context["rules"]),
        html={v.id: typeset(v.text) for v in inst.variants},
        solution_html={v.id: typeset(v.solution) if v.solution else "" for v in inst.variants} if key else {},
        space={v.id: answer_space(v) for v in inst.variants},
        working={v.id: working_space(v) for v in inst.variants},
        format_html={
            item["v"].id: typeset_inline(item["format"]) for part in context["parts"] for item in part["variants"]
        },
    )
    return environment().get_template("paper.html.j2").render(context)


def _document(inst: ExamInstance, key: bool):
    try:
        import weasyprint
    except (ImportError, OSError) as exc:  # OSError: the Pango libraries are missing
        raise PdfError(
            f"PDF output needs WeasyPrint and its system libraries (Debian: libpango-1.0-0 libpangoft2-1.0-0): {exc}"
        ) from None
    return weasyprint.HTML(string=paper_html(inst, key=key), base_url=str(Path.cwd())).render()


def write_pdfs(instances: list[ExamInstance], out: Path, *, key: bool = False) -> list[Path]:
    """``exam-<id>.pdf`` (or ``key-<id>.pdf``) per student, and ``exams-all.pdf`` (``keys-all.pdf``)
    with every paper, each starting on a new page."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "key" if key else "exam"
    written, documents = [], []
    for inst in instances:
        document = _document(inst, key)
        path = out / f"{stem}-{inst.student}.pdf"
        document.write_pdf(path)
        written.append(path)
        documents.append(document)
    if documents:
        path = out / f"{stem}s-all.pdf"
        if len(documents) == 1:  # the same paper: copied, not drawn again (drawing is most of the cost)
            shutil.copyfile(written[0], path)
        else:
            documents[0].copy([page for d in documents for page in d.pages]).write_pdf(path)
        written.append(path)
    return written
