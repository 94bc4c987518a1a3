"""The unseen-mistake bank's reader (tests/mutants/unseen.py): a file in the format becomes the
variant benchmarks/bench_unseen.py grades, and a file out of the format is an error that names
it, never a mistake quietly left out of the figures."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.mutants import ROOT, make_submission
from tests.mutants.unseen import BankError, load_bank, parse

GOOD = """\
# function: rnn.rnn_cell
# mistake: the bias b_h is left out of the
#   pre-activation
# class: missing term
# confirmed: max |diff| 0.3 vs torch.nn.RNNCell
import math


def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T)
"""


def test_a_file_in_the_format():
    m = parse(GOOD, "01_rnn_rnn_cell_no_bias.py")
    assert m.function == "rnn.rnn_cell"
    assert m.mistake == "the bias b_h is left out of the pre-activation"
    assert (m.klass, m.confirmed) == ("missing term", "max |diff| 0.3 vs torch.nn.RNNCell")
    assert m.source.startswith("import math\n") and "# function" not in m.source
    assert m.variant.function == "rnn.rnn_cell" and m.variant.source == m.source


def test_the_variant_replaces_only_its_function(tmp_path):
    submission = make_submission(tmp_path / "sub", parse(GOOD, "01_x.py").variant)
    text = (submission / "exercises" / "rnn.py").read_text()
    assert "h_prev @ W_hh.T)\n" in text and "def rnn_forward" in text and "import math" in text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (GOOD.replace("# function: rnn.rnn_cell\n", ""), "no function"),
        (GOOD.replace("rnn.rnn_cell", "rnn.rnn_step"), "not a contract function"),
        (GOOD.replace("def rnn_cell", "def rnn_step"), "0 top-level defs"),
        (GOOD + "\n\ndef rnn_cell(x, h_prev, W_xh, W_hh, b_h):\n    return x\n", "2 top-level defs"),
        (GOOD.replace("return", "return ("), "does not parse"),
    ],
)
def test_a_file_out_of_the_format_is_an_error(text, says):
    with pytest.raises(BankError, match=says):
        parse(text, "07_bad.py")


def test_a_bank_is_its_numbered_files_in_order(tmp_path):
    for name in ("02_b.py", "01_a.py"):
        (tmp_path / name).write_text(GOOD)
    (tmp_path / "README.md").write_text("not a mistake")
    (tmp_path / "DONE").write_text("")
    assert [m.file for m in load_bank(tmp_path)] == ["01_a.py", "02_b.py"]
    with pytest.raises(BankError, match="no NN_"):
        load_bank(tmp_path / "README.md")


def test_every_committed_bank_loads():
    banks = sorted(p for p in (ROOT / "tests" / "heldout").iterdir() if p.is_dir())
    assert banks, "no bank under tests/heldout/"
    for bank in banks:
        assert len(load_bank(bank)) >= 1, bank


def test_the_review_sheet_reads_back():
    spec = importlib.util.spec_from_file_location("bench_unseen", Path(ROOT, "benchmarks", "bench_unseen.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    row = {
        "file": "03_rnn_rnn_cell_x.py",
        "function": "rnn.rnn_cell",
        "mistake": "a | b",
        "score": 0.0,
        "max_score": 2.0,
        "hints": ["bias missing: b_h"],
        "messages": [],
        "lost_elsewhere": {},
        "public_failing": ["rnn.rnn_cell"],
    }
    sheet = bench.review_sheet(
        [row], {"mistakes": 1, "missed": 0, "wrong_function": 0, "hint_given": 1, "public_right": 1}, "b", "c"
    )
    filled = sheet.replace("| `rnn.rnn_cell` | |", "| `rnn.rnn_cell` | **named** |")
    assert bench.read_verdicts_text(filled) == {"03": "named"}
