"""``selective_scan.linear_scan`` written many ways, for the complexity rule: honest scans of
O(log T) depth that must keep its points, and loops over time that must lose them while their
values stay right. Each is (prelude, source): helpers put at the top of the module, and the
``def linear_scan`` that replaces the reference's (empty source: the reference itself).

The attack bank (sandbox_bank.py) grades the loops; benchmarks/bench_scan_rule.py grades all
of them many times under load and counts the verdicts that went the wrong way.
"""

from __future__ import annotations

_PROMOTE = """
def _prepared(a, b, h0):
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    a, b = a.to(dtype), b.to(dtype, copy=True)
    if h0 is not None:
        b[:, 0] += a[:, 0] * h0.to(dtype)
    return a, b
"""

_HILLIS_STEELE = (
    _PROMOTE
    + """
def _doubling(a, b):
    # Hillis-Steele: every position composes with the one d to its left, d = 1, 2, 4, ...
    d, T = 1, a.shape[1]
    while d < T:
        b = torch.cat([b[:, :d], a[:, d:] * b[:, :-d] + b[:, d:]], 1)
        a = torch.cat([a[:, :d], a[:, d:] * a[:, :-d]], 1)
        d *= 2
    return b
"""
)

_ODD_EVEN = (
    _PROMOTE
    + """
def _odd_even(a, b):
    # Pairs (even, odd) compose into one map; the odd positions solve a recurrence of half the
    # length; the even ones follow from their left neighbour. Interleaved back with stack/cat.
    T = a.shape[1]
    if T == 1:
        return b
    n = T // 2
    a0, a1 = a[:, 0 : 2 * n : 2], a[:, 1 : 2 * n : 2]
    odd = _odd_even(a1 * a0, a1 * b[:, 0 : 2 * n : 2] + b[:, 1 : 2 * n : 2])
    even = torch.cat([b[:, :1], a[:, 2::2] * odd[:, : (T - 1) // 2] + b[:, 2::2]], 1)
    return torch.cat([torch.stack([even[:, :n], odd], 2).flatten(1, 2), even[:, n:]], 1)
"""
)

_CHUNKED = (
    _HILLIS_STEELE
    + """
def _chunked(a, b, chunk=64):
    # A scan inside every chunk of 64 steps at once, then a scan of the chunks' own maps gives
    # the state entering each chunk: log-depth at both levels.
    B, T, rest = a.shape[0], a.shape[1], a.shape[2:]
    K = -(-T // chunk)
    if K * chunk > T:
        a = torch.cat([a, a.new_ones(B, K * chunk - T, *rest)], 1)
        b = torch.cat([b, b.new_zeros(B, K * chunk - T, *rest)], 1)
    A = a.reshape(B * K, chunk, *rest)
    H = _doubling(A, b.reshape(B * K, chunk, *rest))
    d = 1
    while d < chunk:
        A = torch.cat([A[:, :d], A[:, d:] * A[:, :-d]], 1)
        d *= 2
    A, H = A.reshape(B, K, chunk, *rest), H.reshape(B, K, chunk, *rest)
    if K > 1:
        carry = _chunked(A[:, :, -1].contiguous(), H[:, :, -1].contiguous(), chunk)
        H = H + A * torch.cat([torch.zeros_like(carry[:, :1]), carry[:, :-1]], 1)[:, :, None]
    return H.reshape(B, K * chunk, *rest)[:, :T]
"""
)

HONEST = {
    "reference-blelloch": ("", ""),
    "hillis-steele": (_HILLIS_STEELE, "def linear_scan(a, b, h0=None):\n    return _doubling(*_prepared(a, b, h0))\n"),
    "recursive-odd-even": (_ODD_EVEN, "def linear_scan(a, b, h0=None):\n    return _odd_even(*_prepared(a, b, h0))\n"),
    "chunked": (_CHUNKED, "def linear_scan(a, b, h0=None):\n    return _chunked(*_prepared(a, b, h0))\n"),
}

# The fastest loop over Python floats we know of: one channel at a time, locals only.
_FLOAT_LOOP = """
def _float_loop(a, b, h0):
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    T = a.shape[1]
    rows_a = a.to(dtype).movedim(1, -1).reshape(-1, T).tolist()
    rows_b = b.to(dtype).movedim(1, -1).reshape(-1, T).tolist()
    starts = [0.0] * len(rows_a) if h0 is None else h0.to(dtype).reshape(-1).tolist()
    out = []
    for row_a, row_b, h in zip(rows_a, rows_b, starts):
        row = [0.0] * T
        for t in range(T):
            h = row_a[t] * h + row_b[t]
            row[t] = h
        out.append(row)
    shape = (a.shape[0], *a.shape[2:], T)
    return torch.tensor(out, dtype=dtype).reshape(shape).movedim(-1, 1).contiguous()
"""

_TENSOR_LOOP = """def linear_scan(a, b, h0=None):
    h = torch.zeros_like(b[:, 0]) if h0 is None else h0
    out = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return torch.stack(out, dim=1)
"""

LOOPS = {
    "tensor-loop-over-time": ("", _TENSOR_LOOP),
    "loop-over-python-floats": (_FLOAT_LOOP, "def linear_scan(a, b, h0=None):\n    return _float_loop(a, b, h0)\n"),
    # fresh inputs every round: the cache never hits
    "loop-with-a-cache-keyed-on-the-input": (
        _FLOAT_LOOP + "\n_CACHE = {}\n",
        """def linear_scan(a, b, h0=None):
    key = (tuple(a.shape), str(a.dtype), float(a.sum()), float(b.sum()), None if h0 is None else float(h0.sum()))
    if key not in _CACHE:
        _CACHE[key] = _float_loop(a, b, h0)
    return _CACHE[key].clone()
""",
    ),
    # A module-level __getattr__ runs on a lookup of any missing name: it spends what the last
    # call spent, so a ping that looked its name up with getattr took as long as the loop.
    "loop-hidden-in-a-module-getattr": (
        _FLOAT_LOOP
        + """
_LAST = []


def __getattr__(name):
    if _LAST:
        _float_loop(*_LAST[-1])
    raise AttributeError(name)
""",
        """def linear_scan(a, b, h0=None):
    _LAST[:] = [(a, b, h0)]
    return _float_loop(a, b, h0)
""",
    ),
}

# Loops the language subset refuses before any timing (a module-level ``__getattr__``): the
# attack bank and the benchmark grade them with the subset off, so the timing rule beneath is
# what they measure.
OUTSIDE_THE_SUBSET = frozenset({"loop-hidden-in-a-module-getattr"})
