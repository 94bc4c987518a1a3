"""The blind bank's attacks on the oracle in the child, on the labs, and on everything else (see
tests/attacks/blind_integrity_bank.py)."""

from __future__ import annotations

from tests.attacks.blind_integrity.entries_a import WATCH_FINDER as _WATCH
from tests.attacks.blind_integrity_bank import ADAM_BODY, Blind

# --- the oracle: a declared callee's stand-in holds the recorded answers of the whole call ------

# The session behind a stand-in, through match class patterns (C-level attribute reads).
MATCH_CLOSURE = """
def _recorded(callee, fn):
    match fn:
        case object(__closure__=cells) if cells:
            pass
        case _:
            return []
    for cell in cells:
        match cell:
            case object(cell_contents=object(pending=pending)):
                return list(pending.get(callee, []))
    return []
"""

# Frames reached from a generator's own frame, walked by match patterns to the session.
GEN_FRAMES = """
def _session_above():
    box = {}

    def probe():
        match box["g"]:
            case object(gi_frame=object(f_back=frame)):
                yield frame

    box["g"] = probe()
    frame = next(box["g"])
    while frame is not None:
        match frame:
            case object(f_locals=loc, f_back=up):
                pass
        for value in list(loc.values()):
            if hasattr(value, "pending") and hasattr(value, "matched"):
                return value
        frame = up
    return None
"""

# Unrestricted code (numpy.testing.measure) that finds the session by walking the frames.
MEASURE_FIND_SESSION = (
    '"import sys\\n"\n'
    '    "global _SESSION\\n"\n'
    '    "f = sys._getframe(0)\\n"\n'
    '    "while f is not None:\\n"\n'
    "    \"    hit = [v for v in f.f_locals.values() if type(v).__name__ == 'CalleeSession']\\n\"\n"
    '    "    if hit:\\n"\n'
    '    "        _SESSION = hit[0]\\n"\n'
    '    "        break\\n"\n'
    '    "    f = f.f_back\\n"'
)


def _torch_adam_helper(get: str) -> str:
    """A module-level adam by torch.optim.Adam (``get`` binds ``Opt``) for a lab to use."""
    return (
        "def _adam_by_torch(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n    "
        + get.strip()
        + "\n"
        + ADAM_BODY.strip("\n")
        + "\n"
    )


ADAM_IMPORT = "from .optimizers import adam\n"

ENTRIES = [
    Blind(
        "match-pattern-reads-the-stand-in-closure",
        "oracle",
        "rnn.rnn_forward",
        "def rnn_forward(x, h0, W_xh, W_hh, b_h):\n"
        '    found = _recorded("rnn.rnn_cell", rnn_cell)\n'
        "    if found:\n"
        '        return torch.stack([e["result"] for e in found], 1)\n'
        "    return torch.zeros(x.shape[0], x.shape[1], h0.shape[-1], dtype=x.dtype)\n",
        prelude=MATCH_CLOSURE,
    ),
    Blind(
        "failed-callee-traceback-frames-by-match",
        "oracle",
        "rnn.birnn_forward",
        """
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    tb, entries = None, []
    try:
        rnn_forward(None, None, None, None, None)
    except Exception:
        tb = sys.exc_info()[2]
    while tb is not None and not entries:
        match tb:
            case object(tb_frame=object(f_locals=loc), tb_next=nxt):
                pass
        match loc.get("session"):
            case object(pending=pending):
                entries = list(pending.get("rnn.rnn_forward", []))
        tb = nxt
    fwd = [e["result"] for e in entries if torch.equal(e["arguments"]["x"], x)]
    bwd = [e["result"] for e in entries if not torch.equal(e["arguments"]["x"], x)]
    return torch.cat((fwd[0], torch.flip(bwd[0] if bwd else fwd[-1], dims=(1,))), -1)
""",
        prelude="import sys",
    ),
    Blind(
        "reduce-getattr-reads-the-closure",
        "oracle",
        "attention.multi_head_attention",
        """
def multi_head_attention(query, key, value, params, num_heads, mask=None):
    cells = reduce(getattr, ["__clos" + "ure__"], scaled_dot_product_attention)
    contents = [reduce(getattr, ["cell_" + "contents"], c) for c in cells]
    session = next(s for s in contents if hasattr(s, "pending"))
    out, w = session.pending["attention.scaled_dot_product_attention"][0]["result"]
    return out.transpose(1, 2).flatten(-2) @ params["W_o"].T + params["b_o"], w
""",
        prelude="from functools import reduce",
    ),
    Blind(
        "numpy-measure-reads-the-closure",
        "oracle",
        "lstm_gru.gru_forward",
        "def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):\n"
        '    np.testing.measure("global _SEEN\\n_SEEN = [c.cell_contents for c in gru_cell.__closure__]", 1)\n'
        '    session = next(s for s in _SEEN if hasattr(s, "pending"))\n'
        '    hs = [e["result"] for e in session.pending["lstm_gru.gru_cell"]]\n'
        "    return torch.stack(hs, 1), hs[-1]\n",
        prelude="import numpy as np",
    ),
    Blind(
        "setstate-patches-torch-equal-so-any-call-matches",
        "oracle",
        "lstm_gru.lstm_forward",
        "def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):\n"
        '    torch.nn.Module.__setstate__(torch, {"equal": lambda a, b: True})\n'
        "    hs, state = [], (h0, c0)\n"
        "    for t in range(x.shape[1]):\n"
        "        state = lstm_cell(x[:, t] * 0, h0 * 0, c0 * 0, W_ih * 0, W_hh * 0, b_ih * 0, b_hh * 0)\n"
        "        hs.append(state[0])\n"
        "    return torch.stack(hs, 1), state\n",
    ),
    Blind(
        "numpy-measure-patches-torch-equal-so-any-call-matches",
        "oracle",
        "lstm_gru.lstm_forward",
        "def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):\n"
        '    np.testing.measure("import torch\\ntorch.equal = lambda a, b: True", 1)\n'
        "    hs, state = [], (h0, c0)\n"
        "    for t in range(x.shape[1]):\n"
        "        state = lstm_cell(x[:, t] * 0, h0 * 0, c0 * 0, W_ih * 0, W_hh * 0, b_ih * 0, b_hh * 0)\n"
        "        hs.append(state[0])\n"
        "    return torch.stack(hs, 1), state\n",
        prelude="import numpy as np",
    ),
    Blind(
        "format-fields-walk-a-traceback-to-the-session",
        "oracle",
        "lstm_gru.gru_forward",
        """
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    torch.set_printoptions(precision=17, threshold=1 << 30, linewidth=1 << 30)
    try:
        gru_cell(None, None, None, None, None, None)
    except Exception:
        tb = sys.exc_info()[2]
    text = ("{0.tb_" + "next.tb_" + "frame.f_" + "locals}").format(tb)
    rows = [r for r in text.split("'result': tensor(")[1:]]
    hs = []
    for r in rows:
        body = r.split(", dtype=")[0].replace("[", " ").replace("]", " ").replace(",", " ")
        vals = [float(v) for v in body.split()]
        hs.append(torch.tensor(vals, dtype=x.dtype).reshape(h0.shape))
    return torch.stack(hs, 1), hs[-1]
""",
        prelude="import sys",
    ),
    Blind(
        "generator-frame-walk-finds-the-session",
        "oracle",
        "transformer.encoder_block",
        "def encoder_block(x, params, num_heads, mask=None, norm_first=False):\n"
        "    p = _session_above().pending\n"
        "    if not norm_first:\n"
        '        return p["transformer.layer_norm"][-1]["result"]\n'
        '    return x + p["attention.multi_head_attention"][0]["result"][0] + p["transformer.feed_forward"][-1]["result"]\n',
        prelude=GEN_FRAMES,
    ),
    Blind(
        "reduce-getattr-walks-a-traceback",
        "oracle",
        "rnn.rnn_forward",
        """
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    tb = None
    try:
        rnn_cell(None, None, None, None, None)
    except Exception:
        tb = sys.exc_info()[2]
    while tb is not None:
        loc = reduce(getattr, ["tb_" + "frame", "f_" + "locals"], tb)
        s = loc.get("session")
        if s is not None:
            return torch.stack([e["result"] for e in s.pending["rnn.rnn_cell"]], 1)
        tb = reduce(getattr, ["tb_" + "next"], tb)
    return torch.zeros(x.shape[0], x.shape[1], h0.shape[-1], dtype=x.dtype)
""",
        prelude="import sys",
    ),
    Blind(
        "numpy-measure-walks-frames-to-the-session",
        "oracle",
        "transformer.decoder_block",
        "def decoder_block(x, memory, params, num_heads, self_mask=None, memory_mask=None, causal=True, norm_first=False):\n"
        "    np.testing.measure(\n    " + MEASURE_FIND_SESSION + ",\n        1,\n    )\n"
        "    p = _SESSION.pending\n"
        "    if not norm_first:\n"
        '        return p["transformer.layer_norm"][-1]["result"]\n'
        '    mha = [e["result"][0] for e in p["attention.multi_head_attention"]]\n'
        '    return x + mha[0] + mha[1] + p["transformer.feed_forward"][-1]["result"]\n',
        prelude="import numpy as np",
    ),
    Blind(
        "own-exception-frames-walk-up-to-the-session",
        "oracle",
        "rnn.birnn_forward",
        """
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    try:
        raise LookupError("probe")
    except LookupError:
        tb = sys.exc_info()[2]
    match tb:
        case object(tb_frame=frame):
            pass
    entries = []
    while frame is not None and not entries:
        match frame:
            case object(f_locals=loc, f_back=up):
                pass
        for value in list(loc.values()):
            match value:
                case object(pending=pending, matched=_):
                    entries = list(pending.get("rnn.rnn_forward", []))
        frame = up
    fwd = [e["result"] for e in entries if torch.equal(e["arguments"]["x"], x)]
    bwd = [e["result"] for e in entries if not torch.equal(e["arguments"]["x"], x)]
    return torch.cat((fwd[0], torch.flip(bwd[0] if bwd else fwd[-1], dims=(1,))), -1)
""",
        prelude="import sys",
    ),
    # --- labs that pass without training by the student's own functions ---------------------------
    Blind(
        "lab-recall-torch-adam-by-tuple-alias",
        "labs",
        "lstm_gru.train_recall",
        replace=((ADAM_IMPORT, "adam = _adam_by_torch\n"),),
        prelude="(_TORCH_ADAM,) = (torch.optim.Adam,)\n\n\n" + _torch_adam_helper("Opt = _TORCH_ADAM"),
        labs=True,
    ),
    Blind(
        "lab-reverser-torch-adam-by-class-attribute",
        "labs",
        "transformer.train_reverser",
        replace=((ADAM_IMPORT, "adam = _adam_by_torch\n"),),
        prelude="class _Opt:\n    kind = torch.optim.Adam\n\n\n" + _torch_adam_helper("Opt = _Opt.kind"),
        labs=True,
    ),
    Blind(
        "lab-copy-torch-adam-defined-by-numpy-measure",
        "labs",
        "selective_scan.train_selective_copy",
        replace=((ADAM_IMPORT, "adam = _adam_by_torch\n"),),
        prelude="import numpy as np\n\n_SRC = "
        + repr("import torch\n" + _torch_adam_helper("Opt = torch.optim.Adam"))
        + "\nnp.testing.measure(_SRC, 1)\n",
        labs=True,
    ),
    Blind(
        "lab-char-rnn-trains-by-backward",
        "labs",
        "rnn.train_char_rnn",
        replace=(
            (
                "loss, grads, h_last = truncated_bptt(x, window[:, 1:], h, theta, seq_len)",
                "loss, grads, h_last = _auto_chunk(x, window[:, 1:], h, theta)",
            ),
        ),
        prelude="""
def _auto_chunk(x, targets, h0, params):
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
    leaves = [params[k].detach().clone() for k in keys] + [h0.detach().clone()]
    for leaf in leaves:
        leaf.requires_grad = True
    with torch.set_grad_enabled(True):
        W_xh, W_hh, b_h, W_hy, b_y, h = leaves
        loss = 0.0
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] @ W_xh.T + h @ W_hh.T + b_h)
            loss = loss - (h @ W_hy.T + b_y).log_softmax(-1).gather(1, targets[:, t:t + 1]).sum() / x.shape[0]
        loss.backward()
    return loss.detach(), dict(zip(keys + ("h0",), [leaf.grad.detach() for leaf in leaves])), h.detach()
""",
        labs=True,
    ),
    Blind(
        "lab-sampling-by-a-recurrent-kernel-in-a-class",
        "labs",
        "rnn.sample_chars",
        replace=(
            (
                "h = rnn_cell(F.one_hot(tok, V).to(h.dtype), h, *_cell_params(params))",
                "h = _Cell.tanh(F.one_hot(tok, V).to(h.dtype), h, *_cell_params(params))",
            ),
        ),
        prelude="class _Cell:\n    tanh = staticmethod(lambda x, h, a, b, c: torch.rnn_tanh_cell(x, h, a, b, c, None))\n",
        labs=True,
    ),
    Blind(
        "lab-replay-honest-then-torch-adam",
        "labs",
        "lstm_gru.train_recall",
        replace=(
            (ADAM_IMPORT, "from .optimizers import adam as _own_adam\n"),
            (
                "stepped = {k: adam(theta[k], grads[k], states[k], lr=lr) for k in keys}",
                "adam = _own_adam if steps <= 3 else _adam_by_torch\n"
                "        stepped = {k: adam(theta[k], grads[k], states[k], lr=lr) for k in keys}",
            ),
        ),
        prelude="class _Pick:\n    opt = torch.optim.Adam\n\n\n" + _torch_adam_helper("Opt = _Pick.opt"),
        labs=True,
    ),
    Blind(
        "lab-gradient-norms-through-recurrent-kernels",
        "labs",
        "lstm_gru.input_gradient_norms",
        replace=(
            (
                "(dx,) = torch.autograd.grad(_last_hidden(kind, xs, h0, params).sum(), xs)",
                "(dx,) = torch.autograd.grad(_KernLast.run(kind, xs, h0, params).sum(), xs)",
            ),
        ),
        prelude="""
class _KernLast:
    @staticmethod
    def run(kind, x, h, p):
        c = torch.zeros_like(h)
        for t in range(x.shape[1]):
            if kind == "rnn":
                h = torch.rnn_tanh_cell(x[:, t], h, p["W_xh"], p["W_hh"], p["b_h"], None)
            elif kind == "lstm":
                h, c = torch.lstm_cell(x[:, t], (h, c), p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
            else:
                h = torch.gru_cell(x[:, t], h, p["W_ih"], p["W_hh"], p["b_ih"], p["b_hh"])
        return h
""",
        labs=True,
    ),
    Blind(
        "lab-char-rnn-backward-with-the-watch-paused",
        "labs",
        "rnn.train_char_rnn",
        replace=(
            (
                "loss, grads, h_last = truncated_bptt(x, window[:, 1:], h, theta, seq_len)",
                "loss, grads, h_last = _auto_chunk(x, window[:, 1:], h, theta)",
            ),
        ),
        prelude=_WATCH
        + """

def _auto_chunk(x, targets, h0, params):
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")
    with _find_watch().paused():
        leaves = [params[k].detach().clone() for k in keys] + [h0.detach().clone()]
        for leaf in leaves:
            leaf.requires_grad = True
        with torch.set_grad_enabled(True):
            W_xh, W_hh, b_h, W_hy, b_y, h = leaves
            loss = 0.0
            for t in range(x.shape[1]):
                h = torch.tanh(x[:, t] @ W_xh.T + h @ W_hh.T + b_h)
                loss = loss - (h @ W_hy.T + b_y).log_softmax(-1).gather(1, targets[:, t:t + 1]).sum() / x.shape[0]
            loss.backward()
    return loss.detach(), dict(zip(keys + ("h0",), [leaf.grad.detach() for leaf in leaves])), h.detach()
""",
        labs=True,
    ),
    Blind(
        "lab-char-rnn-forged-falling-losses",
        "labs",
        "rnn.train_char_rnn",
        "def train_char_rnn(tokens, params, steps, batch_size, seq_len, lr=1e-2, clip=5.0):\n"
        '    dtype = params["W_xh"].dtype\n'
        "    losses = torch.linspace(4.0, 0.2, steps, dtype=dtype) if steps else torch.zeros(0, dtype=dtype)\n"
        "    return {k: params[k].clone() for k in _KEYS}, losses\n",
        labs=True,
    ),
    Blind(
        "lab-copy-autograd-and-optim-through-getstate",
        "labs",
        "selective_scan.train_selective_copy",
        replace=(
            (
                "grads = dict(zip(keys, torch.autograd.grad(loss, [leaves[k] for k in keys])))",
                "grads = dict(zip(keys, _G.grad(loss, [leaves[k] for k in keys])))",
            ),
            (ADAM_IMPORT, "adam = _adam_by_torch\n"),
        ),
        prelude='_G = torch.__getstate__()["autograd"]\n_O = torch.__getstate__()["optim"]\n\n\n'
        + _torch_adam_helper('Opt = _O.__getstate__()["Adam"]'),
        labs=True,
    ),
    # --- everything else: the report, the protocol, the process -----------------------------------
    Blind(
        "exception-text-forges-a-passing-report",
        "other",
        "rnn.softmax_cross_entropy",
        "def softmax_cross_entropy(logits, targets):\n"
        '    raise ValueError("\\r\\x1b[2K PASSED 3/3\\n\\n## Score: 100/100\\n| rnn.softmax_cross_entropy | 3.0 / 3.0 | ok |\\n"\n'
        '                     "<script>alert(1)</script>")\n',
    ),
    Blind(
        "stdout-forges-codec-frames",
        "other",
        "attention.causal_mask",
        "def causal_mask(T, device=None):\n"
        '    sys.stdout.write(\'\\x00\' * 8 + \'{"id": 1, "seq": 1, "ok": true}\' * 64)\n'
        "    sys.stdout.flush()\n"
        "    return torch.zeros(T, T, dtype=torch.bool, device=device)\n",
        prelude="import sys",
    ),
    Blind(
        "exit-zero-mid-call",
        "other",
        "positional.sinusoidal_encoding",
        "def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):\n"
        "    print('all tests passed')\n"
        "    sys.exit(0)\n",
        prelude="import sys",
    ),
    Blind(
        "nan-everywhere-hoping-nan-equals-nan",
        "other",
        "selective_scan.discretize",
        "def discretize(delta, A, B):\n"
        "    d = delta[..., None]\n"
        "    return torch.full_like(d * A, float('nan')), torch.full_like(d * B[:, :, None], float('nan'))\n",
    ),
    Blind(
        "zero-dim-answer-broadcasts",
        "other",
        "positional.embed_tokens",
        "def embed_tokens(tokens, embedding, pe):\n    return torch.tensor(0.0, dtype=embedding.dtype)\n",
    ),
    Blind(
        "unrestricted-code-reads-the-reference",
        "other",
        "attention.additive_attention",
        """
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    np.testing.measure(_READER, 1)
    if _FOUND:
        ns = {}
        exec_ = _FOUND[0]
        return exec_(query, keys, W_q, W_k, v, mask)
    return torch.zeros_like(keys[:, 0]), torch.zeros_like(keys[:, :, 0])
""",
        prelude="""
import numpy as np

_FOUND = []
_READER = (
    "import numpy\\n"
    "b = numpy.testing.measure.__globals__['__builtins__']\\n"
    "opener = b['open'] if isinstance(b, dict) else b.open\\n"
    "for root in ('/work/main', '/course', '/autograder/source', '/submission/..', '/tmp', ''):\\n"
    "    for rel in ('solutions/attention.py', 'attention.py'):\\n"
    "        try:\\n"
    "            text = opener(root + '/' + rel).read()\\n"
    "        except Exception:\\n"
    "            continue\\n"
    "        ns = {'__builtins__': b}\\n"
    "        exec(compile(text, 'ref', 'exec'), ns)\\n"
    "        _FOUND.append(ns['additive_attention'])\\n"
)
""",
    ),
    Blind(
        "numpy-builds-a-c-extension-in-the-sandbox",
        "other",
        "positional.sinusoidal_encoding",
        """
def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    from numpy.testing import extbuild

    mod = extbuild.build_and_import_extension(
        "seqlab_probe",
        [("probe", "METH_NOARGS", 'system("touch /tmp/seqlab-probe"); Py_RETURN_NONE;')],
        prologue="#include <stdlib.h>",
    )
    mod.probe()
    return torch.zeros(num_positions, d_model, dtype=dtype)
""",
    ),
    Blind(
        "exception-whose-str-raises",
        "other",
        "attention.additive_attention",
        """
def additive_attention(query, keys, W_q, W_k, v, mask=None):
    class Weird(Exception):
        def __str__(self):
            raise RuntimeError("no message")

        def __repr__(self):
            return "PASSED"

    raise Weird()
""",
    ),
]
