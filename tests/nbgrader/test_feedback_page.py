"""The nbgrader feedback page a student reads: no script to fetch (every formula is MathML), the
hidden tests' feedback wrapped, not in a sideways-scrolling <pre>."""

from __future__ import annotations

import re

import pytest

from tests.nbgrader._feedback_page import WIDE, render_feedback_page


@pytest.mark.bank  # 3.5 s: nbconvert and the exam's Markdown renderer load
def test_feedback_page_needs_no_network_and_wraps_its_feedback():
    page = render_feedback_page()
    assert not re.search(r"<script[^>]*\bsrc=", page), "a script would be fetched"
    assert "<math" in page and "$h_t" not in page and "$$" not in page
    assert 'class="seqlab-feedback" style="white-space: pre-wrap' in page
    wrapped = page[page.index('class="seqlab-feedback"') :]
    assert WIDE.split(". ")[0] in wrapped and "<pre>" not in wrapped[: wrapped.index("</div>")]
    assert "§四" in page and '<html lang="en">' in page


def test_the_course_config_uses_them():
    from seqlab.paths import TEMPLATES_DIR

    config = (TEMPLATES_DIR / "notebooks" / "nbgrader_config.py.j2").read_text()
    assert "ReadableFeedback]" in config and 'template_file = "seqlab_index.html.j2"' in config
