"""The Gradescope autograder: ``seqlab gradescope OUT_DIR`` writes ``autograder.zip``.

``bundle``      the zip (setup.sh, run_autograder, the course) in Gradescope's layout
``autograder``  what run_autograder runs for each submission, inside Gradescope's image

An upload is read by ``seqlab.submission``, as every other hand-in is.
"""

from .bundle import BUNDLE_NAME, BundleError, build_bundle

__all__ = ["BUNDLE_NAME", "BundleError", "build_bundle"]
