"""Running the hidden graders and turning their outcomes into points."""

from typing import Any

__all__ = ["GradingError", "GradingSettings", "grade_submission", "grading_settings"]


def __getattr__(name: str) -> Any:
    # The grading run imports torch; reached through the package only when asked for, so that a
    # light submodule (the plugin collecting graders for `seqlab config`) does not pay for it.
    if name == "grade_submission":
        from .run import grade_submission

        return grade_submission
    if name in __all__:
        from . import settings

        return getattr(settings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
