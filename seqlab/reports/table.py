"""The terminal table (rich when present, plain text otherwise)."""

from __future__ import annotations

import sys

from ..results import GradingResult
from ..student.sandbox import NOT_SANDBOXED


def status_word(score: float, max_score: float, voided: bool = False) -> str:
    """One word a row of points is read by: 0/4 and 4.571/8 must not look the same."""
    if voided:
        return "void"
    if score >= max_score - 1e-9:
        return "ok"
    return "failed" if score <= 1e-9 else "partial"


def _terminal(text: str) -> str:
    """Text for rich markup, line by line (seqlab.escape.terminal keeps one line)."""
    from ..escape import terminal

    return "\n".join(terminal(line) for line in str(text).splitlines())


def fix_first_line(result: GradingResult) -> str:
    """The report's Fix first list on one line ("" when there is none)."""
    from .fixfirst import fix_first

    first = fix_first(result)
    if not first:
        return ""
    names = ", ".join(e.function for e in first.entries) + (f" and {first.more} more" if first.more else "")
    return f"fix first: {names} (other functions of yours run them; report.html says why)"


def print_table(result: GradingResult, file=None, *, failures: int = 8) -> None:
    file = file or sys.stdout
    first_line = fix_first_line(result)
    rows = [(fn, s, m) for fn, (s, m) in result.by_function().items()]
    voided = {t.function for t in result.tests if t.voided_by}
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text for a bare environment
        for fn, s, m in rows:
            print(f"{fn:42s} {s:6.2f} / {m:<6.2f} {status_word(s, m, fn in voided)}", file=file)
        print(f"{'total':42s} {result.score:6.2f} / {result.max_score:<6.2f} ({result.percent:.1f}%)", file=file)
        if first_line:
            print(first_line, file=file)
        return
    # emoji off: a student's ":smile:" stays those characters (escape.terminal leaves emoji codes)
    console = Console(file=file, highlight=False, emoji=False, width=100)
    table = Table(
        title=f"seqlab grade: {result.score:.4g} / {result.max_score:.4g} ({result.percent:.1f}%)", show_lines=False
    )
    table.add_column("function")
    table.add_column("points", justify="right")
    table.add_column("status", justify="left")
    for fn, s, m in rows:
        word = status_word(s, m, fn in voided)
        style = {"ok": "green", "partial": "yellow"}.get(word, "red")
        table.add_row(_terminal(fn), f"[{style}]{s:.4g} / {m:.4g}[/{style}]", f"[{style}]{word}[/{style}]")
    console.print(table)
    for n in result.notices:
        console.print(f"[yellow]notice:[/yellow] {_terminal(n)}", markup=True)
    for e in result.errors:
        label = "[yellow]notice:[/yellow]" if e.startswith(NOT_SANDBOXED) else "[red]error:[/red]"
        console.print(f"{label} {_terminal(e)}", markup=True)
    if first_line:
        console.print(f"[red]{_terminal(first_line)}[/red]", markup=True, highlight=False, soft_wrap=True)
    # The first failure of each function: one line of what, one of the known mistake.
    first: dict[str, list] = {}
    for t in result.tests:
        if t.status == "failed":
            first.setdefault(t.function, []).append(t)
    for function, tests in list(first.items())[:failures]:
        t = tests[0]
        line = t.output.splitlines()[0] if t.output else ""
        more = f"  (+{len(tests) - 1} more failed tests of {function})" if len(tests) > 1 else ""
        console.print(
            f"[bold]{_terminal(t.name)}[/bold]{_terminal(more)}\n    {_terminal(line)}"
            + (f"\n    [yellow]Looks like:[/yellow] {_terminal(t.hint)}" if t.hint else ""),
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
    if len(first) > failures:
        console.print(f"... and failures in {len(first) - failures} more functions (see the HTML report)")
    console.print(f"seed {result.seed}, device {result.device}, {result.execution_time:.1f} s")
