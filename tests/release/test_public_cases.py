"""The public tests catch what they promise to catch: a student's slip that the shape checks let
through fails a public case of the release, with a message that names the slip.

The sequence forwards build their output from per-step results; stacked time-major (T, B, ...)
and then reshaped to (B, T, ...) instead of transposed, the shape is right and, with B = 1 or
T = 1, so are the values. Each ``*_keeps_batch_and_time_apart`` case (B = 2, T = 3) catches it
and says which axes to swap; the reference passes the same cases.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from seqlab.build import replace_function
from seqlab.paths import SOLUTIONS_DIR
from seqlab.regions import strip_markers

# module -> (function, its replacement): the reference, its states stacked along dim 0 and reshaped
RESHAPED = {
    "rnn": (
        "rnn_forward",
        """\
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = rnn_cell(x[:, t], h, W_xh, W_hh, b_h)
        hs.append(h)
    return torch.stack(hs).reshape(x.shape[0], x.shape[1], -1)
""",
    ),
    "lstm_gru": (
        "gru_forward",
        """\
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs).reshape(x.shape[0], x.shape[1], -1), h
""",
    ),
    "selective_scan": (
        "selective_scan",
        """\
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    if delta_bias is not None:
        delta = delta + delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h, ys = torch.zeros_like(A_bar[:, 0]), []
    for t in range(u.shape[1]):  # one step at a time, each y_t (B, D)
        h = A_bar[:, t] * h + B_bar[:, t] * u[:, t, :, None]
        ys.append((h * C[:, t, None, :]).sum(-1))
    y = torch.stack(ys).view(u.shape)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    return (y, h) if return_last_state else y
""",
    ),
}
# lstm_forward is wrong in its own run: one wrong function a module, so each failure is its own
LSTM = (
    "lstm_forward",
    """\
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c, hs = h0, c0, []
    for t in range(x.shape[1]):
        h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs).reshape(x.shape[0], x.shape[1], -1), (h, c)
""",
)
CASES = {
    "rnn.rnn_forward": "test_rnn_forward_keeps_batch_and_time_apart",
    "lstm_gru.lstm_forward": "test_lstm_forward_keeps_batch_and_time_apart",
    "lstm_gru.gru_forward": "test_gru_forward_keeps_batch_and_time_apart",
    "selective_scan.selective_scan": "test_selective_scan_keeps_batch_and_time_apart",
}
SLIP = "stacked time-major (T, B, ...) and then reshaped (or viewed) to (B, T, ...)"


def hand_in(released, target, wrong: dict[str, tuple[str, str]]):
    """The release with the reference solutions (markers stripped), ``wrong``'s functions swapped in."""
    shutil.copytree(released, target)
    for module in ("rnn", "lstm_gru", "selective_scan"):
        text = strip_markers((SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8"))
        if module in wrong:
            text = replace_function(text, *wrong[module])
        (target / "exercises" / f"{module}.py").write_text(text, encoding="utf-8")
    return target


def public_run(repo) -> subprocess.CompletedProcess:
    files = ["tests/test_rnn.py", "tests/test_lstm_gru.py", "tests/test_selective_scan.py"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files, "-k", "keeps_batch_and_time_apart"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("wrong", [RESHAPED, {"lstm_gru": LSTM}], ids=["rnn-gru-scan", "lstm"])
def test_states_reshaped_instead_of_transposed_fail_a_public_case(released, tmp_path, wrong):
    done = public_run(hand_in(released, tmp_path / "wrong", wrong))
    assert done.returncode == 1, done.stdout[-3000:]
    qualnames = [q for q in CASES if q.split(".")[0] in wrong and q.split(".")[1] == wrong[q.split(".")[0]][0]]
    assert len(qualnames) == len(wrong)
    for qualname in qualnames:
        assert f"FAILED tests/test_{qualname.split('.')[0]}.py::{CASES[qualname]}" in done.stdout, done.stdout
        assert f"{qualname}, case B=2, T=3" in done.stdout and SLIP in done.stdout, done.stdout[-3000:]
    assert "swap axes 0 and 1 with .transpose(0, 1)" in done.stdout
    assert f"{len(CASES) - len(wrong)} passed" in done.stdout, done.stdout[-3000:]  # the others stay right


def test_the_reference_passes_the_same_cases(released, tmp_path):
    done = public_run(hand_in(released, tmp_path / "reference", {}))
    assert done.returncode == 0 and f"{len(CASES)} passed" in done.stdout, done.stdout[-3000:]
