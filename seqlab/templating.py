"""The one jinja2 environment factory, with the filters every template may use.

Every template seqlab renders (reports, exam papers, the student repository, notebooks, the
Gradescope bundle) comes from :func:`environment`. What all of them share is fixed here: files
from a folder, ``StrictUndefined`` (a misspelt variable is an error, never an empty string) and
the filters below. What differs is the caller's choice: HTML autoescaping for the reports,
Markdown without it for exams and notebooks, ``[= =]`` delimiters for GitHub workflows, the
trailing newline, extra filters.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2


def points(x: float) -> str:
    """Points as people write them: whole points as integers, others to 4 significant digits."""
    return f"{int(x)}" if x == int(x) else f"{x:.4g}"


def percent(x: float) -> str:
    return f"{x:.1f}%"


SHARED_FILTERS: dict[str, Callable[..., str]] = {"pts": points, "pct": percent}


def environment(
    templates_dir: str | Path,
    *,
    autoescape: bool | Callable[[str | None], bool] = False,
    trim_blocks: bool = True,
    keep_trailing_newline: bool = True,
    filters: dict[str, Callable[..., Any]] | None = None,
    **options: Any,
) -> jinja2.Environment:
    """A jinja2 environment over ``templates_dir`` with the shared filters (and ``filters``).

    ``trim_blocks`` also sets ``lstrip_blocks``: a block tag alone on its line leaves no blank
    line behind. ``options`` go to ``jinja2.Environment`` unchanged (delimiters, for one).
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        trim_blocks=trim_blocks,
        lstrip_blocks=trim_blocks,
        keep_trailing_newline=keep_trailing_newline,
        **options,
    )
    env.filters.update(SHARED_FILTERS)
    env.filters.update(filters or {})
    return env


def html_autoescape() -> Callable[[str | None], bool]:
    """Autoescape for ``.html`` and ``.html.j2`` templates only (the reports' rule)."""
    return jinja2.select_autoescape(["html", "html.j2"])
