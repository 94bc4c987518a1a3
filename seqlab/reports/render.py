"""Shared jinja2 environment: every report template lives in templates/."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path, PurePath

from ..escape import markdown_inline, markdown_url
from ..paths import TEMPLATES_DIR
from ..results import GradingResult


@lru_cache(maxsize=1)
def environment():
    from .. import templating

    return templating.environment(
        TEMPLATES_DIR,
        autoescape=templating.html_autoescape(),
        filters={"md": markdown_inline, "mdurl": markdown_url, "rpts": rounded},
    )


def rounded(x: float) -> str:
    """Points as a report shows them: two decimals at most (0.92, 4.57, 8); results.json keeps
    the exact points."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def public_text(text: str, result: GradingResult) -> str:
    """``text`` without the grading machine's paths: the submission's folder by its name, the
    course checkout and the home folder by a placeholder (a student reads these reports)."""
    from ..paths import COURSE_ROOT

    text = str(text)
    submission = str(result.submission or "")
    places = [(submission, PurePath(submission).name if submission else "")] if submission.startswith("/") else []
    places += [(str(COURSE_ROOT), "<course>"), (str(Path.home()), "~")]
    for place, name in sorted(places, key=lambda p: -len(p[0])):
        if len(place) > 1:
            text = text.replace(place, name)
    return _ABSOLUTE_EXERCISES.sub(r"\1", text)


# Any other absolute path to a submission's file: only the part from exercises/ on is the student's.
_ABSOLUTE_EXERCISES = re.compile(r"(?<![\w.~-])(?:/[^\s/'\"]+)+/(exercises/)")


def functions_view(tests: list) -> dict:
    """One function's tests for a report: the failed ones, the passed ones (folded), and the
    distinct hints of its failures, each once."""
    failed = [t for t in tests if t.status == "failed"]
    return {
        "failed": failed,
        "passed": [t for t in tests if t.status == "passed"],
        "hints": list(dict.fromkeys(t.hint for t in failed if t.hint)),
    }


def modules_view(result: GradingResult) -> list[dict]:
    """Per module: its score and its functions with their tests, for the templates."""
    modules: dict[str, dict] = {}
    for t in result.tests:
        module = modules.setdefault(t.module, {"name": t.module, "score": 0.0, "max_score": 0.0, "functions": {}})
        module["score"] += t.score
        module["max_score"] += t.max_score
        fn = module["functions"].setdefault(
            t.function, {"name": t.function, "score": 0.0, "max_score": 0.0, "tests": []}
        )
        fn["score"] += t.score
        fn["max_score"] += t.max_score
        fn["tests"].append(t)
        fn.update(functions_view(fn["tests"]))
    # the totals as GradingResult sums them (fsum): a running += can land an ulp off the points
    totals = result.by_function()
    view = []
    for module in modules.values():
        module["functions"] = list(module["functions"].values())
        for fn in module["functions"]:
            fn["score"], fn["max_score"] = totals[fn["name"]]
        module["score"] = round(math.fsum(fn["score"] for fn in module["functions"]), 4)
        module["max_score"] = round(math.fsum(fn["max_score"] for fn in module["functions"]), 4)
        view.append(module)
    return view


def render(template: str, result: GradingResult, **extra) -> str:
    return (
        environment()
        .get_template(template)
        .render(result=result, modules=modules_view(result), public=lambda text: public_text(text, result), **extra)
    )
