"""Entries of the blind integrity bank on the answer routes (see tests/attacks/blind_integrity_bank.py):
reading a stand-in's answers ahead of the call, and values that run the student's code after
the watch (the codec's encoding of a result, the grader's backward pass in the child)."""

from __future__ import annotations

from tests.attacks.blind_integrity_bank import Blind

# A tensor subclass whose every torch call first does the real work with a forbidden kernel: the
# graded call itself only wraps its input, so whatever runs, runs when the grader touches the value.
LAZY_LAYER_NORM = """
class _Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        src = _Lazy.src
        real = torch.nn.functional.layer_norm(src[0], src[0].shape[-1:], src[1], src[2], src[3])
        args = tuple(real if isinstance(a, _Lazy) else a for a in args)
        return torch.Tensor.__torch_function__(func, (torch.Tensor,), args, kwargs or {})
"""

# A tuple subclass whose items are computed, with the fused kernel, when someone iterates it.
LAZY_TUPLE = """
class _LazyPair(tuple):
    job = None
    fused = torch.nn.functional.scaled_dot_product_attention

    def __iter__(self):
        return iter(_LazyPair.job())

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return _LazyPair.job()[i]
"""

ENTRIES = [
    # --- values that run the student's code after the watch -------------------------------------
    Blind(
        "lazy-tensor-subclass-runs-layer-norm-after-the-watch",
        "kernels",
        "transformer.layer_norm",
        "def layer_norm(x, weight, bias, eps=1e-5):\n"
        "    _Lazy.src = (x.detach(), weight.detach(), bias.detach(), eps)\n"
        "    return torch.zeros_like(x).as_subclass(_Lazy)\n",
        prelude=LAZY_LAYER_NORM,
    ),
    Blind(
        "lazy-tuple-subclass-runs-fused-attention-after-the-watch",
        "kernels",
        "attention.scaled_dot_product_attention",
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    def job():\n"
        "        s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5\n"
        "        if mask is not None:\n"
        "            s = s.masked_fill(~mask, float('-inf'))\n"
        "        w = torch.nan_to_num(s.softmax(-1))\n"
        "        m = None if mask is None else mask.expand(s.shape)\n"
        "        return _LazyPair.fused(q, k, v, attn_mask=m), w\n"
        "    _LazyPair.job = job\n"
        "    return _LazyPair((q, q))\n",
        prelude=LAZY_TUPLE,
    ),
    # --- reading a stand-in's answers before the call --------------------------------------------
    Blind(
        "gc-objects-search-for-recorded-results",
        "oracle",
        "rnn.rnn_forward",
        "def rnn_forward(x, h0, W_xh, W_hh, b_h):\n"
        "    found = [o for o in gc.get_objects() if isinstance(o, dict) and o.get('callee') == 'rnn.rnn_cell']\n"
        "    return torch.stack([e['result'] for e in found], 1)\n",
        prelude="import gc",
    ),
    Blind(
        "stand-in-closure-cells-by-inspect",
        "oracle",
        "rnn.rnn_forward",
        "def rnn_forward(x, h0, W_xh, W_hh, b_h):\n"
        "    cells = inspect.getclosurevars(rnn_cell).nonlocals\n"
        "    session = cells['session']\n"
        "    return torch.stack([e['result'] for e in session.pending['rnn.rnn_cell']], 1)\n",
        prelude="import inspect",
    ),
    Blind(
        "stand-in-closure-walked-by-a-match-pattern-on-its-answers",
        "oracle",
        "lstm_gru.gru_forward",
        """
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    hs = []
    for cell in gru_cell.__closure__ or ():
        match cell.cell_contents:
            case object(answers=object(ask=ask)):
                for c in ask.__closure__ or ():
                    match c.cell_contents:
                        case object(pending=pending):
                            hs = [e["result"] for e in pending.get("lstm_gru.gru_cell", [])]
    return torch.stack(hs, 1), hs[-1]
""",
    ),
    Blind(
        "frame-walk-from-a-failing-stand-in-to-the-answers",
        "oracle",
        "rnn.birnn_forward",
        """
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    try:
        rnn_forward(None, None, None, None, None)
    except Exception as exc:
        tb = exc.__traceback__
    entries = []
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            for name in ("pending", "matched"):
                entries += list(getattr(value, name, {}).get("rnn.rnn_forward", []))
        tb = tb.tb_next
    fwd, bwd = entries[0]["result"], entries[-1]["result"]
    return torch.cat((fwd, torch.flip(bwd, dims=(1,))), -1)
""",
    ),
]
