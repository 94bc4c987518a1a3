"""Attacks on the callee stand-ins, the channel and the reports, packed into a few submissions.

Each ``Probe`` replaces one contract function (``target``) and says what grading must give it:
``"zero"``, ``"full"``, ``"module-lost"`` (its module scores nothing, the others keep theirs) or
``"chunk-at-least-T"`` (truncated_bptt earns exactly its chunk >= T tests) or ``"float32-lost"``
(exactly the tests on float32 inputs score nothing: a fault costs its own call only). Probes of one
``Pack`` share one submission and one grading (tests/student/test_attacks.py): their targets are chosen so
that they do not interact, and every function no probe targets must keep the base's score
(nothing on a stub base, full marks on the reference base).

Families:

* oracle routes: a stub plus a one-line call to another contract function whose correct answer
  would be the caller's answer (undeclared pairs), or a declared callee called on arguments the
  student chose; with the oracle gone they earn nothing. A control grading of the same one-liners
  over correct callees shows that each route really computes the answer;
* honest callers over stub callees keep their full marks (a bug is charged once);
* persistent state: stand-ins kept in module globals, caches of earlier inputs;
* protocol forgery and faults: stray and forged frames, wrong ids, huge headers, malformed
  safetensors, closed descriptors, descriptor exhaustion and floods at import;
* report injection: Markdown headlines, raw HTML, table rows, control characters, ANSI escapes,
  lone surrogates, a forged size mismatch for the size hints, a 4 MB import error.
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass(frozen=True)
class Probe:
    name: str
    target: str
    source: str = ""  # replacement def of the target ('' = the base's own)
    expect: str = "zero"
    prelude: str = ""  # code put before the first def of the target's module
    message: str = ""  # a phrase the feedback (or, for a lost module, the errors) must hold

    @property
    def module(self) -> str:
        return self.target.split(".")[0]


@dataclass(frozen=True)
class Pack:
    name: str
    base: str  # "stubs" (exercises/) or "reference" (solutions/)
    probes: list = field(default_factory=list)


def _src(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def _function_source(path: Path, name: str) -> str:
    import ast

    text = path.read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node) + "\n"
    raise LookupError(f"{path}: no function {name}")


# --- oracle routes: one-liners through another contract function --------------------------------
# Each is correct whenever its callee is (the control grading checks that), so under an oracle
# each would have earned its function's points with the callee a stub.
ROUTES = [
    Probe(
        "sgd-as-sgd_momentum-with-momentum-0",
        "optimizers.sgd",
        _src("""
        def sgd(w, dw, state, lr=1e-2):
            w_next, _ = sgd_momentum(w, dw, {}, lr=lr, momentum=0.0)
            return w_next, {}
    """),
    ),
    Probe(
        "rnn_cell-as-one-step-of-rnn_forward",
        "rnn.rnn_cell",
        _src("""
        def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
            return rnn_forward(x[:, None], h_prev, W_xh, W_hh, b_h)[:, 0].clone()
    """),
    ),
    Probe(
        "rnn_forward-as-forward-half-of-birnn",
        "rnn.rnn_forward",
        _src("""
        def rnn_forward(x, h0, W_xh, W_hh, b_h):
            p = {"W_xh": W_xh, "W_hh": W_hh, "b_h": b_h}
            return birnn_forward(x, h0, h0, p, p)[..., :h0.shape[-1]].clone()
    """),
    ),
    Probe(
        "softmax_cross_entropy-as-rnn_bptt-loss",
        "rnn.softmax_cross_entropy",
        _src("""
        def softmax_cross_entropy(logits, targets):
            N, C = logits.shape
            like = dict(dtype=logits.dtype, device=logits.device)
            gain = torch.tanh(torch.ones((), **like))
            params = {"W_xh": torch.eye(N, **like), "W_hh": torch.zeros(N, N, **like), "b_h": torch.zeros(N, **like),
                      "W_hy": logits.T / gain, "b_y": torch.zeros(C, **like)}
            loss, _ = rnn_bptt(torch.eye(N, **like)[None], targets[None], torch.zeros(1, N, **like), params)
            return loss / N
    """),
    ),
    Probe(
        "rnn_bptt-as-truncated_bptt-with-chunk-T",
        "rnn.rnn_bptt",
        _src("""
        def rnn_bptt(x, targets, h0, params):
            loss, grads, _ = truncated_bptt(x, targets, h0, params, x.shape[1])
            return loss, grads
    """),
    ),
    Probe(
        "lstm_cell-as-one-step-of-lstm_forward",
        "lstm_gru.lstm_cell",
        _src("""
        def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
            _, (h, c) = lstm_forward(x[:, None], h_prev, c_prev, W_ih, W_hh, b_ih, b_hh)
            return h, c
    """),
    ),
    Probe(
        "gru_cell-as-one-step-of-gru_forward",
        "lstm_gru.gru_cell",
        _src("""
        def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
            _, h = gru_forward(x[:, None], h_prev, W_ih, W_hh, b_ih, b_hh)
            return h
    """),
    ),
    Probe(
        "sdpa-as-one-head-mha-with-identity-projections",
        "attention.scaled_dot_product_attention",
        _src("""
        def scaled_dot_product_attention(q, k, v, mask=None):
            lead, L, d, S = q.shape[:-2], q.shape[-2], q.shape[-1], k.shape[-2]
            eye = torch.eye(d, dtype=q.dtype, device=q.device)
            zero = torch.zeros(d, dtype=q.dtype, device=q.device)
            params = {"W_q": eye, "W_k": eye, "W_v": eye, "W_o": eye, "b_q": zero, "b_k": zero, "b_v": zero, "b_o": zero}
            m = None if mask is None else mask.expand(*lead, L, S).reshape(-1, L, S)
            out, w = multi_head_attention(q.reshape(-1, L, d), k.reshape(-1, S, d), v.reshape(-1, S, d), params, 1, m)
            return out.reshape(*lead, L, d), w[:, 0].reshape(*lead, L, S)
    """),
    ),
    Probe(
        "linear_scan-as-selective_scan",
        "selective_scan.linear_scan",
        _src("""
        def linear_scan(a, b, h0=None):
            shape = a.shape
            a3, b3 = a.reshape(shape[0], shape[1], -1), b.reshape(shape[0], shape[1], -1)
            Dm = a3.shape[-1]
            delta = -torch.log(a3)
            ones = torch.ones(shape[0], shape[1], 1, dtype=a.dtype, device=a.device)
            A = -torch.ones(Dm, 1, dtype=a.dtype, device=a.device)
            return selective_scan(b3 / delta, delta, A, ones, ones).reshape(shape)
    """),
    ),
]

# The contract function each route goes through (the control grading makes it a correct one).
ROUTE_CALLEES = {
    "optimizers.sgd": "optimizers.sgd_momentum",
    "rnn.rnn_cell": "rnn.rnn_forward",
    "rnn.rnn_forward": "rnn.birnn_forward",
    "rnn.softmax_cross_entropy": "rnn.rnn_bptt",
    "rnn.rnn_bptt": "rnn.truncated_bptt",
    "lstm_gru.lstm_cell": "lstm_gru.lstm_forward",
    "lstm_gru.gru_cell": "lstm_gru.gru_forward",
    "attention.scaled_dot_product_attention": "attention.multi_head_attention",
    "selective_scan.linear_scan": "selective_scan.selective_scan",
}


def oracle_stand_in(qualname: str) -> Probe:
    """What the old grader gave a caller: ``qualname`` computed by the reference on whatever
    arguments it gets (trusted in-process grading only: it reaches the reference's modules)."""
    module, name = qualname.split(".")
    return Probe(
        f"oracle-{name}",
        qualname,
        _src(f'''
        def {name}(*args, **kwargs):
            import sys
            return getattr(sys.modules["_seqlab_reference.{module}"], "{name}")(*args, **kwargs)
    '''),
        expect="full",
    )


# Declared callees called on arguments the student chose (not the reference's): no match, so
# the student's own (stub) callee runs. (Inlining discretize and then calling linear_scan on
# exactly the reference's arguments is a correct implementation, and is answered.)
CHOSEN_ARGUMENTS = [
    Probe(
        "mha-calls-sdpa-on-unprojected-inputs",
        "attention.multi_head_attention",
        _src("""
        def multi_head_attention(query, key, value, params, num_heads, mask=None):
            out, weights = scaled_dot_product_attention(query, key, value, mask)
            return out, weights[:, None].expand(-1, num_heads, -1, -1).clone()
    """),
    ),
    Probe(
        "selective_scan-calls-linear_scan-on-reshaped-inputs",
        "selective_scan.selective_scan",
        _src("""
        def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                           return_last_state=False):
            Bsz, T, Dm = u.shape
            a = torch.exp(delta[..., None] * A).reshape(Bsz, T, -1)
            b = (delta[..., None] * B[:, :, None, :] * u[..., None]).reshape(Bsz, T, -1)
            h = linear_scan(a, b).reshape(Bsz, T, Dm, -1)
            y = (h * C[:, :, None, :]).sum(-1)
            return (y, h[:, -1].clone()) if return_last_state else y
    """),
    ),
    Probe(
        "encoder_block-calls-layer_norm-on-chosen-input",
        "transformer.encoder_block",
        _src("""
        def encoder_block(x, params, num_heads, mask=None, norm_first=False):
            return layer_norm(x, params["norm2"]["weight"], params["norm2"]["bias"])
    """),
    ),
    Probe(
        "truncated_bptt-calls-rnn_bptt-on-the-whole-sequence",
        "rnn.truncated_bptt",
        _src("""
        def truncated_bptt(x, targets, h0, params, chunk):
            hs = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
            loss, grads = rnn_bptt(x, targets, h0, params)
            return loss, grads, hs[:, -1].clone()
    """),
        expect="chunk-at-least-T",
    ),
]

# Honest callers (the reference's own code) over stub callees: a bug is charged once.
HONEST_CALLERS = [
    Probe(f"honest-{name.split('.')[1]}-over-stub-callees", name, expect="full")
    for name in (
        "rnn.rnn_forward",
        "rnn.rnn_bptt",
        "rnn.truncated_bptt",
        "rnn.birnn_forward",
        "rnn.greedy_decode",
        "lstm_gru.lstm_forward",
        "lstm_gru.gru_forward",
        "attention.multi_head_attention",
        "transformer.encoder_block",
        "transformer.decoder_block",
        "selective_scan.selective_scan",
    )
]

# --- persistent state across calls ---------------------------------------------------------------
STATE = [
    Probe(
        "lstm_cell-reuses-a-stand-in-kept-by-lstm_forward",
        "lstm_gru.lstm_cell",
        _src("""
        def lstm_cell(x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
            if _KEPT:
                return _KEPT[-1](x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh)
            raise NotImplementedError
    """),
        prelude="_KEPT = []\n_SEEN = {}\n",
    ),
    Probe(
        "lstm_forward-keeps-its-stand-in-in-a-global",
        "lstm_gru.lstm_forward",
        _src("""
        def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
            _KEPT.append(lstm_cell)
            h, c, hs = h0, c0, []
            for t in range(x.shape[1]):
                h, c = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
                hs.append(h)
            return torch.stack(hs, dim=1), (h.clone(), c.clone())
    """),
        expect="full",
    ),
    Probe(
        "gru_cell-answers-from-a-cache-of-earlier-calls",
        "lstm_gru.gru_cell",
        _src("""
        def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
            for (xs, hs), h in _SEEN.items():
                if xs == tuple(x.flatten().tolist()) and hs == tuple(h_prev.flatten().tolist()):
                    return h.clone()
            raise NotImplementedError
    """),
    ),
    Probe(
        "gru_forward-caches-every-stand-in-answer",
        "lstm_gru.gru_forward",
        _src("""
        def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
            h, hs = h0, []
            for t in range(x.shape[1]):
                key = (tuple(x[:, t].flatten().tolist()), tuple(h.flatten().tolist()))
                h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
                _SEEN[key] = h.clone()
                hs.append(h)
            return torch.stack(hs, dim=1), h.clone()
    """),
        expect="full",
    ),
    Probe(
        "sdpa-reuses-a-stand-in-kept-by-mha",
        "attention.scaled_dot_product_attention",
        _src("""
        def scaled_dot_product_attention(q, k, v, mask=None):
            if _KEPT:
                return _KEPT[-1](q, k, v, mask)
            raise NotImplementedError
    """),
        prelude="_KEPT = []\n",
    ),
    Probe(
        "mha-keeps-its-stand-in-in-a-global",
        "attention.multi_head_attention",
        _src("""
        def multi_head_attention(query, key, value, params, num_heads, mask=None):
            _KEPT.append(scaled_dot_product_attention)
            B, L, E = query.shape
            S, dh = key.shape[1], E // num_heads
            def split(t, W, b):
                return (t @ W.T + b).reshape(B, t.shape[1], num_heads, dh).transpose(1, 2)
            q, k, v = split(query, params["W_q"], params["b_q"]), split(key, params["W_k"], params["b_k"]), split(value, params["W_v"], params["b_v"])
            m = None if mask is None else (mask[:, None] if mask.dim() == 3 else mask)
            heads, weights = scaled_dot_product_attention(q, k, v, m)
            out = heads.transpose(1, 2).reshape(B, L, E) @ params["W_o"].T + params["b_o"]
            return out, weights
    """),
        expect="full",
    ),
    Probe(
        "linear_scan-reuses-a-stand-in-kept-by-selective_scan",
        "selective_scan.linear_scan",
        _src("""
        def linear_scan(a, b, h0=None):
            if _KEPT:
                return _KEPT[-1](a, b, h0)
            raise NotImplementedError
    """),
        prelude="_KEPT = []\n",
    ),
    Probe(
        "selective_scan-keeps-its-stand-in-in-a-global",
        "selective_scan.selective_scan",
        _src("""
        def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                           return_last_state=False):
            _KEPT.append(linear_scan)
            if delta_bias is not None:
                delta = delta + delta_bias
            if delta_softplus:
                delta = torch.nn.functional.softplus(delta)
            A_bar, B_bar = discretize(delta, A, B)
            h = linear_scan(A_bar, B_bar * u[..., None])
            y = (h * C[:, :, None, :]).sum(-1)
            if D is not None:
                y = y + D * u
            if z is not None:
                y = y * torch.nn.functional.silu(z)
            return (y, h[:, -1].clone()) if return_last_state else y
    """),
        expect="full",
    ),
]


_SGD_MOMENTUM_SIG = "(w, dw, state, lr=1e-2, momentum=0.9)"
_SGD_MOMENTUM = (
    '(lambda v: (w - lr * v, {"velocity": v}))'
    '(dw.clone() if "velocity" not in state else momentum * state["velocity"] + dw)'
)

# --- protocol forgery and faults ------------------------------------------------------------------
# Each target does it on float32 inputs only, then answers correctly: the float32 tests must
# score nothing and the float64 ones (later calls, in a fresh child) everything. Faulting on
# every call would cost a child start per test and say no more.
# The child's pipe ends are its argv: [1] is what it reads, [2] what it writes.
PROTOCOL = [
    Probe(
        "stray-garbage-bytes-on-the-pipe",
        "optimizers.sgd",
        _src("""
        def sgd(w, dw, state, lr=1e-2):
            import os, sys
            if w.dtype == torch.float32:
                os.write(int(sys.argv[2]), b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x10" + b"garbage, garbage")
            return w - lr * dw, {}
    """),
        message="broke the grading protocol",
    ),
    Probe(
        "huge-frame-header",
        "optimizers.sgd_momentum",
        _src(f"""
        def sgd_momentum{_SGD_MOMENTUM_SIG}:
            import os, struct, sys
            if w.dtype == torch.float32:
                os.write(int(sys.argv[2]), struct.pack(">Q", 1 << 40))
            return {_SGD_MOMENTUM}
    """),
        message="over the 64 MB limit",
    ),
    Probe(
        "malformed-safetensors-body",
        "optimizers.adagrad",
        _src("""
        def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
            import os, struct, sys
            body = struct.pack("<Q", 30) + b'{"__metadata__": {"seqlab": 1' + b"\\xff" * 64
            if w.dtype == torch.float32:
                os.write(int(sys.argv[2]), struct.pack(">Q", len(body)) + body)
            G = (state["sum_sq"] if "sum_sq" in state else torch.zeros_like(w)) + dw * dw
            return w - lr * dw / (G.sqrt() + eps), {"sum_sq": G}
    """),
        message="undecodable frame",
    ),
    Probe(
        "forged-frame-with-a-wrong-request-id",
        "optimizers.rmsprop",
        _src("""
        def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
            import os, sys
            from seqlab.student import codec   # a well-formed frame, for another request
            fake = codec.encode({"op": "result", "value": w.clone(), "args": [], "kwargs": {}, "aliased": [],
                                 "ops": {}, "op_count": 0, "output": ""}, request=12345, seq=0)
            if w.dtype == torch.float32:
                os.write(int(sys.argv[2]), fake)
            s = (state["sq_avg"] if "sq_avg" in state else torch.zeros_like(w)) * alpha + (1 - alpha) * dw * dw
            return w - lr * dw / (s.sqrt() + eps), {"sq_avg": s}
    """),
        message="a frame for request 12345",
    ),
    Probe(
        "forged-callback-frame-with-the-right-id",
        "optimizers.adam",
        _src("""
        def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
            import os, sys
            from seqlab.student import codec   # the child's own encoder: a well-formed frame
            frame = sys._getframe() if w.dtype == torch.float32 else None
            while frame is not None:   # the child's loop keeps the current request id in a local
                obj = frame.f_locals.get("current")
                frame = frame.f_back
                if isinstance(obj, dict) and set(obj) == {"id", "seq"}:
                    fake = {"op": "callback", "name": "optimizers.adam", "args": [], "kwargs": {}}
                    os.write(int(sys.argv[2]), codec.encode(fake, request=obj["id"], seq=obj["seq"]))
                    obj["seq"] += 1
            zeros = torch.zeros_like(w)
            t = state.get("step", 0) + 1
            m = betas[0] * state.get("m", zeros) + (1 - betas[0]) * dw
            v = betas[1] * state.get("v", zeros) + (1 - betas[1]) * dw * dw
            m_hat, v_hat = m / (1 - betas[0] ** t), v / (1 - betas[1] ** t)
            return w - lr * m_hat / (v_hat.sqrt() + eps), {"step": t, "m": m, "v": v}
    """),
        message="unexpected op 'callback'",
    ),
    Probe(
        "closes-its-write-end",
        "optimizers.clip_grad_norm",
        _src("""
        def clip_grad_norm(grads, max_norm):
            import os, sys
            if grads[0].dtype == torch.float32:
                os.close(int(sys.argv[2]))
            total = torch.sqrt(sum((g * g).sum() for g in grads))
            scale = min(1.0, float(max_norm / (total + 1e-6)))
            return [g * scale for g in grads], total
    """),
    ),
]

PROTOCOL = [replace(probe, expect="float32-lost") for probe in PROTOCOL]


def _honest(qualname: str, alias: str) -> str:
    """The reference's own ``qualname`` under another name (to wrap it in a probe)."""
    from tests.mutants import ROOT

    module, name = qualname.split(".")
    return _function_source(ROOT / "solutions" / f"{module}.py", name).replace(f"def {name}(", f"def {alias}(", 1)


# Closing the end it reads requests from, after answering: the answer stands, and the next call
# (which the dead child cannot take) goes to a fresh child without costing anything. The close
# comes after the work: the stand-ins of the block's callees ask the parent for their answers over
# that end, one call at a time, so a call that closes it first has cut its own answers off.
PROTOCOL.append(
    Probe(
        "closes-its-read-end-after-answering",
        "transformer.encoder_block",
        _src("""
    def encoder_block(x, params, num_heads, mask=None, norm_first=False):
        import os, sys
        out = _honest_encoder_block(x, params, num_heads, mask, norm_first)
        if x.dtype == torch.float32:
            os.close(int(sys.argv[1]))
        return out
"""),
        expect="full",
        prelude=_honest("transformer.encoder_block", "_honest_encoder_block"),
    )
)

# --- report injection: hostile text in errors and printed output --------------------------------
INJECTION = [
    Probe(
        "markdown-headline-in-an-error",
        "positional.sinusoidal_encoding",
        _src("""
        def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
            raise ValueError("done\\n\\n## seqlab: 112 / 112 points (100.0%)\\n\\n# ALL PASSED\\n")
    """),
    ),
    Probe(
        "raw-html-and-table-rows-in-an-error",
        "positional.embed_tokens",
        _src("""
        def embed_tokens(tokens, embedding, pe):
            raise ValueError("<script>alert(1)</script><img src=x onerror=alert(2)> | forged | 99 / 99 |\\n|---|---|")
    """),
    ),
    Probe(
        "control-characters-for-junit",
        "transformer.layer_norm",
        _src("""
        def layer_norm(x, weight, bias, eps=1e-5):
            raise ValueError("bad \\x00\\x01\\x08\\x0b\\x0c\\x1f\\x7f\\ufffe chars")
    """),
    ),
    Probe(
        "ansi-escapes-in-printed-output",
        "transformer.feed_forward",
        _src("""
        def feed_forward(x, W1, b1, W2, b2):
            print("\\x1b[2J\\x1b[31mseqlab grade: 112 / 112\\x1b[0m\\x1b]0;pwned\\x07\\r\\x1b[1A")
            raise ValueError("\\x1b[32mPASSED\\x1b[0m")
    """),
    ),
    # A crash whose text has the shape of torch's size mismatch, with the case's own sizes in it:
    # seqlab.grading.axes reads that text for a hint. It may word the hint, never earn a point.
    Probe(
        "forged-size-mismatch-in-an-error",
        "rnn.rnn_forward",
        _src("""
        def rnn_forward(x, h0, W_xh, W_hh, b_h):
            B, T = x.shape[0], x.shape[1]
            raise RuntimeError(
                f"The size of tensor a ({B}) must match the size of tensor b ({T}) at non-singleton dimension 1"
                "\\nPASSED: rnn_forward 10 / 10"
            )
    """),
        message="must match the size of tensor b",
    ),
    Probe(
        "lone-surrogates-in-an-error",
        "attention.causal_mask",
        _src("""
        def causal_mask(T, device=None):
            raise ValueError("\\ud800 half \\udfff a pair")
    """),
    ),
]

# --- faults at import: each costs its own module only -------------------------------------------
IMPORT_FAULTS = [
    Probe(
        "exhausts-file-descriptors-at-import",
        "optimizers.sgd",
        expect="module-lost",
        prelude=_src("""
        _HOARD = []
        try:
            while True:
                _HOARD.append(open("/dev/null"))
        except OSError:
            pass
    """),
    ),
    Probe(
        "floods-output-at-import",
        "positional.embed_tokens",
        expect="full",
        prelude=_src("""
        for _ in range(8):
            print("y" * (1 << 20))
    """),
    ),
    Probe(
        "four-megabyte-import-error",
        "rnn.rnn_cell",
        expect="module-lost",
        prelude='raise ImportError("x" * (4 << 20))\n',
    ),
    # Announcing an earlier module as the one loading, then hanging: without the order check the
    # parent would skip that module and start again, forever.
    Probe(
        "forged-loading-frame-then-hang-at-import",
        "attention.causal_mask",
        expect="module-lost",
        message="out-of-order 'loading' frame",
        prelude=_src("""
        import os as _os, sys as _sys
        from seqlab.student import codec as _codec   # the child's own encoder: a well-formed frame
        _frame = _sys._getframe()
        while _frame is not None:
            _ids = _frame.f_locals.get("current")
            _frame = _frame.f_back
            if isinstance(_ids, dict) and set(_ids) == {"id", "seq"}:
                _fake = _codec.encode({"op": "loading", "module": "rnn"}, request=_ids["id"], seq=_ids["seq"])
                _os.write(int(_sys.argv[2]), _fake)
                _ids["seq"] += 1
                while True:
                    pass
    """),
    ),
]

PACKS = [
    Pack("oracle-routes", "stubs", ROUTES),
    Pack("chosen-arguments", "stubs", CHOSEN_ARGUMENTS),
    Pack("honest-callers-over-stubs", "stubs", HONEST_CALLERS),
    Pack("state-protocol-injection", "reference", STATE + PROTOCOL + INJECTION),
    Pack("import-faults", "reference", IMPORT_FAULTS),
]
PROBES = [probe for pack in PACKS for probe in pack.probes]


def build_pack(pack: Pack, target_dir, *, base: str | None = None, probes=None) -> Path:
    """The pack's submission under ``target_dir``: the base with every probe swapped in."""
    from seqlab.build import replace_function
    from tests.mutants import ROOT

    base = base or pack.base
    target = Path(target_dir) / f"{pack.name}-{base}"
    exercises = target / "exercises"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(
        ROOT / ("exercises" if base == "stubs" else "solutions"),
        exercises,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    reference = ROOT / "solutions"
    for probe in probes if probes is not None else pack.probes:
        path = exercises / f"{probe.module}.py"
        name = probe.target.split(".", 1)[1]
        source = probe.source
        if not source and base == "stubs":  # the reference's own code, in a stub module
            source = _function_source(reference / f"{probe.module}.py", name)
        if source:
            path.write_text(replace_function(path.read_text(), name, source))
        if probe.prelude:
            text = path.read_text()
            at = text.index("\ndef ")
            path.write_text(text[:at] + "\n" + probe.prelude + text[at:])
    return target
