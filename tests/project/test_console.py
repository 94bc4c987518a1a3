"""The console command's exit: its code and its exit handlers kept, the interpreter's teardown
skipped (seqlab.cli.run), and the grading's child started before this process imports torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from seqlab.grading.settings import GPU_DEVICE_NODES

# A handler registered once the command runs, as every one of seqlab's is (the fork server's,
# temporary folders'): run() registers its own first, so it runs last.
RUN = """
import atexit, sys
from seqlab import cli
command = cli.main
def main():
    atexit.register(print, "handler ran")
    return command()
cli.main = main
sys.argv[1:] = {argv!r}
cli.run()
"""


def console(*argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", RUN.format(argv=list(argv))]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (("--help",), 0, ""),  # argparse's own SystemExit(0)
        (("grade",), 2, "usage:"),  # argparse's usage error
        (("grade", "no-such-submission", "--in-process"), 2, "no-such-submission: does not exist"),  # a SeqlabError
    ],
)
def test_exit_code_and_handlers_survive_the_fast_exit(argv, code, said):
    done = console(*argv)
    assert done.returncode == code, done.stderr
    assert done.stdout.rstrip().endswith("handler ran")  # ran, and stdout was flushed after it
    assert said in done.stderr


@pytest.mark.skipif(any(__import__("os").path.exists(n) for n in GPU_DEVICE_NODES), reason="a GPU driver is here")
def test_device_auto_is_decided_without_importing_torch():
    """Without a GPU driver's device node, `--device auto` is cpu and torch is not imported to
    say so: the parent imports it only after the sandboxed child has started, beside it."""
    probe = (
        "import sys; from seqlab.grading.settings import grading_settings; "
        "s = grading_settings(device='auto', isolated=False); print(s.device, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["cpu", "False"], done.stderr
