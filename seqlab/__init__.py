"""seqlab: auto-graded exercises and exams for a unit on sequence models."""

__version__ = "0.1.0"
