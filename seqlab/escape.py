"""One escape function per output format, for every string a student controls.

A student controls more than their code: their submission's name, their roster display name,
their ids, the messages their code raises or prints, the names of the files they hand in. Each
of those reaches a file an instructor or an LMS reads (a CSV, a Markdown summary, an HTML page,
the terminal), and in each format some characters are commands, not text. Every writer passes
such a string through the function for its format, here, at the point it is written:

* :func:`csv_cell`   -- a cell of a CSV a spreadsheet or an LMS opens (``gradebook.csv``,
  ``lms/canvas.csv``, ``lms/moodle.csv``): no formula, no control character.
* :func:`markdown_inline` -- text inside a line of Markdown (``summary.md``, the class report,
  Gradescope's output): never emphasis, a link, an image, a heading, a table cell, math or HTML.
* :func:`markdown_url` -- a relative link target in Markdown (a report's path).
* :func:`html`       -- text in HTML; the report templates get the same through jinja2's
  autoescape (``seqlab.templating.html_autoescape``), this is for HTML built in Python.
* :func:`terminal`   -- text printed through rich (the progress bar, the tables): no console
  markup, no ANSI escape, no control character.
* :func:`plain`      -- text in a plain text file or a plain ``print``: no ANSI escape and no
  control character (a carriage return or a bidirectional override rewrites what a reader sees).

Each function is total (any ``object`` in, ``str`` out; ``None`` is the empty string); the tests in
``tests/reports/test_escape.py`` check each one's safety on generated strings.
"""

from __future__ import annotations

import re
from typing import Any

# --- cleaning shared by every format -------------------------------------------------------------
# ANSI escape sequences (CSI, OSC, two-character escapes): a terminal or a pager acts on them.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# Line breaks of every kind (CSV and Markdown keep one line: a break starts a row, a heading,
# a list item); tab counts here because it is the formula lead-in spreadsheets also honour.
_BREAKS = re.compile("[\t\n\v\f\r\x1c-\x1e\x85\u2028\u2029]+")
# C0 controls, DEL, C1 controls, the bidirectional overrides and isolates (they reorder what a
# reader sees: "Trojan Source"), the zero-width joiners and marks that hide text, the byte-order
# mark mid-text, and the two non-characters XML 1.0 does not allow.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufffe\uffff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: Any) -> str:
    if value is None:
        return ""
    return _SURROGATE.sub("\ufffd", value if isinstance(value, str) else str(value))


def plain(value: Any) -> str:
    """``value`` as plain text: valid Unicode, no ANSI escape, no control character (tabs and
    newlines are kept; a carriage return becomes a newline)."""
    text = _ANSI.sub("", _text(value).replace("\r\n", "\n").replace("\r", "\n"))
    return _CONTROL.sub("", text)  # _CONTROL leaves tab and newline alone


def one_line(value: Any) -> str:
    """``value`` as one line of plain text: every run of line breaks or tabs is one space."""
    text = _ANSI.sub("", _text(value))
    return _CONTROL.sub("", _BREAKS.sub(" ", text))


# --- CSV -----------------------------------------------------------------------------------------
# A spreadsheet reads a cell starting with one of these as a formula (=HYPERLINK(...) sends the
# grades to a stranger's server when clicked; =cmd|... ran programs in old Excel); tab and
# carriage return are on the list too, but one_line has already made them spaces. The full-width
# forms are there because some spreadsheets fold them to ASCII before parsing.
FORMULA_LEADS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
# A plain number may start with + or -: it is a value to every spreadsheet, never a formula, and
# a grade or an id like -1 or +3.5 must read back unchanged.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _formula_like(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula: its first character past blanks
    and quote marks (a ``'`` of the student's own must not pass for ours) is a formula lead,
    and it is not a plain number."""
    rest = text.lstrip("' ")
    return rest[:1] in FORMULA_LEADS and not _NUMBER.fullmatch(rest.rstrip(" "))


def csv_cell(value: Any) -> str:
    """``value`` as a CSV cell a spreadsheet shows as the text it is: on one line, without
    control characters, and, when it would start a formula (its first non-blank character is one
    of ``= + - @``), behind a single quote, the spreadsheet's own mark for "this is text". The
    csv module then quotes what needs quoting; a reader sees the text, the quote aside."""
    text = one_line(value)
    return "'" + text if _formula_like(text) else text


def csv_visible(cell: str) -> str:
    """What a spreadsheet shows for a cell :func:`csv_cell` wrote (its leading quote hidden):
    the inverse of :func:`csv_cell` on one line of text."""
    return cell[1:] if cell.startswith("'") and _formula_like(cell[1:]) else cell


# --- Markdown ------------------------------------------------------------------------------------
# The characters that open an inline construct anywhere in a line: emphasis * _, code `, links
# and images [ ] (an image's ! needs its [), tables |, strikethrough ~, headings #, math $ (GitHub
# renders $\\textbf{144}$), a backslash (it would escape what follows it), and @ (an address is
# autolinked, a name a mention). CommonMark makes any of them literal behind a backslash. Other
# punctuation stays as it is, so a message reads the same in the Markdown source ("hand-in",
# "rnn.py: line 3") and in a test's assertion.
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]|~#$@])")
# Bare URLs GitHub autolinks: "http://", "https://", "ftp://" (their "//" escaped) and "www."
# (its dot escaped).
_AUTOLINK = re.compile(r"(?<=:)//|(?<![\w.-])(?i:www)\.")
# What opens a block at the start of a line: a list item (- + or 1. 1)), a setext underline or a
# thematic break (= -). The text may start a line (Gradescope's output puts one message a line),
# so these are escaped there; mid-line they are plain text.
_MARKDOWN_LINE_START = re.compile(r"^(?:([-+=])|(\d+)([.)]))")


def markdown_inline(value: Any) -> str:
    """``value`` as inert inline Markdown: one line (whitespace runs collapsed: a newline could
    start a heading, a table row or a quote; leading blanks an indented code block), HTML
    characters as entities, the characters of inline constructs, bare URLs and a block marker
    at the start backslash-escaped. Safe anywhere in a line, at its start or in a table cell;
    never inside a code span (escapes do not work there), so a student's text is never put
    between backticks."""
    text = _MARKDOWN_INLINE.sub(r"\\\1", " ".join(one_line(value).split()))
    text = _AUTOLINK.sub(lambda m: m.group(0).replace("/", "\\/").replace(".", "\\."), text)
    text = _MARKDOWN_LINE_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_url(path: Any) -> str:
    """A relative path as a Markdown link target: every character but letters, digits and
    ``/._-`` percent-encoded (a space, a parenthesis or a ``>`` would end the target early)."""
    from urllib.parse import quote

    return quote(one_line(path), safe="/._-")


# --- HTML ----------------------------------------------------------------------------------------
def html(value: Any) -> str:
    """``value`` as HTML text (markupsafe: ``& < > " '`` as entities), without control
    characters; a ``Markup`` value is already HTML and is kept as it is."""
    from markupsafe import Markup, escape

    if isinstance(value, Markup):
        return value
    return escape(plain(value))


# --- terminal (rich) -----------------------------------------------------------------------------
# How rich (15) reads a "[" in markup: one that opens a tag ("[bold]", "[/]": a letter, #, / or @,
# then no "[" up to a "]") takes the backslashes before it in pairs, an odd one escaping it; any
# other "[" loses the one backslash just before it. Each kind gets the backslashes that make
# rich show exactly the student's.
_RICH_BRACKET = re.compile(r"(\\*)\[(?=([a-z#/@][^\[]*?\])?)")


def _rich_bracket(match: re.Match[str]) -> str:
    before = len(match.group(1))
    return "\\" * (2 * before + 1 if match.group(2) is not None else before + 1) + "["


def terminal(value: Any) -> str:
    """``value`` for a rich console or progress bar: on one line, no ANSI escape or control
    character, and every ``[`` escaped with the backslashes before it (``[/]`` otherwise raises
    ``MarkupError`` and stops the run; ``[red]`` would take a style). A trailing run of
    backslashes is doubled so that it cannot escape the caller's own markup after it. Emoji codes
    (``:smile:``) are left: rich has no escape for them, and they only ever become an emoji."""
    text = _RICH_BRACKET.sub(_rich_bracket, one_line(value))
    return text + "\\" * (len(text) - len(text.rstrip("\\")))
