"""A feedback page rendered as ``nbgrader generate_feedback`` renders it with the course's config
(seqlab's template and preprocessor over nbgrader's feedback template), without a course."""

from __future__ import annotations

import os

import nbformat

WIDE = "adam: 0 of 5 points from the hidden tests. " + "The sentence that matters comes at the end. " * 8


def feedback_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "## §四 The recurrence\nThe state is $h_t = \\tanh(a_t)$, and\n$$a_t = x_t W^T + b$$"
        ),
        nbformat.v4.new_code_cell("grade()", outputs=[nbformat.v4.new_output("stream", name="stdout", text=WIDE)]),
    ]
    return nb


def render_feedback_page(nb=None) -> str:
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from seqlab.nbgrader.readable import FEEDBACK_TEMPLATES, ReadableFeedback

    templates = os.path.join(os.path.dirname(__import__("nbgrader").__file__), "server_extensions", "formgrader")
    c = Config()
    c.HTMLExporter.template_name = "feedback"  # nbgrader sets it so
    c.HTMLExporter.template_file = "seqlab_index.html.j2"
    c.HTMLExporter.extra_template_basedirs = [str(FEEDBACK_TEMPLATES), os.path.join(templates, "templates")]
    c.HTMLExporter.extra_template_paths = [
        os.path.join(templates, "static", "node_modules", "bootstrap", "dist", "css")
    ]
    exporter = HTMLExporter(config=c)
    exporter.register_preprocessor(ReadableFeedback(), enabled=True)
    nbgrader = {"notebook": "rnn", "score": 1, "max_score": 5, "late_penalty": 0}
    body, _ = exporter.from_notebook_node(nb or feedback_notebook(), resources={"nbgrader": nbgrader})
    return body
