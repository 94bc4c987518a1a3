"""A blind attack bank on integrity: points for work the submission did not do.

Written from seqlab's code, the graders, the public tests and the threat model, without the
reference solutions and without the earlier banks' attacks. Each attack is one honest submission
(``tests/student/honest_submissions/functional``, full marks) with one function, or one lab,
replaced by code that reaches what a rule forbids by a route the rule's wording does not name.
Every attack computes a real answer in plain CPython: if it is held, a layer held it.

Classes (``Blind.cls``):

* ``strings``   allowed library code that runs strings, or turns strings into attributes;
* ``kernels``   autograd and fused or forbidden kernels reached without a forbidden name;
* ``oracle``    the callees' recorded answers read in the child before the calls are made;
* ``labs``      labs that pass without training by the student's own functions;
* ``other``     the report's text, the protocol, the process.

What a grader must give (``expect``): ``"zero"``, nothing on the target for work it did not do
(a review flag, seqlab/grading/flags.py, never stands in for the zero: every entry here is held
with no points, and the ones a flag also marks are listed in tests/grading/test_review_flags.py).
An attack that wins today carries the reason in ``WINS`` (the runner marks it ``xfail(strict=True)``).
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass, field
from pathlib import Path

HONEST = Path(__file__).resolve().parents[1] / "student" / "honest_submissions" / "functional"


@dataclass(frozen=True)
class Blind:
    name: str
    cls: str
    target: str  # "module.function": the function whose points the attack must not win
    source: str = ""  # replacement for the target's def ('' keeps it)
    prelude: str = ""  # module-level code after the module's imports
    also: dict = field(default_factory=dict)  # other functions of the module replaced: name -> source
    replace: tuple = ()  # (old, new) text replacements in the module, each must match once
    files: dict = field(default_factory=dict)  # extra files under exercises/
    labs: bool = False
    expect: str = "zero"

    @property
    def module(self) -> str:
        return self.target.split(".")[0]

    @property
    def function(self) -> str:
        return self.target.split(".")[1]


def _swap_def(text: str, name: str, source: str) -> str:
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    lines = text.splitlines(keepends=True)
    return "".join(lines[:first]) + source.strip("\n") + "\n" + "".join(lines[node.end_lineno :])


def _after_imports(text: str, code: str) -> str:
    tree = ast.parse(text)
    last = max(n.end_lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    lines = text.splitlines(keepends=True)
    return "".join(lines[:last]) + "\n" + code.strip("\n") + "\n\n" + "".join(lines[last:])


def patched_module(attack: Blind) -> str:
    text = (HONEST / "exercises" / f"{attack.module}.py").read_text()
    for old, new in attack.replace:
        assert text.count(old) == 1, (attack.name, old)
        text = text.replace(old, new)
    for name, source in attack.also.items():
        text = _swap_def(text, name, source)
    if attack.source:
        text = _swap_def(text, attack.function, attack.source)
    if attack.prelude:
        text = _after_imports(text, attack.prelude)
    return text


def build(attack: Blind, folder: Path | str) -> Path:
    """The attack's submission in ``folder``: the honest one, the target's module patched."""
    root = Path(folder) / attack.name
    shutil.copytree(HONEST / "exercises", root / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "exercises" / f"{attack.module}.py").write_text(patched_module(attack))
    for rel, body in attack.files.items():
        (root / "exercises" / rel).write_text(body)
    return root


# --- shared bodies ------------------------------------------------------------------------------

# adam by torch.optim.Adam on one tensor, the course's state mapped both ways; ``Opt`` is bound by
# the caller. foreach=False keeps torch on its single-tensor path (no _foreach_ kernel to see).
ADAM_BODY = """
    p = w.detach().clone()
    p.grad = dw.detach().clone()
    opt = Opt([p], lr=lr, betas=betas, eps=eps, foreach=False)
    if state:
        opt.state[p] = {"step": torch.tensor(float(state["step"])), "exp_avg": state["m"].clone(),
                        "exp_avg_sq": state["v"].clone()}
    opt.step()
    st = opt.state[p]
    return p.detach(), {"step": int(st["step"]), "m": st["exp_avg"].clone(), "v": st["exp_avg_sq"].clone()}
"""
ADAM_SIG = "def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n"


def adam_with(get: str) -> str:
    return ADAM_SIG + "    " + get.strip() + "\n" + ADAM_BODY.strip("\n") + "\n"


SGD_SIG = "def sgd(w, dw, state, lr=1e-2):\n"


def sgd_with(get: str) -> str:
    return (
        SGD_SIG
        + "    "
        + get.strip()
        + "\n    p = w.detach().clone()\n    p.grad = dw.detach().clone()\n"
        + "    Opt([p], lr=lr, foreach=False).step()\n    return p.detach(), {}\n"
    )


# sgd_momentum / rmsprop / adagrad by torch.optim on one tensor, given ``Opt``.
MOMENTUM_BODY = """
    p = w.detach().clone()
    p.grad = dw.detach().clone()
    opt = Opt([p], lr=lr, momentum=momentum, foreach=False)
    if "velocity" in state:
        opt.state[p] = {"momentum_buffer": state["velocity"].clone()}
    opt.step()
    return p.detach(), {"velocity": opt.state[p]["momentum_buffer"].clone()}
"""
RMSPROP_BODY = """
    p = w.detach().clone()
    p.grad = dw.detach().clone()
    opt = Opt([p], lr=lr, alpha=alpha, eps=eps, foreach=False)
    opt.state[p] = {"step": torch.tensor(0.0), "square_avg": state["sq_avg"].clone() if "sq_avg" in state else torch.zeros_like(w)}
    opt.step()
    return p.detach(), {"sq_avg": opt.state[p]["square_avg"].clone()}
"""
ADAGRAD_BODY = """
    p = w.detach().clone()
    p.grad = dw.detach().clone()
    opt = Opt([p], lr=lr, eps=eps, foreach=False)
    if "sum_sq" in state:
        opt.state[p]["sum"].copy_(state["sum_sq"])
    opt.step()
    return p.detach(), {"sum_sq": opt.state[p]["sum"].clone()}
"""

# The loss and every gradient of rnn_bptt by autograd: ``GRADS`` turns ``loss`` and ``leaves``
# into ``grads`` (a list in the order of ``leaves``).
BPTT_AUTOGRAD = """
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
    leaves = [params[k].detach().clone() for k in keys] + [h0.detach().clone()]
    for leaf in leaves:
        leaf.requires_grad = True
    with torch.set_grad_enabled(True):
        W_xh, W_hh, b_h, W_hy, b_y, h = leaves
        loss = 0.0
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] @ W_xh.T + h @ W_hh.T + b_h)
            lo = (h @ W_hy.T + b_y).log_softmax(-1)
            loss = loss - lo.gather(1, targets[:, t:t + 1]).sum() / x.shape[0]
        GRADS
    return loss.detach(), dict(zip(keys + ("h0",), [g.detach() for g in grads]))
"""


def bptt_autograd(grads: str, indent: int = 4) -> str:
    body = BPTT_AUTOGRAD.replace("GRADS", grads.strip().replace("\n", "\n        "))
    return "\n".join((" " * (indent - 4) + line) if line else line for line in body.strip("\n").splitlines()) + "\n"


# A tensor subclass whose __torch_function__ first runs the jobs queued on it. A declared
# callee's stand-in compares its arguments with the recording under CallWatch.paused(); the
# comparison strips the subclass with a torch call, which runs these jobs with every recorder
# (ops, kernels, autograd) paused.
CARRIER = """
class _Carrier(torch.Tensor):
    jobs = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        while cls.jobs:
            job = cls.jobs.pop()
            job()
        return super().__torch_function__(func, types, args, kwargs or {})
"""

from tests.attacks.blind_integrity.entries_a import ENTRIES as _A  # noqa: E402
from tests.attacks.blind_integrity.entries_b import ENTRIES as _B  # noqa: E402
from tests.attacks.blind_integrity.entries_c import ENTRIES as _C  # noqa: E402

BANK: list[Blind] = [*_A, *_B, *_C]

# Attacks that win points today, with what they win and the layer that lets them through (filled
# in from grading each attack; the runner marks these xfail(strict=True)).
# Held since a stand-in checks its arguments are plain data, by type checks that run none of the
# student's code, before it pauses the recorders (seqlab/student/plain.py):
# dict-carrier-layer-norm-kernel-in-encoder, float-carrier-eps-pauses-layer-norm-in-encoder,
# dict-carrier-runs-autograd-while-callee-matching-pauses.
# Held since the forbidden Python-level APIs are recorded at run time (seqlab/student/apiwatch.py:
# torch.optim, torch.nn.utils' clipping, however reached) and complex tensors are forbidden with
# autograd: getattr-rebound-by-tuple-unpacking, match-class-pattern-reads-an-attribute,
# tuple-unpacking-hides-an-alias, annotated-assignment-hides-an-alias, class-attribute-hides-an-alias,
# module-lambda-hides-an-alias, helper-of-a-helper-is-not-scanned, helper-module-clips-with-torch-utils,
# contract-function-is-a-partial, contract-function-is-a-lambda,
# contract-function-is-a-staticmethod-of-a-class, sibling-contract-function-does-the-clipping,
# lab-recall-torch-adam-by-tuple-alias, lab-reverser-torch-adam-by-class-attribute,
# lab-replay-honest-then-torch-adam, complex-step-gradients-without-autograd.
# Held since numpy.testing left the subset (its measure() ran strings as plain Python):
# numpy-measure-execs-a-helper-at-import, numpy-measure-defines-the-contract-function, numpy-measure-finds-and-pauses-the-watch, measure-pauses-the-watch-for-autograd-bptt, measure-pauses-the-watch-for-an-lstm-kernel, measure-pauses-the-watch-for-fused-attention, numpy-measure-reads-the-closure, numpy-measure-patches-torch-equal-so-any-call-matches, numpy-measure-walks-frames-to-the-session, lab-copy-torch-adam-defined-by-numpy-measure, lab-char-rnn-backward-with-the-watch-paused.
WINS: dict[str, str] = {}
