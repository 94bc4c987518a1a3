"""Running the hidden graders and turning their outcomes into points."""

from .run import grade_submission, resolve_device

__all__ = ["grade_submission", "resolve_device"]
