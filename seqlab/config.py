"""Load and validate grading_config.yaml in one place.

Every problem is reported as ``file: key.path: what is wrong`` so an instructor can fix
the file without reading a traceback.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import contract
from .errors import SeqlabError
from .paths import CONFIG_PATH
from .tolerance import Tolerance


class ConfigError(SeqlabError, ValueError):
    """grading_config.yaml is missing, unreadable or holds a bad value."""


# Gradescope's visibility levels (autograder specification), from most to least open.
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")


@dataclass(frozen=True)
class Limits:
    call_timeout_s: float = 10.0
    import_timeout_s: float = 30.0
    cpu_time_s: float = 120.0
    memory_mb: float = 6144  # every limit is read as a number (_number); the users round
    output_kb: float = 64


@dataclass(frozen=True)
class FunctionRules:
    qualname: str
    points: float
    complexity_points: float = 0.0
    forbidden: tuple[str, ...] = ()
    # Overrides of the graders' markers, each an fnmatch pattern on the test title (as reports show it).
    test_weights: tuple[tuple[str, float], ...] = ()  # (pattern, weight)
    visibility: str = "visible"  # when Gradescope shows this function's tests to the student
    test_visibility: tuple[tuple[str, str], ...] = ()  # (pattern, visibility)

    def visibility_of(self, title: str, declared: str = "") -> str:
        """When Gradescope shows the test titled ``title``: the first matching ``test_visibility``
        pattern, else the visibility its grader ``declared`` in the marker, else the function's."""
        for pattern, visibility in self.test_visibility:
            if fnmatch.fnmatchcase(title, pattern):
                return visibility
        return declared or self.visibility

    def weight_of(self, title: str, default: float) -> float:
        """A test's share of the function's points: the config's weight when a pattern matches
        its title, else the weight its grader declares."""
        for pattern, weight in self.test_weights:
            if fnmatch.fnmatchcase(title, pattern):
                return weight
        return default

    def forbidden_match(self, op_name: str) -> str | None:
        """The first forbidden pattern ``op_name`` matches, or None."""
        for pattern in self.forbidden:
            if fnmatch.fnmatchcase(op_name, pattern):
                return pattern
        return None


@dataclass(frozen=True)
class GradescopeSettings:
    """The Gradescope autograder's page-level options (`seqlab gradescope`)."""

    visibility: str = "visible"  # the whole result page
    stdout_visibility: str = "hidden"  # run_autograder's log, written for the instructor
    # Seconds the autograder lets one grading run take before it reports the submission as too
    # slow. Below Gradescope's default autograder timeout (10 minutes) so that the student gets
    # seqlab's message rather than Gradescope's bare timeout; a correct submission takes seconds.
    grading_timeout_s: float = 540.0


@dataclass(frozen=True)
class GradingConfig:
    course_id: str
    course_title: str
    tolerances: dict[str, Tolerance]
    limits: Limits
    functions: dict[str, FunctionRules]
    source: str = "<config>"
    gradescope: GradescopeSettings = GradescopeSettings()
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def tolerance(self, dtype: Any) -> Tolerance:
        name = str(dtype).replace("torch.", "")
        try:
            return self.tolerances[name]
        except KeyError:
            raise ConfigError(f"{self.source}: tolerances: no entry for dtype {name!r}") from None

    def rules(self, qualname: str) -> FunctionRules:
        return self.functions[qualname]

    def visibility_of(self, test_name: str) -> str:
        """Gradescope visibility of a graded test named ``"module.function: title"``."""
        function, _, title = test_name.partition(":")
        rules = self.functions.get(function.strip())
        return rules.visibility_of(title.strip()) if rules else "visible"

    @property
    def max_score(self) -> float:
        return sum(rule.points for rule in self.functions.values())


def check_test_patterns(config: GradingConfig, titles: dict[str, list[str]]) -> None:
    """Refuse a ``test_weights`` or ``test_visibility`` pattern that matches none of its
    function's grader test titles (``titles``: function -> titles, from
    :func:`seqlab.grader_index.titles_by_function`).

    An unmatched pattern is always a mistake: a grader title was reworded or the pattern has a
    typo, and the points (or the hiding) it meant silently fall back to the marker's.
    """
    problems = []
    for qualname, rules in config.functions.items():
        own = titles.get(qualname, [])
        for key, overrides in (("test_weights", rules.test_weights), ("test_visibility", rules.test_visibility)):
            for pattern, _ in overrides:
                if any(fnmatch.fnmatchcase(title, pattern) for title in own):
                    continue
                shown = "; ".join(repr(t) for t in own[:4]) + (" ..." if len(own) > 4 else "")
                hint = (
                    "; fnmatch reads [...] as a set of characters, write [[] for a literal [" if "[" in pattern else ""
                )
                problems.append(
                    f"{config.source}: functions.{qualname}.{key}[{pattern!r}]: matches no "
                    f"grader test of {qualname} (its titles: {shown or 'none'}){hint}"
                )
    if problems:
        raise ConfigError("\n".join(problems))


def _number(value: Any, where: str, *, positive: bool = False, allow_zero: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: must be a number, got {value!r}")
    if value < 0 or (positive and not allow_zero and value == 0):
        raise ConfigError(f"{where}: must be {'positive' if not allow_zero else 'non-negative'}, got {value!r}")
    return float(value)


def _visibility(value: Any, where: str) -> str:
    if value not in VISIBILITIES:
        raise ConfigError(f"{where}: must be one of {', '.join(VISIBILITIES)}, got {value!r}")
    return value


def _gradescope(raw: Any, where: str) -> GradescopeSettings:
    entry = _mapping(raw, where)
    known = set(GradescopeSettings.__dataclass_fields__)
    unknown = set(entry) - known
    if unknown:
        raise ConfigError(f"{where}: unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))})")
    defaults = GradescopeSettings()
    return GradescopeSettings(
        visibility=_visibility(entry.get("visibility", defaults.visibility), f"{where}.visibility"),
        stdout_visibility=_visibility(
            entry.get("stdout_visibility", defaults.stdout_visibility), f"{where}.stdout_visibility"
        ),
        grading_timeout_s=_number(
            entry.get("grading_timeout_s", defaults.grading_timeout_s),
            f"{where}.grading_timeout_s",
            positive=True,
            allow_zero=False,
        ),
    )


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(value).__name__}")
    return value


def parse_config(data: Any, source: str = "<config>") -> GradingConfig:
    """Validate an already-parsed YAML document."""
    top = _mapping(data, f"{source}: (top level)")
    unknown = set(top) - {"version", "course", "tolerances", "limits", "functions", "exam", "gradescope"}
    if unknown:
        raise ConfigError(f"{source}: unknown top-level key(s): {', '.join(sorted(unknown))}")
    if top.get("version") != 1:
        raise ConfigError(f"{source}: version: must be 1, got {top.get('version')!r}")

    course = _mapping(top.get("course", {}), f"{source}: course")
    tolerances: dict[str, Tolerance] = {}
    for dtype, entry in _mapping(top.get("tolerances"), f"{source}: tolerances").items():
        where = f"{source}: tolerances.{dtype}"
        entry = _mapping(entry, where)
        why = entry.get("why")
        if not isinstance(why, str) or len(why.split()) < 5:
            raise ConfigError(f"{where}.why: every tolerance needs its reason written down (a sentence or more)")
        tolerances[str(dtype)] = Tolerance(
            _number(entry.get("rtol"), f"{where}.rtol"), _number(entry.get("atol"), f"{where}.atol"), why
        )
    for needed in ("float32", "float64"):
        if needed not in tolerances:
            raise ConfigError(f"{source}: tolerances.{needed}: missing")

    limits_raw = _mapping(top.get("limits", {}), f"{source}: limits")
    known_limits = set(Limits.__dataclass_fields__)
    for key in limits_raw:
        if key not in known_limits:
            raise ConfigError(f"{source}: limits.{key}: unknown limit (known: {', '.join(sorted(known_limits))})")
    limits = Limits(
        **{
            key: _number(value, f"{source}: limits.{key}", positive=True, allow_zero=False)
            for key, value in limits_raw.items()
        }
    )

    functions_raw = _mapping(top.get("functions"), f"{source}: functions")
    functions: dict[str, FunctionRules] = {}
    for qualname, entry in functions_raw.items():
        where = f"{source}: functions.{qualname}"
        if qualname not in contract.SIGNATURES:
            raise ConfigError(f"{where}: not a contract function (see seqlab/contract.py)")
        entry = _mapping(entry, where)
        unknown = set(entry) - {
            "points",
            "complexity_points",
            "forbidden",
            "test_weights",
            "visibility",
            "test_visibility",
        }
        if unknown:
            raise ConfigError(f"{where}: unknown key(s): {', '.join(sorted(unknown))}")
        points = _number(entry.get("points"), f"{where}.points", positive=True, allow_zero=False)
        complexity = _number(entry.get("complexity_points", 0), f"{where}.complexity_points")
        if complexity >= points:
            raise ConfigError(f"{where}.complexity_points: must be below points ({points:g})")
        forbidden = entry.get("forbidden", [])
        if not isinstance(forbidden, list) or not all(isinstance(p, str) and p for p in forbidden):
            raise ConfigError(f"{where}.forbidden: must be a list of non-empty strings")
        weights = _mapping(entry.get("test_weights", {}), f"{where}.test_weights")
        test_weights = tuple(
            (str(pattern), _number(w, f"{where}.test_weights[{pattern!r}]", positive=True, allow_zero=False))
            for pattern, w in weights.items()
        )
        visibility = _visibility(entry.get("visibility", "visible"), f"{where}.visibility")
        test_visibility = tuple(
            (str(pattern), _visibility(v, f"{where}.test_visibility[{pattern!r}]"))
            for pattern, v in _mapping(entry.get("test_visibility", {}), f"{where}.test_visibility").items()
        )
        functions[qualname] = FunctionRules(
            qualname, points, complexity, tuple(forbidden), test_weights, visibility, test_visibility
        )
    missing = [name for name in contract.FUNCTIONS if name not in functions]
    if missing:
        raise ConfigError(f"{source}: functions: no points for {', '.join(missing)}")
    gradescope = _gradescope(top.get("gradescope", {}), f"{source}: gradescope")
    return GradingConfig(
        str(course.get("id", "seqlab")),
        str(course.get("title", "")),
        tolerances,
        limits,
        functions,
        source,
        gradescope=gradescope,
        raw=top,
    )


def load_config(path: str | Path | None = None) -> GradingConfig:
    import yaml

    path = Path(path) if path else CONFIG_PATH
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the grading config ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    return parse_config(data, source=str(path))


@dataclass(frozen=True)
class Figures:
    """The course's totals and counts, each derived from ``grading_config.yaml`` and
    ``solutions/``: what a test expects and what a doc table prints, never written by hand (a
    new exercise changes them all at once; tests/project/test_derived_figures.py greps for a
    copy)."""

    topics: tuple[str, ...]
    points: dict[str, float]  # every contract function's points, in contract order
    labs: tuple[str, ...]

    @property
    def functions(self) -> int:
        return len(self.points)

    @property
    def exercises(self) -> tuple[str, ...]:
        return tuple(name for name in self.points if name not in self.labs)

    @property
    def total_points(self) -> float:
        return sum(self.points.values())

    @property
    def exercise_points(self) -> float:
        """What a grading with ``--no-labs`` (the project's own tests' default) is out of."""
        return sum(self.points[name] for name in self.exercises)

    @property
    def lab_points(self) -> float:
        return sum(self.points[name] for name in self.labs)

    def topic_points(self, topic: str) -> float:
        return sum(p for name, p in self.points.items() if name.partition(".")[0] == topic)


def course_figures(config: GradingConfig | None = None) -> Figures:
    """The figures of the course ``seqlab.paths`` points at (``config``: one already loaded)."""
    config = config or load_config()
    points = {name: config.rules(name).points for name in contract.FUNCTIONS if name in config.functions}
    return Figures(topics=tuple(contract.MODULES), points=points, labs=tuple(contract.LABS))
