"""Feedback pages a student can read anywhere: ``nbgrader generate_feedback`` with the course's
config runs this preprocessor and seqlab's additions to nbgrader's ``feedback`` template
(templates/nbgrader_feedback/feedback: an empty MathJax macro, the page's language).

* every formula of a Markdown cell becomes MathML (as the exams do), so the page needs no
  MathJax and no network;
* the hidden tests' feedback a test cell printed is shown wrapped, not in a ``<pre>`` that
  scrolls sideways and cuts off the sentence that matters.

The page's CJK section signs ("§四") need a CJK font on the reader's machine; the set-up
installs one for the browser tests (scripts/system-packages.sh).
"""

from __future__ import annotations

import html

from nbconvert.preprocessors import Preprocessor

from ..paths import TEMPLATES_DIR

# The folder holding seqlab's ``feedback`` template folder (first of nbconvert's extra_template_basedirs).
FEEDBACK_TEMPLATES = TEMPLATES_DIR / "nbgrader_feedback"

WRAPPED = (
    '<div class="seqlab-feedback" style="white-space: pre-wrap; overflow-wrap: anywhere; '
    'font-family: ui-monospace, monospace; font-size: 13px; line-height: 1.4">{}</div>'
)


def wrapped_output(text: str) -> dict:
    """A printed feedback text as an output nbconvert renders as wrapping HTML (the plain text
    kept beside it)."""
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/html": WRAPPED.format(html.escape(text)), "text/plain": text},
    }


class ReadableFeedback(Preprocessor):
    """Markdown math to MathML; printed test feedback to wrapping HTML."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and "$" in cell.source:
            from ..exam.html import markdown_to_html

            cell.source = markdown_to_html(cell.source)
        elif cell.cell_type == "code" and cell.get("outputs"):
            from nbformat import from_dict

            cell.outputs = [
                from_dict(wrapped_output(out.text)) if out.output_type == "stream" and out.name == "stdout" else out
                for out in cell.outputs
            ]
        return cell, resources
