"""A bank of attacks and faults, each a small submission built on the reference solutions.

Each entry replaces one contract function (``target``) with hostile code and may add files
to the submission. ``expect`` says what grading must give the target:

* ``"zero"``: nothing on the targeted function, full marks everywhere else;
* ``"complexity-only"``: only the complexity points lost (a correct sequential loop);
* ``"some-lost"``: some (not all) points lost, e.g. purity tests for in-place mutation;
* ``"module-lost"``: the whole module scores zero (it killed its own import), others full;
* ``"refused"``: the static code policy refused the module before it loaded: all of it scores 0,
  the message names the line and the rule.
* ``"unreadable"``: the submission is refused as a whole when it is read (``seqlab.submission``:
  a link or another special file in it), with the entry named; nothing is graded.

``refused`` and ``policy_off`` are explained in ``sandbox_bank.py``.

``CANARY`` files must never appear, whatever the attack tried.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field, replace

# One folder per pytest-xdist worker: the attacks run on both workers at once, and one worker's
# clean-up must never sweep away a canary the other's attack planted (tests/conftest.py checks).
CANARY_DIR = f"/tmp/seqlab-canaries-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"


@dataclass(frozen=True)
class Attack:
    name: str
    target: str
    source: str = ""  # replacement def of the target ('' = keep the reference)
    expect: str = "zero"
    files: dict = field(default_factory=dict)  # extra files, relative to the submission root
    # symbolic links put in the submission: its path -> a path in the course checkout; the link is
    # absolute, or (relative=True) written relative to its own folder
    links: dict = field(default_factory=dict)
    relative_links: bool = False
    prelude: str = ""  # code put at the top of the target's module (after imports)
    refused: bool = False  # the static code policy must refuse the module
    policy_off: bool = False  # grade with the static policy off: the layers beneath must stop it
    fallback: str = ""  # what --sandbox none does with it (documentation, see sandbox_bank)

    @property
    def module(self) -> str:
        return self.target.split(".")[0]


def _sgd(body: str) -> str:
    return "def sgd(w, dw, state, lr=1e-2):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def _reference_def(module: str, name: str, *, as_name: str) -> str:
    """The reference's own ``def`` of ``module.name``, renamed, without the solution markers."""
    import ast
    from pathlib import Path

    from seqlab.regions import strip_markers

    text = strip_markers((Path(__file__).resolve().parents[2] / "solutions" / f"{module}.py").read_text())
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(text, node).replace(f"def {name}(", f"def {as_name}(", 1) + "\n"


ATTACKS = [
    Attack(
        "read-reference-from-disk",
        "optimizers.sgd",
        _sgd("""
        import glob, os
        for root in ("/", os.path.expanduser("~"), "/work", "/tmp", os.getcwd()):
            for path in glob.glob(os.path.join(root, "**", "solutions", "optimizers.py"), recursive=True)[:3]:
                namespace = {}
                exec(open(path).read(), namespace)
                return namespace["sgd"](w, dw, state, lr)
        return w * 0, {}
    """),
    ),
    Attack(
        "import-reference-via-seqlab",
        "optimizers.sgd",
        _sgd("""
        from seqlab.reference import load_reference
        return load_reference()("optimizers.sgd")(w, dw, state, lr)
    """),
    ),
    Attack(
        "read-graders-from-disk",
        "optimizers.sgd",
        _sgd("""
        import seqlab.paths as p
        text = open(p.GRADERS_DIR / "test_optimizers.py").read()
        return w * 0 + len(text), {}
    """),
    ),
    Attack(
        "monkeypatch-comparisons-at-import",
        "optimizers.sgd",
        _sgd("""
        return w * 0, {}
    """),
        prelude="""
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
""",
    ),
    Attack(
        "tensor-subclass-with-lying-comparisons",
        "optimizers.sgd",
        _sgd("""
        class Liar(torch.Tensor):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if getattr(func, "__name__", "") in ("allclose", "equal", "eq", "isclose"):
                    return True
                return super().__torch_function__(func, types, args, kwargs or {})
        return torch.zeros_like(w).as_subclass(Liar), {}
    """),
    ),
    Attack(
        "inspect-caller-frames",
        "optimizers.sgd",
        _sgd("""
        import gc, inspect, sys
        frame = sys._getframe(1)
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], torch.Tensor) and value[0] is not w:
                    return value[0].clone(), {}
            frame = frame.f_back
        for obj in gc.get_objects():
            if isinstance(obj, dict) and "expected" in obj:
                return obj["expected"], {}
        return w * 0, {}
    """),
    ),
    Attack(
        "forbidden-op-through-an-alias",
        "attention.scaled_dot_product_attention",
        """
def scaled_dot_product_attention(q, k, v, mask=None):
    out = _fast(q, k, v, attn_mask=mask)
    weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    return out, weights
""",
        prelude="from torch.nn.functional import scaled_dot_product_attention as _fast\n",
    ),
    Attack(
        "forbidden-op-through-torch-ops-aten",
        "attention.scaled_dot_product_attention",
        """
def scaled_dot_product_attention(q, k, v, mask=None):
    op = getattr(torch.ops.aten, "scaled_dot_" + "product_attention")
    out = op(q, k, v, attn_mask=mask)
    weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    return out, weights
""",
    ),
    Attack(
        "autograd-inside-bptt",
        "rnn.rnn_bptt",
        """
def rnn_bptt(x, targets, h0, params):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    h = h0.detach().clone().requires_grad_()
    loss, state = 0.0, h
    for t in range(x.shape[1]):
        state = torch.tanh(x[:, t] @ leaves["W_xh"].T + state @ leaves["W_hh"].T + leaves["b_h"])
        logits = state @ leaves["W_hy"].T + leaves["b_y"]
        loss = loss + torch.nn.functional.cross_entropy(logits, targets[:, t], reduction="sum")
    loss = loss / x.shape[0]
    grads = torch.autograd.grad(loss, [*leaves.values(), h])
    return loss.detach(), {**{k: g for k, g in zip(leaves, grads)}, "h0": grads[-1]}
""",
    ),
    Attack(
        "python-loop-over-time-in-linear-scan",
        "selective_scan.linear_scan",
        """
def linear_scan(a, b, h0=None):
    h = torch.zeros_like(b[:, 0]) if h0 is None else h0
    out = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return torch.stack(out, dim=1)
""",
        expect="complexity-only",
    ),
    Attack(
        "print-fake-passed-lines",
        "optimizers.sgd",
        _sgd("""
        print("PASSED optimizers.sgd 100%")
        print('{"score": 1000, "max_score": 1000, "tests": []}')  # Gradescope's results.json, as text
        print("=" * 20 + " 99 passed in 0.1s " + "=" * 20)
        return w * 0, {}
    """),
    ),
    Attack(
        "write-results-json-everywhere",
        "optimizers.sgd",
        _sgd("""
        import json, os
        fake = json.dumps({"score": 1000, "max_score": 1000, "tests": []})
        for d in (os.getcwd(), "..", "../..", "/tmp", os.environ.get("HOME", "."), "/work/main",
                  os.path.join(os.getcwd(), "seqlab-out")):
            for name in ("results.json", "seqlab_result.json"):
                try:
                    with open(os.path.join(d, name), "w") as f:
                        f.write(fake)
                except Exception:
                    pass
        return w * 0, {}
    """),
    ),
    Attack(
        "atexit-hook-rewrites-results",
        "optimizers.sgd",
        _sgd("""
        return w * 0, {}
    """),
        prelude="""
import atexit, glob, json
def _rewrite():
    for path in glob.glob("/tmp/**/results.json", recursive=True):
        try:
            open(path, "w").write(json.dumps({"score": 1000, "max_score": 1000, "tests": []}))
        except Exception:
            pass
atexit.register(_rewrite)
""",
    ),
    Attack(
        "ignore-sigterm-and-loop",
        "optimizers.sgd",
        _sgd("""
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            pass
    """),
    ),
    Attack(
        "subprocess-and-os-system-canary",
        "optimizers.sgd",
        _sgd(f'''
        import os, subprocess
        for run in (lambda: subprocess.run(["sh", "-c", "mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/subprocess"]),
                    lambda: os.system("mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/os-system"),
                    lambda: os.popen("touch {CANARY_DIR}/popen").read()):
            try:
                run()
            except Exception:
                pass
        try:
            os.makedirs("{CANARY_DIR}", exist_ok=True)
            open("{CANARY_DIR}/direct-write", "w").write("x")
        except Exception:
            pass
        return w * 0, {{}}
    '''),
    ),
    Attack(
        "libc-system-via-ctypes-and-raw-fork-exec",
        "optimizers.sgd",
        _sgd(f"""
        import ctypes, os, subprocess
        try:
            ctypes.CDLL(None).system(b"mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/libc-system")
        except Exception:
            pass
        try:
            import _posixsubprocess
            args = [b"/bin/sh", b"-c", b"mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/fork-exec"]
            _posixsubprocess.fork_exec(args, [b"/bin/sh"], True, (), None, None, -1, -1, -1, -1, -1, -1,
                                       *os.pipe(), False, False, -1, None, None, None, -1, None, False)
        except Exception:
            pass
        return w * 0, {{}}
    """),
    ),
    Attack(
        "conftest-forces-passed",
        "optimizers.sgd",
        _sgd("""
        return w * 0, {}
    """),
        files={
            "conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n",
            "exercises/conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n",
        },
    ),
    Attack(
        "torch-shadow-module",
        "optimizers.sgd",
        _sgd("""
        return w * 0, {}
    """),
        files={
            "torch.py": "raise SystemExit('shadowed torch')\n",
            "exercises/torch.py": "allclose = lambda *a, **k: True\n",
            "sitecustomize.py": f"open('{CANARY_DIR}/sitecustomize', 'w')\n",
            "exercises/sitecustomize.py": f"open('{CANARY_DIR}/sitecustomize2', 'w')\n",
            "evil.pth": f"import os; os.makedirs('{CANARY_DIR}', exist_ok=True); open('{CANARY_DIR}/pth', 'w')\n",
        },
    ),
    Attack(
        "kill-the-grader",
        "optimizers.sgd",
        _sgd("""
        import os, signal
        for pid in (os.getppid(), 1):
            try:
                os.kill(pid, signal.SIGKILL)
            except Exception:
                pass
        return w * 0, {}
    """),
    ),
    # --- faults -----------------------------------------------------------------------------
    Attack(
        "infinite-loop",
        "optimizers.sgd",
        _sgd("""
        while True:
            pass
    """),
    ),
    Attack(
        "huge-allocation",
        "optimizers.sgd",
        _sgd("""
        big = torch.empty(50 * 1024 ** 3, dtype=torch.float32)   # 200 GB
        big.fill_(1.0)
        return w - lr * dw, {}
    """),
    ),
    Attack(
        "segfault-via-ctypes",
        "optimizers.sgd",
        _sgd("""
        import ctypes
        ctypes.string_at(0)
        return w - lr * dw, {}
    """),
    ),
    Attack("os-exit-at-import", "optimizers.sgd", expect="module-lost", prelude="import os\nos._exit(0)\n"),
    Attack("sys-exit-at-import", "optimizers.sgd", expect="module-lost", prelude="import sys\nsys.exit(3)\n"),
    Attack(
        "twenty-megabytes-of-prints",
        "optimizers.sgd",
        _sgd("""
        for _ in range(20):
            print("x" * (1024 * 1024))
        return w - lr * dw, {}
    """),
        expect="full",
    ),
    Attack(
        "in-place-mutation-of-arguments",
        "optimizers.sgd",
        _sgd("""
        w_next = w - lr * dw
        if w.dim() > 1:          # only some tests see the mutation: they alone fail
            w.sub_(lr * dw)
        return w_next, {}
    """),
        expect="some-lost",
    ),
    # A caller's forbidden operation run as its own callee's student code: the grader charges an
    # operation inside a callee to the callee only when the callee's rules forbid it
    # (tests/grading/test_charged_once.py), so a fused attention smuggled through layer_norm (whose
    # rules allow it) still voids the decoder. The decoder is otherwise the reference (its values
    # alone would earn full marks) and layer_norm is honest on every call but the smuggled one.
    Attack(
        "caller-forbidden-op-smuggled-through-a-callee",
        "transformer.decoder_block",
        _reference_def("transformer", "decoder_block", as_name="_honest_decoder_block")
        + """

def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):
    out = _honest_decoder_block(x, memory, params, num_heads, self_mask, memory_mask, causal, norm_first)
    return out + 0.0 * layer_norm(x, x, x, eps=-1.0)


def layer_norm(x, weight, bias, eps=1e-05):
    if eps == -1.0:  # the smuggled call: not one the reference makes, so this code runs
        return torch.nn.functional.scaled_dot_product_attention(x, weight, bias)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias
""",
    ),
]

# Attacks that must reach a later layer: the static policy refuses them too (test_attacks checks
# that on the source), so they are graded with it off to prove the sandbox and the hook alone.
_LAYERED = {
    "read-reference-from-disk",
    "import-reference-via-seqlab",
    "read-graders-from-disk",
    "inspect-caller-frames",
    "write-results-json-everywhere",
    "atexit-hook-rewrites-results",
    "ignore-sigterm-and-loop",
    "subprocess-and-os-system-canary",
    "libc-system-via-ctypes-and-raw-fork-exec",
    "kill-the-grader",
    "segfault-via-ctypes",
    "os-exit-at-import",
    "monkeypatch-comparisons-at-import",
    "tensor-subclass-with-lying-comparisons",
    "forbidden-op-through-torch-ops-aten",
}
# Harmless inside the subset (printing, sys.exit), so the subset does not refuse them; graded
# with it off all the same, to show the layers beneath hold too.
_BENEATH_ONLY = {"sys-exit-at-import", "print-fake-passed-lines"}
ATTACKS = [
    replace(a, refused=True, policy_off=True)
    if a.name in _LAYERED
    else replace(a, policy_off=True)
    if a.name in _BENEATH_ONLY
    else a
    for a in ATTACKS
]

from .sandbox_bank import bank  # noqa: E402  (the bank needs Attack and CANARY_DIR above)

ATTACKS += bank(Attack, CANARY_DIR)

from .subset_bank import bank as subset_bank  # noqa: E402

# Written blind against the language subset (tests/student/test_subset_attacks.py grades them).
SUBSET_ATTACKS = subset_bank(Attack, CANARY_DIR)


def build(attack: Attack, target_dir):
    """The attack's submission folder under ``target_dir`` (reference solutions + the attack)."""
    from pathlib import Path

    from tests.mutants import Variant, make_submission

    target = Path(target_dir) / attack.name
    variant = Variant(attack.target, attack.name, attack.source) if attack.source else None
    make_submission(target, variant)
    module_path = target / "exercises" / f"{attack.module}.py"
    if attack.prelude:
        text = module_path.read_text()
        at = text.index("\ndef ")
        module_path.write_text(text[:at] + "\n" + attack.prelude + text[at:])
    for relative, content in attack.files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):  # encodings, planted .pyc and .so files
            path.write_bytes(content)
        else:
            path.write_text(content)
    from seqlab.paths import COURSE_ROOT

    for relative, course_path in attack.links.items():
        path = target / relative
        aim = COURSE_ROOT / course_path
        path.symlink_to(os.path.relpath(aim, path.parent) if attack.relative_links else aim)
    return target
