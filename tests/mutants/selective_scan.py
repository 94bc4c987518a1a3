"""Known-wrong and alternative-correct selective-scan functions (see tests/mutants/__init__.py).

The module has no forbidden operations (grading_config.yaml), so no mutant here is voided; the
sequential-loop ``linear_scan`` is the one that must lose only the complexity points.
"""

from tests.mutants import Alternative, FromTable, Mutant

MUTANTS = [
    # --- discretize ------------------------------------------------------------------------------
    FromTable("selective_scan.discretize", "first-order approximation 1 + delta*A", "first-order approximation"),
    FromTable("selective_scan.discretize", "full zero-order hold for B", "ZOH for B"),
    FromTable("selective_scan.discretize", "exp(-delta*A), taking A as positive", "sign of A flipped"),
    # --- linear_scan -----------------------------------------------------------------------------
    FromTable("selective_scan.linear_scan", "ignores h0", "h0 ignored"),
    FromTable("selective_scan.linear_scan", "prefix product with division", "prefix product with division"),
    Mutant(
        "selective_scan.linear_scan",
        "scans in place on b (modifies an argument)",
        """
def linear_scan(a, b, h0=None):
    h = b
    if h0 is not None:
        h[:, 0] += a[:, 0] * h0
    step = 1
    while step < h.shape[1]:
        h[:, step:] += a[:, step:] * h[:, :-step].clone()
        a = torch.cat([a[:, :step], a[:, step:] * a[:, :-step]], dim=1)
        step *= 2
    return h.clone()
""",
    ),
    FromTable(
        "selective_scan.linear_scan",
        "returns h_0 ... h_{T-1} (the state before each step)",
        "initial state in the output",
    ),
    # --- selective_scan --------------------------------------------------------------------------
    FromTable(
        "selective_scan.selective_scan",
        "softplus before adding delta_bias",
        "softplus applied before adding delta_bias",
    ),
    FromTable("selective_scan.selective_scan", "sigmoid gate instead of silu", "sigmoid gate"),
    FromTable("selective_scan.selective_scan", "forgets the D skip", "D skip missing"),
    FromTable(
        "selective_scan.selective_scan",
        "returns every state instead of the last",
        "returned h for all T instead of the last state",
    ),
    FromTable("selective_scan.selective_scan", "inline ZOH discretisation of B in a sequential loop", "ZOH for B"),
    FromTable("selective_scan.selective_scan", "gate applied before the D skip", "gate applied before the D skip"),
    FromTable(
        "selective_scan.selective_scan",
        "channel-first output like selective_scan_ref",
        "transposed layout (channel-first)",
    ),
    FromTable(
        "selective_scan.selective_scan", "state starts at the first input (counted twice)", "state not starting at zero"
    ),
    Mutant(
        "selective_scan.selective_scan",
        "adds delta_bias in place (modifies delta)",
        """
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False):
    if delta_bias is not None:
        delta += delta_bias
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)
    h = linear_scan(A_bar, B_bar * u[..., None])
    y = torch.einsum("btdn,btn->btd", h, C)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    return (y, h[:, -1].clone()) if return_last_state else y
""",
    ),
]

ALTERNATIVES = [
    Alternative(
        "selective_scan.linear_scan",
        "Hillis-Steele doubling scan (log2 T levels, O(T log T) work)",
        """
def linear_scan(a, b, h0=None):
    h = b.clone() if h0 is None else torch.cat([b[:, :1] + a[:, :1] * h0[:, None], b[:, 1:]], dim=1)
    step = 1
    while step < h.shape[1]:
        # position t absorbs the composed map ending at t - step
        h = torch.cat([h[:, :step], h[:, step:] + a[:, step:] * h[:, :-step]], dim=1)
        a = torch.cat([a[:, :step], a[:, step:] * a[:, :-step]], dim=1)
        step *= 2
    return h
""",
    ),
    Alternative(
        "selective_scan.linear_scan",
        "recursive odd/even scan (recursion depth log2 T)",
        """
def linear_scan(a, b, h0=None):
    if h0 is not None:
        b = torch.cat([b[:, :1] + a[:, :1] * h0[:, None], b[:, 1:]], dim=1)
    T = b.shape[1]
    if T == 1:
        return b.clone()
    even_a, odd_a = a[:, 0:T - 1:2], a[:, 1::2]
    even_b, odd_b = b[:, 0:T - 1:2], b[:, 1::2]
    pairs = linear_scan(odd_a * even_a, odd_a * even_b + odd_b)   # h at positions 1, 3, 5, ...
    h = torch.empty_like(b)
    h[:, 1::2] = pairs
    h[:, 0] = b[:, 0]
    h[:, 2::2] = a[:, 2::2] * pairs[:, : (T - 1) // 2] + b[:, 2::2]
    return h
""",
    ),
    Alternative(
        "selective_scan.selective_scan",
        "sequential loop over time, no linear_scan",
        """
def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False):
    if delta_bias is not None:
        delta = delta + delta_bias[None, None, :]
    if delta_softplus:
        delta = torch.log1p(torch.exp(-delta.abs())) + delta.clamp_min(0)
    Bsz, T, Dm = u.shape
    h = torch.zeros(Bsz, Dm, A.shape[1], dtype=torch.promote_types(u.dtype, A.dtype), device=u.device)
    ys = []
    for t in range(T):
        h = torch.exp(delta[:, t, :, None] * A) * h + delta[:, t, :, None] * B[:, t, None, :] * u[:, t, :, None]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    y = torch.stack(ys, dim=1)
    if D is not None:
        y = y + u * D
    if z is not None:
        y = y * z * torch.sigmoid(z)
    return (y, h) if return_last_state else y
""",
    ),
    Alternative(
        "selective_scan.discretize",
        "exp of an einsum outer product",
        """
def discretize(delta, A, B):
    return torch.einsum("btd,dn->btdn", delta, A).exp(), torch.einsum("btd,btn->btdn", delta, B)
""",
    ),
]

# A scan that is right on every value but writes in place into the tensor autograd saved for its
# backward pass (the reference's fast path, with no second path for inputs that require grad):
# the selective-copy lab then crashes with autograd's "modified by an inplace operation". It is
# not in MUTANTS because the hidden tests run linear_scan in the student's process, which returns
# values, not graphs: no hidden test of linear_scan can backpropagate through it there (the
# runner would need a call that returns gradients, seqlab/student). Its own public test
# test_linear_scan_supports_autograd catches it, and the lab's feedback names the functions it
# trains through (tests/labs/test_lab_autograd.py).
INPLACE_UNDER_AUTOGRAD = Mutant(
    "selective_scan.linear_scan",
    "writes in place into what autograd saved (no second path under autograd)",
    """
def linear_scan(a, b, h0=None):
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    a = a.to(dtype)
    h = out = b.to(dtype, memory_format=torch.contiguous_format, copy=True)
    if h0 is not None:
        h[:, 0] = h[:, 0] + a[:, 0] * h0
    levels = []
    while h.shape[1] > 1:
        T = h.shape[1]
        h[:, 1::2] += a[:, 1::2] * h[:, 0 : T - 1 : 2]
        levels.append((a, h))
        a, h = a[:, 1::2] * a[:, 0 : T - 1 : 2], h[:, 1::2]
    for a, h in reversed(levels):
        T = h.shape[1]
        h[:, 2::2] += a[:, 2::2] * h[:, 1 : T - 1 : 2]
    return out
""",
    hint="in-place write under autograd",
)
