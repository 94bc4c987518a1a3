"""seqlab/escape.py: each format's escape function, on generated strings (Hypothesis), and the
files a class run writes, with hostile names, ids and messages put through every one of them.

What is checked is the rendered output, not the escaping's text: a Markdown string is rendered
(mistune, with GitHub's extensions and more) and must show the student's text as text, with no
tag, link or image; a CSV cell is read back with the csv module and must start with no formula
character and show the same text."""

from __future__ import annotations

import csv
import html as html_module
import io
import re

import mistune
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab import escape

# Text a student would try: every markup character of every format, line breaks of every kind,
# controls, bidirectional overrides, surrogates, plus any other code point.
HOSTILE_ALPHABET = list("=+-@\t\r\n \\`*_[](){}<>!#|~$^:&;'\".,/%?") + [
    "\x00",
    "\x1b",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\ufffe",
    "\ud800",
    "\uff1d",
    "a",
    "0",
    "1",
    "w",
    "h",
    "t",
    "p",
    "s",
    "x",
]
SNIPPETS = [
    "**144 / 144 (100%)**",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "[link](javascript:alert(1))",
    "![img](http://evil.example/x.png)",
    "http://evil.example",
    "www.evil.example",
    "a@evil.example",
    "# Heading",
    "| a | b |",
    "|---|",
    '=HYPERLINK("http://evil.example","click")',
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "+1+1",
    "-2+3",
    "~~gone~~",
    "$x^2$",
    "[^1]",
    "&lt;",
    "&#60;",
    "```",
    "    indented",
    "> quote",
    "1. item",
    "- item",
    "\x1b[31mred\x1b[0m",
    "[bold]x[/bold]",
    "[/]",
    "[link=http://evil.example]x[/link]",
]
hostile_text = st.one_of(
    st.text(alphabet=st.sampled_from(HOSTILE_ALPHABET), max_size=40),
    st.lists(st.one_of(st.sampled_from(SNIPPETS), st.text(max_size=8)), max_size=6).map("".join),
    st.text(max_size=30),
)
# The normal suite: a few dozen strings per property (about a second in all); the bank below
# runs every property on thousands.
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# mistune with the constructs GitHub's renderer has (tables, strikethrough, bare URLs, footnotes,
# task lists, math), where summary.md and the class report are read: the escaped text must stay
# text under all of them. (mistune's own extras, ==mark== or ^sup^, are not GitHub's and are not
# escaped.)
_MARKDOWN = mistune.create_markdown(
    escape=False,
    plugins=["strikethrough", "table", "url", "footnotes", "task_lists", "math"],
)


def _visible_markdown(text: str) -> str:
    """What a reader sees of ``text`` once escaped: one line, whitespace collapsed."""
    return " ".join(escape.one_line(text).split())


def _paragraph(rendered: str) -> str:
    rendered = rendered.strip()
    if not rendered:
        return ""
    assert rendered.startswith("<p>") and rendered.endswith("</p>"), rendered
    return rendered[3:-4]


# --- Markdown ------------------------------------------------------------------------------------


@FAST
@given(hostile_text)
def test_escaped_markdown_renders_as_its_text_with_no_markup(text):
    inner = _paragraph(_MARKDOWN(escape.markdown_inline(text)))
    assert "<" not in inner, inner  # no tag of any kind: no emphasis, link, image, heading, HTML
    assert html_module.unescape(inner) == _visible_markdown(text)


@FAST
@given(hostile_text, hostile_text)
def test_escaped_markdown_keeps_a_table_row_its_cells(a, b):
    """In a table cell (summary.md's rows): still three cells, each showing its own text."""
    rendered = _MARKDOWN(
        f"| x | y | z |\n|---|---|---|\n| {escape.markdown_inline(a)} | {escape.markdown_inline(b)} | end |\n"
    )
    cells = re.findall(r"<td>(.*?)</td>", rendered, flags=re.S)
    assert len(cells) == 3, rendered
    assert [html_module.unescape(c) for c in cells[:2]] == [_visible_markdown(a), _visible_markdown(b)]
    assert "<" not in "".join(cells[:2])


@FAST
@given(hostile_text)
def test_escaped_markdown_at_the_start_of_a_line_is_no_block(text):
    """Escaped text is safe even where a line starts: no heading, list, quote or code block."""
    rendered = _MARKDOWN(escape.markdown_inline(text) + "\n").strip()
    assert not re.search(r"<(h\d|ul|ol|li|blockquote|pre|code|table|hr|dl)\b", rendered), rendered


@FAST
@given(hostile_text)
def test_a_markdown_link_target_stays_one_target(path):
    target = escape.markdown_url(path)
    rendered = _MARKDOWN(f"[report]({target})")
    assert rendered.count("<a ") == 1 and ">report</a>" in rendered
    assert re.fullmatch(r"[A-Za-z0-9/._~%-]*", target)


# --- CSV -----------------------------------------------------------------------------------------


def _read_back(cells: list[str]) -> list[str]:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return next(csv.reader(io.StringIO(buffer.getvalue())))


@FAST
@given(hostile_text)
def test_a_csv_cell_never_starts_a_formula_and_reads_back_as_its_text(text):
    cell = escape.csv_cell(text)
    (back,) = _read_back([cell])
    assert back == cell
    lead = back.lstrip(" ")[:1]
    if lead in escape.FORMULA_LEADS:
        assert re.fullmatch(r" *[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)? *", back), back  # a plain number
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", back)
    # what the spreadsheet shows is the student's text on one line, the quote mark aside
    assert escape.csv_visible(back) == escape.one_line(text)


@pytest.mark.parametrize("number", ["-1", "+3.5", "-0.25", "1e-3", "-2E+4", "0"])
def test_a_number_cell_stays_a_number(number):
    assert escape.csv_cell(number) == number


@pytest.mark.parametrize(
    "formula",
    ["=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", " =1", "\uff1d1", '=HYPERLINK("http://x","y")'],
)
def test_each_formula_lead_is_neutralised(formula):
    cell = escape.csv_cell(formula)
    assert cell.startswith("'") and "\t" not in cell and "\r" not in cell


# --- HTML, terminal, plain -----------------------------------------------------------------------


@FAST
@given(hostile_text)
def test_escaped_html_is_text(text):
    out = str(escape.html(text))
    assert "<" not in out and ">" not in out and '"' not in out
    assert html_module.unescape(out) == escape.plain(text)


@FAST
@given(hostile_text)
def test_escaped_terminal_text_prints_as_itself_through_rich(text):
    from rich.console import Console
    from rich.text import Text

    safe = escape.terminal(text)
    # no MarkupError, no style taken, and the markup the caller puts after it still works (rich
    # doubles a trailing backslash so that it cannot escape that markup's "[")
    assert Text.from_markup(safe + "[bold]![/bold]", emoji=False).plain == escape.one_line(text) + "!"
    assert Text.from_markup("[bold]>[/bold]" + safe, emoji=False).plain == ">" + escape.one_line(text).rstrip("\\") + (
        "\\" * 2 * (len(escape.one_line(text)) - len(escape.one_line(text).rstrip("\\")))
    )
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=False, width=10_000).print(safe, markup=True, emoji=False)
    assert "\x1b" not in buffer.getvalue()


@FAST
@given(hostile_text)
def test_plain_text_has_no_control_character(text):
    out = escape.plain(text)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]", out)
    assert escape.plain(out) == out


_PROPERTIES = [
    test_escaped_markdown_renders_as_its_text_with_no_markup,
    test_escaped_markdown_keeps_a_table_row_its_cells,
    test_escaped_markdown_at_the_start_of_a_line_is_no_block,
    test_a_markdown_link_target_stays_one_target,
    test_a_csv_cell_never_starts_a_formula_and_reads_back_as_its_text,
    test_escaped_html_is_text,
    test_escaped_terminal_text_prints_as_itself_through_rich,
    test_plain_text_has_no_control_character,
]


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.parametrize("prop", _PROPERTIES, ids=lambda p: p.__name__)
def test_escape_properties_on_thousands_of_strings(prop):
    inner = prop.hypothesis.inner_test
    settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))(
        given(*([hostile_text] * (2 if prop is test_escaped_markdown_keeps_a_table_row_its_cells else 1)))(inner)
    )()
