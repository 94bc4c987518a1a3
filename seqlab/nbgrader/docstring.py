"""Read the parts of a solution's docstring that the notebook prose shows.

The solutions' docstrings follow one style (docs/DESIGN.md): a summary line, ``.. math::``
blocks, explanatory paragraphs, ``Args:``, ``Returns:``, ``Notes:`` and an "Agrees with"
paragraph. The notebook renders the math as LaTeX and the arguments as a shape table, so the
equations and shapes students read are the ones the reference documents, never a second copy.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass, field

_SECTION = re.compile(r"^(Args|Returns|Notes|Raises|Example|Examples):\s*(.*)$")
_ARG = re.compile(r"^(?P<names>[A-Za-z_][\w, ]*?)\s*\((?P<type>[^)]*)\)\s*:\s*(?P<desc>.*)$")


@dataclass
class Doc:
    summary: str = ""
    math: list[str] = field(default_factory=list)  # LaTeX, one entry per ``.. math::`` block
    details: list[str] = field(default_factory=list)  # markdown paragraphs outside the sections
    body: list[tuple[str, str]] = field(default_factory=list)  # ("text"|"math", ...) in order
    args: list[tuple[str, str, str]] = field(default_factory=list)  # (name, type, description)
    returns: str = ""
    notes: str = ""
    agrees: str = ""


def rst_to_markdown(text: str) -> str:
    """The inline reST of the docstrings as markdown: ``code``, :math:`x`, :func:`f`."""
    text = re.sub(r":math:`([^`]*)`", lambda m: f"${m.group(1).strip()}$", text)
    text = re.sub(r":(?:func|class|meth|mod|attr):`~?([^`]*)`", r"`\1`", text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    return text


def latex_block(body: str) -> str:
    """A ``.. math::`` body as one display equation; ``&`` rows get an aligned environment."""
    body = body.strip("\n")
    if ("&" in body or "\\\\" in body) and "\\begin{" not in body:
        body = "\\begin{aligned}\n" + body + "\n\\end{aligned}"
    return body


def _paragraphs(lines: list[str]) -> list[str]:
    paras, current = [], []
    for line in lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            paras.append(" ".join(current))
            current = []
    if current:
        paras.append(" ".join(current))
    return paras


def parse_docstring(doc: str) -> Doc:
    lines = inspect.cleandoc(doc or "").splitlines()
    out = Doc()
    i = 0
    # summary: up to the first blank line
    summary = []
    while i < len(lines) and lines[i].strip():
        summary.append(lines[i].strip())
        i += 1
    out.summary = rst_to_markdown(" ".join(summary))
    free: list[str] = []
    section: str | None = None
    section_lines: list[str] = []

    def close_section():
        nonlocal section, section_lines
        if section == "Args":
            out.args.extend(_parse_args(section_lines))
        elif section == "Returns":
            out.returns = rst_to_markdown(" ".join(s.strip() for s in section_lines if s.strip()))
        elif section == "Notes":
            out.notes = rst_to_markdown(" ".join(s.strip() for s in section_lines if s.strip()))
        section, section_lines = None, []

    while i < len(lines):
        line = lines[i]
        if line.strip() == ".. math::":
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            out.math.append(latex_block(inspect.cleandoc("\n".join(block))))
            if section is None:
                free.append("")
                free.append(f"\x00math{len(out.math) - 1}")
                free.append("")
            continue
        match = _SECTION.match(line)
        if match and not line.startswith(" "):
            close_section()
            section = match.group(1)
            section_lines = [match.group(2)] if match.group(2) else []
        elif section and (line.startswith(" ") or (section == "Notes" and line.strip())):
            section_lines.append(line)
        elif section and not line.strip():
            if section == "Notes":
                close_section()
            else:
                section_lines.append(line)
        else:
            close_section()
            free.append(line)
        i += 1
    close_section()
    for para in _paragraphs(free):
        if para.startswith("\x00math"):
            out.body.append(("math", out.math[int(para[5:])]))
            continue
        para = rst_to_markdown(para)
        if para.startswith(("Agrees with", "PyTorch has no built-in", "The complement of", "Same semantics")):
            out.agrees = (out.agrees + " " + para).strip()
        else:
            out.details.append(para)
            out.body.append(("text", para))
    return out


def _parse_args(lines: list[str]) -> list[tuple[str, str, str]]:
    args: list[tuple[str, str, str]] = []
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        text = line.strip()
        # "W_ih (Tensor): (4H, D); W_hh (Tensor): (4H, H); b_ih, b_hh (Tensor): (4H,); as in ..."
        match = _ARG.match(text)
        if match and indent <= 4:
            for part in _split_compound(text):
                m = _ARG.match(part)
                assert m is not None  # _split_compound cuts the line where each part's match starts
                args.append((m["names"].strip(), m["type"].strip(), rst_to_markdown(m["desc"].strip())))
        elif args:
            name, typ, desc = args[-1]
            args[-1] = (name, typ, (desc + " " + rst_to_markdown(text)).strip())
    return args


def _split_compound(text: str) -> list[str]:
    """``a (T): x; b (T): y`` -> two entries; a ``;`` inside a description stays where it is."""
    parts: list[str] = []
    for piece in text.split("; "):
        if parts and not _ARG.match(piece.strip()):
            parts[-1] += "; " + piece
        else:
            parts.append(piece.strip())
    return parts


def function_doc(chunk_source: str) -> Doc:
    tree = ast.parse(chunk_source)
    fn = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return parse_docstring(ast.get_docstring(fn, clean=False) or "")


def signature_of(chunk_source: str) -> str:
    """``name(a, b, c=1)`` as written in the source."""
    tree = ast.parse(chunk_source)
    fn = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return f"{fn.name}({ast.unparse(fn.args)})"
