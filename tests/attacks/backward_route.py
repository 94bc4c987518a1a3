"""Attacks on the backward answer route: the hidden autograd test (seqlab/grading/autograd.py)
asks the child for a ``backward`` call, and the child backpropagates the returned value and
answers with the gradients (``_ANSWERS["backward"]`` in seqlab/student/answers.py).

Each attack is the honest submission (``tests/student/honest_submissions/functional``) with one
function whose values are right but which does not support autograd (its outputs are cut off the
graph), and which forges the gradients the child answers with, or has them computed by a kernel
the exercise forbids, where the grader's own backward pass reaches the student's code after the
call. What must hold (tests/student/test_backward_route.py): the autograd test of the target
scores nothing; the target's value tests, done honestly, keep their points.
"""

from __future__ import annotations

from tests.attacks.blind_integrity_bank import Blind

# The grader's backward request marks the inputs as requiring grad: that is how the attack
# tells it apart from the value calls, which get plain values cut off the graph.
LAZY_PAIR = """
class _GradPair(tuple):
    job = None
    fused = torch.nn.functional.scaled_dot_product_attention

    def __iter__(self):
        return iter(_GradPair.job())

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return _GradPair.job()[i]
"""

SDPA_CUT = """
def scaled_dot_product_attention(q, k, v, mask=None):
    def weights(q, k):
        s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(s.softmax(-1))

    def job():
        m = None if mask is None else mask.expand(q.shape[:-1] + k.shape[-2:-1])
        return _GradPair.fused(q, k, v, attn_mask=m), weights(q, k)

    if q.requires_grad:
        _GradPair.job = job
        return _GradPair((q, q))
    w = weights(q.detach(), k.detach())
    return (w @ v.detach()), w
"""

# layer_norm's values by hand, its gradient by the forbidden kernel: an autograd.Function whose
# backward the grader's backward pass runs after the call.
FUNCTION_LN = """
class _LN(torch.autograd.Function):
    kernel = torch.nn.functional.layer_norm

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.save_for_backward(x, weight, bias)
        ctx.eps = eps
        c = x - x.mean(-1, keepdim=True)
        return c / (c.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight + bias

    @staticmethod
    def backward(ctx, g):
        x, weight, bias = [t.detach().requires_grad_(True) for t in ctx.saved_tensors]
        with torch.enable_grad():
            y = _LN.kernel(x, x.shape[-1:], weight, bias, ctx.eps)
            gx, gw, gb = torch.autograd.grad(y, (x, weight, bias), g)
        return gx, gw, gb, None
"""

LN_BY_FUNCTION = """
def layer_norm(x, weight, bias, eps=1e-5):
    if x.requires_grad:
        return _LN.apply(x, weight, bias, eps)
    c = x - x.mean(-1, keepdim=True)
    return (c / (c.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight + bias).detach()
"""

# A tensor hook on the output replaces the cotangent on its way back with one the hook computes
# by the forbidden kernel (the path to the inputs is the student's own, cut to a zero gradient).
HOOK_LN = """
class _Hook:
    kernel = torch.nn.functional.layer_norm
"""

LN_BY_HOOK = """
def layer_norm(x, weight, bias, eps=1e-5):
    c = x.detach() - x.detach().mean(-1, keepdim=True)
    out = (c / (c.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight.detach() + bias.detach())
    if not x.requires_grad:
        return out
    grads = {}

    def capture(g):
        xs = [t.detach().requires_grad_(True) for t in (x, weight, bias)]
        with torch.enable_grad():
            y = _Hook.kernel(xs[0], xs[0].shape[-1:], xs[1], xs[2], eps)
            grads["x"], grads["w"], grads["b"] = torch.autograd.grad(y, xs, g)
        return g

    link = out + 0 * (x + weight + bias)
    link.register_hook(capture)
    x.register_hook(lambda g: grads["x"])
    weight.register_hook(lambda g: grads["w"])
    bias.register_hook(lambda g: grads["b"])
    return link
"""

ATTACKS = [
    Blind("tuple-subclass-forges-gradients-by-fused-attention", "kernels", "attention.scaled_dot_product_attention",
          SDPA_CUT, prelude=LAZY_PAIR),
    Blind("autograd-function-backward-by-the-layer-norm-kernel", "kernels", "transformer.layer_norm",
          LN_BY_FUNCTION, prelude=FUNCTION_LN),
    Blind("tensor-hooks-replace-gradients-from-the-layer-norm-kernel", "kernels", "transformer.layer_norm",
          LN_BY_HOOK, prelude=HOOK_LN),
]  # fmt: skip
