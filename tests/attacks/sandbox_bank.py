"""Attacks on the trust boundary itself: guard and recorder tampering, complexity gaming,
file-system, process and network routes, and forbidden operations reached by another name.

Every attack is graded against the real sandbox (tests/student/test_attacks.py). Two fields say how:

* ``refused``: the language subset (seqlab/subset/, checked in the parent) must
  refuse the module before it loads. test_attacks checks that verdict on the source, and
  grades the attack normally: the module then scores 0 (``expect="refused"``);
* ``policy_off``: grade with the static policy switched off, so the hostile code really runs and
  the layers beneath it (the bubblewrap sandbox, the seccomp filter, the audit hook, the parent's
  own timing) must stop it on their own. A route that works raises ``LEAK`` (its message then
  appears in the report, and the test fails on it) or leaves a canary file.

``fallback`` documents what ``--sandbox none`` (no bubblewrap: the audit hook and the static
policy only) does with the same attack; docs/threat-model.md is written from it.
"""

from __future__ import annotations

import textwrap

from .scan_variants import LOOPS, OUTSIDE_THE_SUBSET

LEAK = "SEQLAB-LEAK"
FAKE_TOKEN = "ghp_seqlabFakeCiToken0123456789"  # put in the grader's environment by the tests


def _sgd(body: str) -> str:
    return "def sgd(w, dw, state, lr=1e-2):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def _layer_norm(body: str) -> str:
    return (
        "def layer_norm(x, weight, bias, eps=1e-5):\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
        + "\n"
    )


def _scan(body: str) -> str:
    return "def linear_scan(a, b, h0=None):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


_EXEC_SGD = """
def _use(text):
    namespace = {"torch": torch}
    exec(text.split("def sgd", 1)[0].split("import torch", 1)[-1] + "def sgd" + text.split("def sgd", 1)[1], namespace)
    return namespace["sgd"]
"""


def bank(Attack, CANARY_DIR):
    """The attacks of these families, built with tests.attacks.Attack."""
    course = "/work"  # where a course checkout usually lives here; the attacks also walk up from seqlab
    return [
        # --- guard and recorder tampering -------------------------------------------------------
        Attack(
            "gc-empties-the-audit-hooks-closure",
            "optimizers.sgd",
            _sgd(f'''
            import gc, glob, os
            for obj in gc.get_objects():
                cells = getattr(obj, "__closure__", None) or ()
                for cell in cells:
                    try:
                        value = cell.cell_contents
                    except ValueError:
                        continue
                    if isinstance(value, (set, frozenset, tuple, list)) and value:
                        try:
                            cell.cell_contents = type(value)()
                        except Exception:
                            pass
            for path in glob.glob("{course}/**/solutions/optimizers.py", recursive=True)[:3]:
                try:
                    return _use(open(path).read())(w, dw, state, lr)
                except Exception:
                    pass
            return w * 0, {{}}
        '''),
            prelude=_EXEC_SGD,
            refused=True,
            policy_off=True,
            fallback="NOT stopped in principle: gc reaches the hook's closure and its PathPolicy, whose lists "
            "can be emptied; only the static policy (gc is refused) stands in front of it",
        ),
        Attack(
            "reimported-posixsubprocess-starts-a-shell",
            "optimizers.sgd",
            _sgd(f"""
            import os, sys
            sys.modules.pop("_posixsubprocess", None)
            sys.modules.pop("subprocess", None)
            import subprocess
            try:
                subprocess.run(["/bin/sh", "-c", "mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/reimported"])
            except Exception:
                pass
            return w * 0, {{}}
        """),
            refused=True,
            policy_off=True,
            fallback="re-importing gets the real fork_exec back; the subprocess.Popen audit event is still refused",
        ),
        Attack(
            "ctypes-call-through-a-function-address",
            "optimizers.sgd",
            _sgd(f"""
            import ctypes
            try:
                libc = ctypes.CDLL("libc.so.6")
                address = ctypes.cast(libc.system, ctypes.c_void_p).value
                system = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)(address)
                system(b"mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/ctypes-address")
            except Exception:
                pass
            return w * 0, {{}}
        """),
            refused=True,
            policy_off=True,
            fallback="ctypes.dlopen and ctypes.call_function are refused audit events (both guards now)",
        ),
        Attack(
            "disable-torch-function-hides-fused-attention",
            "attention.scaled_dot_product_attention",
            """
def scaled_dot_product_attention(q, k, v, mask=None):
    fused = getattr(torch.nn.functional, "scaled_dot_" + "product_attention")
    with torch._C.DisableTorchFunction():
        out = fused(q, k, v, attn_mask=mask)
    weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    return out, weights
""",
            expect="refused",
            refused=True,
            fallback="refused by the static policy (torch._C, a computed getattr)",
        ),
        Attack(
            "popped-mode-stack-hides-layer-norm",
            "transformer.layer_norm",
            _layer_norm("""
            from torch.utils._python_dispatch import _pop_mode_temporarily
            from torch.overrides import _pop_mode
            mode = _pop_mode()
            try:
                return torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, eps)
            finally:
                torch.overrides._push_mode(mode)
        """),
            expect="refused",
            refused=True,
            fallback="refused by the static policy (private torch modules)",
        ),
        Attack(
            "no-op-saved-tensors-hooks-hide-autograd",
            "rnn.rnn_bptt",
            """
def rnn_bptt(x, targets, h0, params):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    h = h0.detach().clone().requires_grad_()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        loss, state = 0.0, h
        for t in range(x.shape[1]):
            state = torch.tanh(x[:, t] @ leaves["W_xh"].T + state @ leaves["W_hh"].T + leaves["b_h"])
            logits = state @ leaves["W_hy"].T + leaves["b_y"]
            loss = loss - torch.log_softmax(logits, -1).gather(1, targets[:, t:t + 1]).sum()
        loss = loss / x.shape[0]
    grads = torch.autograd.grad(loss, [*leaves.values(), h])
    return loss.detach(), {**{k: g for k, g in zip(leaves, grads)}, "h0": grads[-1]}
""",
            fallback="the same: torch.autograd.* is named in the source, seen by the parent's scan",
        ),
        Attack(
            "forward-mode-ad-for-bptt",
            "rnn.rnn_bptt",
            """
def rnn_bptt(x, targets, h0, params):
    import torch.autograd.forward_ad as fwAD
    def loss_of(p, h_start):
        loss, state = 0.0, h_start
        for t in range(x.shape[1]):
            state = torch.tanh(x[:, t] @ p["W_xh"].T + state @ p["W_hh"].T + p["b_h"])
            logits = state @ p["W_hy"].T + p["b_y"]
            loss = loss - torch.log_softmax(logits, -1).gather(1, targets[:, t:t + 1]).sum()
        return loss / x.shape[0]
    grads = {}
    for name, value in [*params.items(), ("h0", h0)]:
        flat = torch.zeros_like(value).reshape(-1)
        for i in range(flat.numel()):
            tangent = torch.zeros_like(flat)
            tangent[i] = 1.0
            with fwAD.dual_level():
                dual = fwAD.make_dual(value, tangent.reshape(value.shape))
                p = dict(params)
                if name == "h0":
                    out = loss_of(p, dual)
                else:
                    p[name] = dual
                    out = loss_of(p, h0)
                flat[i] = fwAD.unpack_dual(out).tangent
        grads[name] = flat.reshape(value.shape)
    return loss_of(params, h0), grads
""",
            fallback="the same: torch.autograd.forward_ad is named in the source",
        ),
        # --- complexity gaming ----------------------------------------------------------------------
        Attack(
            "numpy-loop-in-linear-scan",
            "selective_scan.linear_scan",
            _scan("""
            import numpy as np
            A, B = a.detach().cpu().numpy(), b.detach().cpu().numpy()
            h = np.zeros_like(B[:, 0]) if h0 is None else h0.detach().cpu().numpy()
            out = np.empty_like(B)
            for t in range(A.shape[1]):
                h = A[:, t] * h + B[:, t]
                out[:, t] = h
            return torch.from_numpy(out).to(device=b.device, dtype=torch.promote_types(a.dtype, b.dtype))
        """),
            expect="complexity-only",
            fallback="the same: the parent times it",
        ),
        Attack(
            "loop-padded-with-dummy-ops",
            "selective_scan.linear_scan",
            _scan("""
            # ~5000 fixed dummy operations make the counts at T=64 and T=1024 look flat
            pad = torch.zeros(1, dtype=a.dtype)
            for _ in range(5000):
                pad = pad + 0
            h = torch.zeros_like(b[:, 0]) if h0 is None else h0
            out = []
            for t in range(a.shape[1]):
                h = a[:, t] * h + b[:, t]
                out.append(h)
            return torch.stack(out, dim=1) + pad
        """),
            expect="complexity-only",
            fallback="the same: the parent times it",
        ),
        # loops that a wall-clock rule lets through: a loop over floats on one channel is
        # within its margin, a cache wins from the second round on the same input, and the ping
        # is looked up with getattr (tests/attacks/scan_variants.py)
        *[
            Attack(
                name,
                "selective_scan.linear_scan",
                LOOPS[name][1],
                prelude=LOOPS[name][0],
                expect="complexity-only",
                # graded beneath the subset where it refuses them, for the ping
                refused=name in OUTSIDE_THE_SUBSET,
                policy_off=name in OUTSIDE_THE_SUBSET,
                fallback="the same: the parent measures the child's CPU time",
            )
            for name in (
                "loop-over-python-floats",
                "loop-with-a-cache-keyed-on-the-input",
                "loop-hidden-in-a-module-getattr",
            )
        ],
        Attack(
            "loop-hidden-from-the-op-recorder",
            "selective_scan.linear_scan",
            _scan("""
            with torch._C.DisableTorchFunction():
                h = torch.zeros_like(b[:, 0]) if h0 is None else h0
                out = []
                for t in range(a.shape[1]):
                    h = a[:, t] * h + b[:, t]
                    out.append(h)
                return torch.stack(out, dim=1)
        """),
            expect="refused",
            refused=True,
            fallback="refused by the static policy (torch._C)",
        ),
        # --- file-system routes (policy off: the sandbox alone must stop them) ----------------------
        Attack(
            "dir-fd-below-the-course",
            "optimizers.sgd",
            _sgd(f'''
            import os, seqlab
            root = os.path.dirname(os.path.dirname(os.path.abspath(seqlab.__file__)))
            try:
                fd = os.open(root, os.O_RDONLY)
                inner = os.open("solutions/optimizers.py", os.O_RDONLY, dir_fd=fd)
                text = os.read(inner, 1 << 20).decode()
            except Exception:
                return w * 0, {{}}
            raise RuntimeError("{LEAK} dir_fd read " + str(len(text)))
        '''),
            refused=True,
            policy_off=True,
            fallback="refused: opening a directory above a protected root",
        ),
        *[
            Attack(
                f"{kind}-symlink-in-exercises-to-the-solutions",
                "optimizers.sgd",
                _sgd(f'''
                import os
                here = os.path.dirname(os.path.abspath(__file__))
                try:
                    text = open(os.path.join(here, "reference.py")).read()
                except Exception:
                    return w * 0, {{}}
                raise RuntimeError("{LEAK} a link in exercises/ read " + str(len(text)))
            '''),
                # the submission's own folder holds the link: reading the submission refuses it
                # before anything runs (the sandbox only ever sees a copy of regular files)
                links={"exercises/reference.py": "solutions/optimizers.py"},
                relative_links=kind == "relative",
                expect="unreadable",
                refused=True,
                policy_off=True,
                fallback="refused: the audit hook resolves the link to a protected path",
            )
            for kind in ("absolute", "relative")
        ],
        Attack(
            "hard-link-into-scratch",
            "optimizers.sgd",
            _sgd(f'''
            import os, seqlab
            root = os.path.dirname(os.path.dirname(os.path.abspath(seqlab.__file__)))
            try:
                os.link(os.path.join(root, "solutions", "optimizers.py"), "copy.py")
                text = open("copy.py").read()
            except Exception:
                return w * 0, {{}}
            raise RuntimeError("{LEAK} hard link " + str(len(text)))
        '''),
            refused=True,
            policy_off=True,
            fallback="refused: os.link of a protected path",
        ),
        Attack(
            "rename-out-of-scratch",
            "optimizers.sgd",
            _sgd(f'''
            import os
            open("note.txt", "w").write("x")
            try:   # the canary check of test_attacks looks for it on the grader's side
                os.makedirs("{CANARY_DIR}", exist_ok=True)
                os.rename("note.txt", "{CANARY_DIR}/renamed")
            except OSError:
                pass
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="refused: renaming changes both paths, and the target is outside the scratch directory",
        ),
        Attack(
            "reads-git-objects",
            "optimizers.sgd",
            _sgd(f'''
            import glob, os, zlib, seqlab
            root = os.path.dirname(os.path.dirname(os.path.abspath(seqlab.__file__)))
            for path in glob.glob(os.path.join(root, ".git", "objects", "??", "*"))[:20000]:
                try:
                    text = zlib.decompress(open(path, "rb").read()).decode("utf-8", "replace")
                except Exception:
                    continue
                if "def sgd(" in text and "BEGIN SOLUTION" in text:
                    raise RuntimeError("{LEAK} git object " + path)
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="refused: .git is a protected path (both guards now)",
        ),
        Attack(
            "reads-earlier-output-folders",
            "optimizers.sgd",
            _sgd(f'''
            import glob, os, seqlab
            root = os.path.dirname(os.path.dirname(os.path.abspath(seqlab.__file__)))
            found = []
            for pattern in ("**/seqlab-out/*.json", "**/seqlab_result.json", "**/gradebook.csv"):
                found += glob.glob(os.path.join(root, pattern), recursive=True)[:5]
                found += glob.glob(os.path.join("/tmp", pattern), recursive=True)[:5]
            readable = []
            for path in found:
                try:
                    readable.append(len(open(path).read()))
                except Exception:
                    pass
            if readable:
                raise RuntimeError("{LEAK} earlier outputs " + str(readable))
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="NOT stopped: the hook protects the current output folder only; earlier ones are readable",
        ),
        Attack(
            "parent-environ-through-proc",
            "optimizers.sgd",
            _sgd(f'''
            import os
            for pid in {{os.getppid(), 1}} | {{int(p) for p in os.listdir("/proc") if p.isdigit()}}:
                try:
                    env = open(f"/proc/{{pid}}/environ", "rb").read()
                except Exception:
                    continue
                if b"{FAKE_TOKEN}" in env:
                    raise RuntimeError("{LEAK} token of pid " + str(pid) + ": {FAKE_TOKEN}")
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="NOT stopped: /proc/<parent>/environ is readable (same uid); the child's own "
            "environment is minimal, but the parent's is not",
        ),
        Attack(
            "parent-memory-through-proc",
            "optimizers.sgd",
            _sgd(f'''
            import os, re
            pid = os.getppid()
            try:
                maps = open(f"/proc/{{pid}}/maps").read().splitlines()
                with open(f"/proc/{{pid}}/mem", "rb") as mem:
                    for line in maps[:400]:
                        start, end = (int(x, 16) for x in line.split()[0].split("-"))
                        if "rw" not in line.split()[1] or end - start > 1 << 26:
                            continue
                        try:
                            mem.seek(start)
                            chunk = mem.read(end - start)
                        except OSError:
                            continue
                        if b"{FAKE_TOKEN}" in chunk or b"BEGIN SOLUTION" in chunk:
                            raise RuntimeError("{LEAK} parent memory")
            except RuntimeError:
                raise
            except Exception:
                pass
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="stopped by the kernel when ptrace is restricted (Yama ptrace_scope >= 1), else NOT stopped",
        ),
        # --- process and network routes (policy off) ------------------------------------------------
        Attack(
            "socket-to-the-network-and-localhost",
            "optimizers.sgd",
            _sgd(f'''
            import socket
            for address in (("1.1.1.1", 53), ("127.0.0.1", 22), ("127.0.0.1", 8888)):
                try:
                    s = socket.create_connection(address, timeout=0.5)
                    s.close()
                    raise RuntimeError("{LEAK} connected to " + str(address))
                except OSError:
                    pass
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="refused: socket audit events (both guards now)",
        ),
        Attack(
            "ipc-objects-that-outlive-the-process",
            "optimizers.sgd",
            _sgd(f'''
            import ctypes, os, sys
            # the audit hook reads its lists from its module: rebound, ctypes calls pass it
            sys.modules["seqlab.student.policy"].BLOCKED_EVENTS = frozenset()
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
            made = {{
                "shm": libc.shmget(0x5E91AB, 4096, 0o1600),
                "msg": libc.msgget(0x5E91AB, 0o1600),
                "sem": libc.semget(0x5E91AB, 1, 0o1600),
                "mq": libc.mq_open(b"/seqlab-left", os.O_CREAT | os.O_RDWR, 0o600, None),
            }}
            if any(handle >= 0 for handle in made.values()):
                raise RuntimeError("{LEAK} an object the next submission could read: " + str(made))
            return w * 0, {{}}
        '''),
            refused=True,
            policy_off=True,
            fallback="NOT stopped once past the static policy (which refuses sys and ctypes): the IPC calls "
            "reach the host's namespace; the sandbox's seccomp filter refuses them",
        ),
        Attack(
            "subprocess-writes-a-canary",
            "optimizers.sgd",
            _sgd(f"""
            import subprocess
            try:
                subprocess.run(["/bin/sh", "-c", "mkdir -p {CANARY_DIR}; touch {CANARY_DIR}/subprocess2"], timeout=5)
            except Exception:
                pass
            return w * 0, {{}}
        """),
            refused=True,
            policy_off=True,
            fallback="refused: subprocess.Popen audit event",
        ),
        Attack(
            "fork-writes-a-canary",
            "optimizers.sgd",
            _sgd(f'''
            import os
            try:
                pid = os.fork()
            except OSError:
                return w * 0, {{}}
            if pid == 0:
                os.makedirs("{CANARY_DIR}", exist_ok=True)
                open("{CANARY_DIR}/forked", "w").write("x")
                os._exit(0)
            raise RuntimeError("{LEAK} forked " + str(pid))
        '''),
            refused=True,
            policy_off=True,
            fallback="refused: os.fork audit event (and RLIMIT_NPROC)",
        ),
        Attack(
            "kill-the-parent-and-everyone",
            "optimizers.sgd",
            _sgd("""
            import os, signal
            for pid in (os.getppid(), -1, 1):
                try:
                    os.kill(pid, signal.SIGKILL)
                except Exception:
                    pass
            return w * 0, {}
        """),
            refused=True,
            policy_off=True,
            fallback="refused: os.kill audit event (without the sandbox kill(-1) would reach every process of the uid)",
        ),
        Attack(
            "prlimit-lowers-the-fork-servers-limits",
            "optimizers.sgd",
            _sgd(f'''
            import ctypes, os, resource, sys
            # past the audit hook (its lists are read from its module), then the server's address
            # space cut below what a child needs: every child it forks after would fail to start
            sys.modules["seqlab.student.policy"].BLOCKED_EVENTS = frozenset()
            lowered = []
            for pid in (os.getppid(), 1):
                for which in (resource.RLIMIT_AS, resource.RLIMIT_NOFILE):
                    try:
                        resource.prlimit(pid, which, (1 << 24, 1 << 24) if which == resource.RLIMIT_AS else (8, 8))
                        lowered.append((pid, which))
                    except OSError:
                        pass
            libc = ctypes.CDLL(None, use_errno=True)
            limit = (ctypes.c_uint64 * 2)(1 << 24, 1 << 24)
            libc.syscall.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
            # the raw syscall, with high bits above the pid the kernel reads (32 bits of it)
            if libc.syscall(302, (1 << 32) | os.getppid(), resource.RLIMIT_AS, limit, None) == 0:
                lowered.append("raw")
            if lowered:
                raise RuntimeError("{LEAK} lowered the limits of " + str(lowered))
            os._exit(0)  # the next call needs a fresh child: forked by a server that still works
        '''),
            refused=True,
            policy_off=True,
            fallback="NOT stopped without the sandbox: the child is the grader's own user and can lower "
            "the limits of the grading process itself; in the sandbox the forked child's own filter "
            "refuses prlimit64 on any process but itself, and the server retires on any changed limit",
        ),
        # --- forbidden operations by what they compute ----------------------------------------------
        Attack(
            "group-norm-with-one-group-is-layer-norm",
            "transformer.layer_norm",
            _layer_norm("""
            shape = x.shape
            flat = x.reshape(-1, 1, shape[-1])
            out = torch.nn.functional.group_norm(flat, 1, eps=eps).reshape(shape)
            return out * weight + bias
        """),
            fallback="the same: the parent's scan of the source names group_norm",
        ),
        Attack(
            "instance-norm-is-layer-norm",
            "transformer.layer_norm",
            _layer_norm("""
            shape = x.shape
            out = torch.nn.functional.instance_norm(x.reshape(1, -1, shape[-1]), eps=eps).reshape(shape)
            return out * weight + bias
        """),
            fallback="the same",
        ),
        Attack(
            "rms-norm-of-the-centred-input-is-layer-norm",
            "transformer.layer_norm",
            _layer_norm("""
            centred = x - x.mean(-1, keepdim=True)
            return torch.nn.functional.rms_norm(centred, x.shape[-1:], weight, eps) + bias
        """),
            fallback="the same",
        ),
        Attack(
            "group-norm-through-getattr-with-a-literal",
            "transformer.layer_norm",
            _layer_norm("""
            norm = getattr(torch.nn.functional, "group_norm")
            shape = x.shape
            return norm(x.reshape(-1, 1, shape[-1]), 1, eps=eps).reshape(shape) * weight + bias
        """),
            fallback="the same: a literal getattr is resolved by the scan",
        ),
        Attack(
            "aten-native-group-norm",
            "transformer.layer_norm",
            _layer_norm("""
            shape = x.shape
            n = x.reshape(-1, shape[-1]).shape[0]
            out = torch.ops.aten.native_group_norm(x.reshape(n, 1, shape[-1]), None, None, n, 1, shape[-1], 1, eps)[0]
            return out.reshape(shape) * weight + bias
        """),
            expect="refused",
            refused=True,  # torch.ops is outside the subset: the raw registry names every kernel
            fallback="the same",
        ),
        Attack(
            "get-total-norm-for-clip-grad-norm",
            "optimizers.clip_grad_norm",
            """
def clip_grad_norm(grads, max_norm):
    if not grads:
        return [], torch.tensor(0.0)
    total = torch.nn.utils.get_total_norm(grads)
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    return [g * scale for g in grads], total
""",
            fallback="the same",
        ),
        Attack(
            "embedding-bag-for-embed-tokens",
            "positional.embed_tokens",
            """
def embed_tokens(tokens, embedding, pe):
    B, T = tokens.shape
    x = torch.nn.functional.embedding_bag(tokens.reshape(-1, 1), embedding, mode="sum").reshape(B, T, -1)
    return x * embedding.shape[-1] ** 0.5 + pe[:T]
""",
            fallback="the same",
        ),
    ]
