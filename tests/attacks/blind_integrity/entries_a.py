"""The blind bank's attacks on strings run by allowed code, and on kernels and autograd reached
without a forbidden name (see tests/attacks/blind_integrity_bank.py)."""

from __future__ import annotations

from tests.attacks.blind_integrity_bank import (
    ADAGRAD_BODY,
    MOMENTUM_BODY,
    RMSPROP_BODY,
    Blind,
    adam_with,
    bptt_autograd,
    sgd_with,
)

# Unrestricted code run by numpy.testing.measure: compile + exec in the caller's frame, outside
# the subset's transform. The helper it defines is plain Python: torch.optim.Adam, by name.
MEASURED_ADAM = """
import numpy as np

np.testing.measure(
    "import torch\\n"
    "def _measured_adam(w, dw, state, lr, betas, eps):\\n"
    "    p = w.detach().clone()\\n"
    "    p.grad = dw.detach().clone()\\n"
    "    opt = torch.optim.Adam([p], lr=lr, betas=betas, eps=eps, foreach=False)\\n"
    "    if state:\\n"
    "        opt.state[p] = {'step': torch.tensor(float(state['step'])), 'exp_avg': state['m'].clone(), 'exp_avg_sq': state['v'].clone()}\\n"
    "    opt.step()\\n"
    "    st = opt.state[p]\\n"
    "    return p.detach(), {'step': int(st['step']), 'm': st['exp_avg'].clone(), 'v': st['exp_avg_sq'].clone()}\\n",
    1,
)
"""

# The recorders' CallWatch found by walking the frames from unrestricted code (then paused), and
# the forbidden kernels fetched there too, by name, where no scan reads.
WATCH_FINDER = """
import numpy as np

np.testing.measure(
    "import sys\\n"
    "import torch\\n"
    "_KERNELS = {'ln': torch.nn.functional.layer_norm, 'sdpa': torch.nn.functional.scaled_dot_product_attention,"
    " 'lstm': torch.lstm_cell}\\n"
    "def _find_watch():\\n"
    "    f = sys._getframe(1)\\n"
    "    while f is not None:\\n"
    "        for v in list(f.f_locals.values()):\\n"
    "            if type(v).__name__ == 'CallWatch':\\n"
    "                return v\\n"
    "        f = f.f_back\\n"
    "    raise LookupError('no watch')\\n",
    1,
)
"""

# A dict whose iteration runs queued jobs: a declared callee's stand-in compares a dict argument
# with the recording (set(actual)) under CallWatch.paused(), so the jobs run with every recorder
# (ops, kernels, autograd) paused.
DICT_CARRIER = """
class _DictCarrier(dict):
    jobs = []

    def __iter__(self):
        while _DictCarrier.jobs:
            job = _DictCarrier.jobs.pop()
            job()
        return iter(list(self.keys()))
"""

ENTRIES = [
    # --- strings: allowed code that runs strings or turns them into attributes ----------------
    Blind(
        "reduce-getattr-walks-to-optim",
        "strings",
        "optimizers.adam",
        adam_with('Opt = reduce(getattr, ("op" + "tim", "Ad" + "am"), torch)'),
    ),
    Blind(
        "getattr-rebound-by-tuple-unpacking",
        "strings",
        "optimizers.sgd",
        sgd_with('Opt = getattr(getattr(torch, _OPTIM), "S" + "GD")'),
        prelude='getattr, _OPTIM = getattr, "op" + "tim"  # a name of its own: computed names pass',
    ),
    Blind(
        "getstate-of-torch-is-its-namespace",
        "strings",
        "optimizers.adam",
        adam_with('Opt = torch.__getstate__()["optim"].__getstate__()["Adam"]'),
    ),
    Blind(
        "numpy-measure-execs-a-helper-at-import",
        "strings",
        "optimizers.adam",
        "def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n"
        "    return _measured_adam(w, dw, state, lr, betas, eps)\n",
        prelude=MEASURED_ADAM,
    ),
    Blind(
        "numpy-measure-defines-the-contract-function",
        "strings",
        "optimizers.clip_grad_norm",
        "",
        replace=(("def clip_grad_norm(grads, max_norm):", "def _unused_clip(grads, max_norm):"),),
        prelude="""
import numpy as np

np.testing.measure(
    "import torch\\n"
    "def clip_grad_norm(grads, max_norm):\\n"
    "    ps = [g.detach().clone() for g in grads]\\n"
    "    for p, g in zip(ps, grads):\\n"
    "        p.grad = g.detach().clone()\\n"
    "    total = torch.nn.utils.clip_grad_norm_(ps, max_norm, foreach=False)\\n"
    "    return [p.grad for p in ps], total\\n",
    1,
)
""",
    ),
    Blind(
        "numpy-measure-inside-the-call-runs-autograd",
        "strings",
        "rnn.rnn_bptt",
        "def rnn_bptt(x, targets, h0, params):\n"
        "    global _ARGS\n"
        "    _ARGS = (x, targets, h0, params)\n"
        '    np.testing.measure("global _OUT\\n_OUT = _bptt_by_autograd(*_ARGS)", 1)\n'
        "    return _OUT\n\n\n"
        "def _bptt_by_autograd(x, targets, h0, params):\n"
        + bptt_autograd("loss.backward()\ngrads = [leaf.grad for leaf in leaves]").replace(
            "\n        loss.backward()", "\n        loss.backward()"
        ),
        prelude="import numpy as np",
    ),
    Blind(
        "numpy-measure-finds-and-pauses-the-watch",
        "strings",
        "transformer.layer_norm",
        "def layer_norm(x, weight, bias, eps=1e-5):\n"
        "    watch = _find_watch()\n"
        "    with watch.paused():\n"
        "        return _KERNELS['ln'](x, x.shape[-1:], weight, bias, eps)\n",
        prelude=WATCH_FINDER,
    ),
    Blind(
        "singledispatch-evaluates-a-string-annotation",
        "strings",
        "optimizers.sgd_momentum",
        "def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):\n"
        "    Opt = _BOX['opt']\n" + MOMENTUM_BODY.strip("\n") + "\n",
        prelude="""
import functools

_BOX = {}
_dispatch = functools.singledispatch(lambda x: x)


def _register(x: "(_BOX.update(opt=torch.optim.SGD), int)[1]"):
    return x


_dispatch.register(_register)
""",
    ),
    Blind(
        "map-getattr-reaches-rmsprop",
        "strings",
        "optimizers.rmsprop",
        "def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):\n"
        '    Opt = next(map(getattr, [next(map(getattr, [torch], ["op" + "tim"]))], ["RMS" + "prop"]))\n'
        + RMSPROP_BODY.strip("\n")
        + "\n",
    ),
    Blind(
        "match-class-pattern-reads-an-attribute",
        "strings",
        "optimizers.sgd",
        sgd_with("match torch:\n        case object(optim=object(SGD=Opt)):\n            pass"),
    ),
    Blind(
        "getstate-of-functional-reaches-cross-entropy",
        "strings",
        "rnn.softmax_cross_entropy",
        "def softmax_cross_entropy(logits, targets):\n"
        '    return torch.nn.functional.__getstate__()["cross" + "_entropy"](logits, targets)\n',
    ),
    # --- kernels and autograd reached without a forbidden name ---------------------------------
    Blind(
        "measure-pauses-the-watch-for-autograd-bptt",
        "kernels",
        "rnn.rnn_bptt",
        "def rnn_bptt(x, targets, h0, params):\n"
        "    with _find_watch().paused():\n"
        "        return _autograd_bptt(x, targets, h0, params)\n\n\n"
        "def _autograd_bptt(x, targets, h0, params):\n"
        + bptt_autograd("loss.backward()\ngrads = [leaf.grad for leaf in leaves]"),
        prelude=WATCH_FINDER,
    ),
    Blind(
        "dict-carrier-runs-autograd-while-callee-matching-pauses",
        "kernels",
        "rnn.truncated_bptt",
        "def truncated_bptt(x, targets, h0, params, chunk):\n"
        "    box = {}\n\n"
        "    def job():\n"
        "        total, grads, h = 0.0, None, h0\n"
        "        for s in range(0, x.shape[1], chunk):\n"
        "            l, g, h = _Chunk.run(x[:, s:s + chunk], targets[:, s:s + chunk], h, params)\n"
        "            total = total + l\n"
        "            grads = g if grads is None else {k: (grads[k] if k == 'h0' else grads[k] + g[k]) for k in g}\n"
        "        box['out'] = (total, grads, h)\n\n"
        "    _DictCarrier.jobs.append(job)\n"
        "    rnn_bptt(x[:, :chunk], targets[:, :chunk], h0, _DictCarrier(params))\n"
        "    _DictCarrier.jobs.clear()\n"
        "    return box['out']\n",
        prelude=DICT_CARRIER
        + """

class _Chunk:
    @staticmethod
    def run(x, targets, h0, params):
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
        grads = dict(zip(keys + ("h0",), [leaf.grad.detach() for leaf in leaves]))
        return loss.detach(), grads, h.detach()
""",
    ),
    Blind(
        "measure-pauses-the-watch-for-an-lstm-kernel",
        "kernels",
        "lstm_gru.lstm_forward",
        "def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):\n"
        "    hs, state = [], (h0, c0)\n"
        "    with _find_watch().paused():\n"
        "        for t in range(x.shape[1]):\n"
        "            state = _KERNELS['lstm'](x[:, t], state, W_ih, W_hh, b_ih, b_hh)\n"
        "            hs.append(state[0])\n"
        "    return torch.stack(hs, 1), tuple(state)\n",
        prelude=WATCH_FINDER,
    ),
    Blind(
        "measure-pauses-the-watch-for-fused-attention",
        "kernels",
        "attention.multi_head_attention",
        "def multi_head_attention(query, key, value, params, num_heads, mask=None):\n"
        "    B, L, E = query.shape\n"
        '    proj = lambda x, n: x @ params[f"W_{n}"].T + params[f"b_{n}"]\n'
        "    heads = lambda t: t.unflatten(-1, (num_heads, E // num_heads)).transpose(1, 2)\n"
        '    q, k, v = heads(proj(query, "q")), heads(proj(key, "k")), heads(proj(value, "v"))\n'
        "    m = mask[:, None] if (mask is not None and mask.dim() == 3) else mask\n"
        "    with _find_watch().paused():\n"
        "        out = torch.nan_to_num(_KERNELS['sdpa'](q, k, v, attn_mask=m))\n"
        "    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])\n"
        "    if m is not None:\n"
        '        s = s.masked_fill(~m, float("-inf"))\n'
        "    w = torch.nan_to_num(torch.softmax(s, dim=-1))\n"
        '    return proj(out.transpose(1, 2).flatten(-2), "o"), w\n',
        prelude=WATCH_FINDER,
    ),
    Blind(
        "dict-carrier-layer-norm-kernel-in-encoder",
        "kernels",
        "transformer.encoder_block",
        "def encoder_block(x, params, num_heads, mask=None, norm_first=False):\n"
        "    box = {}\n\n"
        "    def job():\n"
        "        box['out'] = _Enc.run(x, params, num_heads, mask, norm_first)\n\n"
        "    _DictCarrier.jobs.append(job)\n"
        "    q = _Enc.plain_ln(x, params['norm1']) if norm_first else x\n"
        "    multi_head_attention(q, q, q, _DictCarrier(params['self_attn']), num_heads, mask)\n"
        "    _DictCarrier.jobs.clear()  # never run unpaused: a test it misses scores 0, not the whole function\n"
        "    return box.get('out', x * 0)\n",
        prelude="import math\n"
        + DICT_CARRIER
        + """

class _Enc:
    @staticmethod
    def plain_ln(h, p):
        c = h - h.mean(-1, keepdim=True)
        return c / (c.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * p["weight"] + p["bias"]

    @staticmethod
    def mha(h, p, num_heads, mask):
        B, L, E = h.shape
        proj = lambda t, n: t @ p["W_" + n].T + p["b_" + n]
        heads = lambda t: t.unflatten(-1, (num_heads, E // num_heads)).transpose(1, 2)
        q, k, v = heads(proj(h, "q")), heads(proj(h, "k")), heads(proj(h, "v"))
        m = mask[:, None] if (mask is not None and mask.dim() == 3) else mask
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if m is not None:
            s = s.masked_fill(~m, float("-inf"))
        w = torch.nan_to_num(s.softmax(-1))
        return proj((w @ v).transpose(1, 2).flatten(-2), "o")

    @staticmethod
    def run(x, p, num_heads, mask, norm_first):
        ln = lambda h, n: torch.nn.functional.layer_norm(h, h.shape[-1:], p[n]["weight"], p[n]["bias"], 1e-5)
        att = lambda h: _Enc.mha(h, p["self_attn"], num_heads, mask)
        ff = lambda h: (h @ p["ffn"]["W1"].T + p["ffn"]["b1"]).relu() @ p["ffn"]["W2"].T + p["ffn"]["b2"]
        if norm_first:
            x = x + att(ln(x, "norm1"))
            return x + ff(ln(x, "norm2"))
        x = ln(x + att(x), "norm1")
        return ln(x + ff(x), "norm2")
""",
    ),
    Blind(
        "float-carrier-eps-pauses-layer-norm-in-encoder",
        "kernels",
        "transformer.encoder_block",
        "def encoder_block(x, params, num_heads, mask=None, norm_first=False):\n"
        "    box = {}\n\n"
        "    def job():\n"
        "        box['out'] = _Enc2.run(x, params, num_heads, mask, norm_first)\n\n"
        "    _FloatCarrier.jobs.append(job)\n"
        "    n1 = params['norm1']\n"
        "    first = x if norm_first else x + multi_head_attention(x, x, x, params['self_attn'], num_heads, mask)[0]\n"
        "    layer_norm(first, n1['weight'], n1['bias'], _FloatCarrier(1e-5))\n"
        "    _FloatCarrier.jobs.clear()  # never run unpaused: a test it misses scores 0, not the whole function\n"
        "    return box.get('out', x * 0)\n",
        prelude="""
class _FloatCarrier(float):
    jobs = []

    def __float__(self):
        while _FloatCarrier.jobs:
            job = _FloatCarrier.jobs.pop()
            job()
        return 1e-5


class _Enc2:
    @staticmethod
    def run(x, p, num_heads, mask, norm_first):
        ln = lambda h, n: torch.nn.functional.layer_norm(h, h.shape[-1:], p[n]["weight"], p[n]["bias"], 1e-5)
        att = lambda h: multi_head_attention(h, h, h, p["self_attn"], num_heads, mask)[0]
        ff = lambda h: (h @ p["ffn"]["W1"].T + p["ffn"]["b1"]).relu() @ p["ffn"]["W2"].T + p["ffn"]["b2"]
        if norm_first:
            x = x + att(ln(x, "norm1"))
            return x + ff(ln(x, "norm2"))
        x = ln(x + att(x), "norm1")
        return ln(x + ff(x), "norm2")
""",
    ),
    Blind(
        "kernel-in-a-class-helper-no-pause",
        "kernels",
        "lstm_gru.gru_cell",
        "def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):\n    return _Cells.gru(x, h_prev, W_ih, W_hh, b_ih, b_hh)\n",
        prelude="class _Cells:\n    gru = staticmethod(torch.gru_cell)\n",
    ),
    Blind(
        "complex-step-gradients-without-autograd",
        "kernels",
        "rnn.rnn_bptt",
        """
def rnn_bptt(x, targets, h0, params):
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y", "h0")
    base = {k: params[k] for k in keys[:5]}
    base["h0"] = h0

    def loss_of(p):
        h, total = p["h0"], 0.0
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t].to(h.dtype) @ p["W_xh"].T + h @ p["W_hh"].T + p["b_h"])
            o = h @ p["W_hy"].T + p["b_y"]
            m = o.real.amax(-1, keepdim=True)
            lse = (o - m).exp().sum(-1).log() + m[:, 0]
            total = total + (lse - o.gather(1, targets[:, t:t + 1])[:, 0]).sum() / x.shape[0]
        return total

    step = 1e-30
    cbase = {k: v.to(torch.complex128) for k, v in base.items()}
    grads = {}
    for k in keys:
        g = torch.zeros(base[k].numel(), dtype=torch.float64)
        for i in range(base[k].numel()):
            bumped = dict(cbase)
            flat = cbase[k].flatten().clone()
            flat[i] = flat[i] + 1j * step
            bumped[k] = flat.reshape(base[k].shape)
            g[i] = loss_of(bumped).imag / step
        grads[k] = g.reshape(base[k].shape).to(base[k].dtype)
    return loss_of(base), grads
""",
    ),
    Blind(
        "torch-hooks-replaced-through-module-setstate",
        "kernels",
        "rnn.rnn_bptt",
        bptt_autograd("grads = _AG.grad(loss, leaves)").replace(
            "    keys", "def rnn_bptt(x, targets, h0, params):\n    keys", 1
        ),
        prelude="""
class _NoHooks:
    def __init__(self, pack, unpack):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_AG = torch.__getstate__()["autograd"]
torch.nn.Module.__setstate__(_AG.__getstate__()["graph"], {"saved_tensors_hooks": _NoHooks})
""",
    ),
    Blind(
        "tuple-unpacking-hides-an-alias",
        "kernels",
        "optimizers.adam",
        adam_with("Opt = _ADAM"),
        prelude="(_ADAM,) = (torch.optim.Adam,)",
    ),
    Blind(
        "annotated-assignment-hides-an-alias",
        "kernels",
        "optimizers.sgd",
        sgd_with("Opt = _SGD"),
        prelude="_SGD: object = torch.optim.SGD",
    ),
    Blind(
        "class-attribute-hides-an-alias",
        "kernels",
        "optimizers.rmsprop",
        "def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):\n    Opt = _Optims.rms\n"
        + RMSPROP_BODY.strip("\n")
        + "\n",
        prelude="class _Optims:\n    rms = torch.optim.RMSprop\n",
    ),
    Blind(
        "module-lambda-hides-an-alias",
        "kernels",
        "optimizers.adagrad",
        "def adagrad(w, dw, state, lr=1e-2, eps=1e-10):\n    Opt = _pick()\n" + ADAGRAD_BODY.strip("\n") + "\n",
        prelude="_pick = lambda: torch.optim.Adagrad",
    ),
    Blind(
        "helper-of-a-helper-is-not-scanned",
        "kernels",
        "optimizers.sgd_momentum",
        "def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):\n    Opt = _outer()\n"
        + MOMENTUM_BODY.strip("\n")
        + "\n",
        prelude="def _inner():\n    return torch.optim.SGD\n\n\ndef _outer():\n    return _inner()\n",
    ),
    Blind(
        "helper-module-clips-with-torch-utils",
        "kernels",
        "optimizers.clip_grad_norm",
        "def clip_grad_norm(grads, max_norm):\n    from _clipkit import clip\n\n    return clip(grads, max_norm)\n",
        files={
            "_clipkit.py": (
                "import torch\nimport torch.nn.utils\n\n\ndef clip(grads, max_norm):\n"
                "    ps = [g.detach().clone() for g in grads]\n"
                "    for p, g in zip(ps, grads):\n        p.grad = g.detach().clone()\n"
                "    total = torch.nn.utils.clip_grad_norm_(ps, max_norm, foreach=False)\n"
                "    return [p.grad for p in ps], total\n"
            )
        },
    ),
    Blind(
        "contract-function-is-a-partial",
        "kernels",
        "optimizers.rmsprop",
        "",
        replace=(("def rmsprop(", "def _honest_rmsprop("),),
        prelude=(
            "def _torch_rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8, Opt=torch.optim.RMSprop):\n"
            + RMSPROP_BODY.strip("\n")
            + "\n\n\nrmsprop = partial(_torch_rmsprop)\n"
        ),
    ),
    Blind(
        "contract-function-is-a-lambda",
        "kernels",
        "optimizers.adagrad",
        "",
        replace=(("def adagrad(", "def _honest_adagrad("),),
        prelude=(
            "def _torch_adagrad(w, dw, state, lr, eps):\n    Opt = torch.optim.Adagrad\n"
            + ADAGRAD_BODY.strip("\n")
            + "\n\n\nadagrad = lambda w, dw, state, lr=1e-2, eps=1e-10: _torch_adagrad(w, dw, state, lr, eps)\n"
        ),
    ),
    Blind(
        "decorator-swaps-the-body",
        "kernels",
        "optimizers.adam",
        "@_swapped\n" + adam_with("Opt = None"),
        prelude=(
            "def _swapped(_honest):\n"
            "    def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n"
            "        Opt = torch.optim.Adam\n"
            + "\n".join("    " + line if line else line for line in adam_with("").split("\n")[2:])
            + "\n    return adam\n"
        ),
    ),
    Blind(
        "contract-function-is-a-staticmethod-of-a-class",
        "kernels",
        "optimizers.clip_grad_norm",
        "",
        replace=(("def clip_grad_norm(", "def _honest_clip("),),
        prelude="""
class _Tools:
    @staticmethod
    def clip(grads, max_norm):
        ps = [g.detach().clone() for g in grads]
        for p, g in zip(ps, grads):
            p.grad = g.detach().clone()
        total = torch.nn.utils.clip_grad_norm_(ps, max_norm, foreach=False)
        return [p.grad for p in ps], total


clip_grad_norm = _Tools.clip
""",
    ),
    Blind(
        "sibling-contract-function-does-the-clipping",
        "kernels",
        "optimizers.clip_grad_norm",
        "def clip_grad_norm(grads, max_norm):\n    return sgd(None, grads, 'clip', max_norm)\n",
        also={
            "sgd": (
                "def sgd(w, dw, state, lr=1e-2):\n"
                "    if state == 'clip':\n"
                "        ps = [g.detach().clone() for g in dw]\n"
                "        for p, g in zip(ps, dw):\n            p.grad = g.detach().clone()\n"
                "        total = torch.nn.utils.clip_grad_norm_(ps, lr, foreach=False)\n"
                "        return [p.grad for p in ps], total\n"
                "    return _scaled_step(w, lr, dw), {}\n"
            )
        },
    ),
    Blind(
        "sibling-contract-function-does-the-layer-norm",
        "kernels",
        "transformer.layer_norm",
        "def layer_norm(x, weight, bias, eps=1e-5):\n    return feed_forward(x, 'ln', weight, bias, eps)\n",
        also={
            "feed_forward": (
                "def feed_forward(x, W1, b1, W2, b2):\n"
                "    if isinstance(W1, str):\n"
                "        return torch.nn.functional.layer_norm(x, x.shape[-1:], b1, W2, b2)\n"
                "    return (x @ W1.T + b1).relu() @ W2.T + b2\n"
            )
        },
    ),
    Blind(
        "gradient-hooks-collect-bptt",
        "kernels",
        "rnn.rnn_bptt",
        bptt_autograd("grads = _HOOKED(loss, leaves)").replace(
            "    keys", "def rnn_bptt(x, targets, h0, params):\n    keys", 1
        ),
        prelude="""
def _HOOKED(loss, leaves):
    got = {}
    for i, leaf in enumerate(leaves):
        leaf.register_hook(lambda g, i=i: got.__setitem__(i, g))
    loss.backward()
    return [got[i] for i in range(len(leaves))]
""",
    ),
    Blind(
        "match-pattern-fetches-cross-entropy",
        "kernels",
        "rnn.softmax_cross_entropy",
        "def softmax_cross_entropy(logits, targets):\n"
        "    match torch.nn:\n        case object(functional=object(cross_entropy=ce)):\n            return ce(logits, targets)\n",
    ),
    Blind(
        "parameter-leaves-and-autograd-backward",
        "kernels",
        "rnn.rnn_bptt",
        bptt_autograd("_AG.backward(loss)\ngrads = [leaf.grad for leaf in leaves]")
        .replace(
            "for leaf in leaves:\n        leaf.requires_grad = True",
            "leaves = [torch.nn.Parameter(leaf) for leaf in leaves]",
        )
        .replace("    keys", "def rnn_bptt(x, targets, h0, params):\n    keys", 1),
        prelude="(_AG,) = (torch.autograd,)",
    ),
    Blind(
        "func-transform-through-a-tuple-alias",
        "kernels",
        "rnn.rnn_bptt",
        """
def rnn_bptt(x, targets, h0, params):
    keys = ("W_xh", "W_hh", "b_h", "W_hy", "b_y")

    def loss_of(ps, h):
        W_xh, W_hh, b_h, W_hy, b_y = ps
        loss = 0.0
        for t in range(x.shape[1]):
            h = torch.tanh(x[:, t] @ W_xh.T + h @ W_hh.T + b_h)
            loss = loss - (h @ W_hy.T + b_y).log_softmax(-1).gather(1, targets[:, t:t + 1]).sum() / x.shape[0]
        return loss

    fx = _FX
    grads, loss = fx.grad_and_value(loss_of, argnums=(0, 1))(tuple(params[k] for k in keys), h0)
    return loss, dict(zip(keys + ("h0",), list(grads[0]) + [grads[1]]))
""",
        prelude="(_FX,) = (torch.func,)",
    ),
    Blind(
        "foreach-kernel-path-of-torch-optim",
        "kernels",
        "optimizers.sgd_momentum",
        "def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):\n    Opt = _Optims.sgd\n"
        + MOMENTUM_BODY.strip("\n").replace("foreach=False", "foreach=True")
        + "\n",
        prelude="class _Optims:\n    sgd = torch.optim.SGD\n",
    ),
]

# bptt_autograd bodies start at "keys"; the first entries add their own def line.
for _e in ENTRIES:
    assert _e.source == "" or _e.source.lstrip().startswith(("def ", "@")), _e.name
