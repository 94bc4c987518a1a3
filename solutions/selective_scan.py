"""Mamba's selective state-space scan, batch-first, with a parallel linear scan.

Notes: L5 §18 (from Transformer to SSM / Mamba: §18.1 RNN -> SSM -> Mamba, §18.2 the selective
mechanism, §18.3 why Mamba parallelises: the time-varying linear recurrence unrolls into prefix
products and prefix sums, computed by a parallel scan), and L7-8 (Lecture 7) §七 (Mamba / SSM as
the modern continuation of gated RNNs).

Conventions that matter here (Mamba's public ``selective_scan_ref``, transposed to batch-first):

- ``u (B, T, D)`` input, ``delta (B, T, D)`` step sizes, ``A (D, N)`` state matrix (diagonal per
  channel, negative real in practice), ``B (B, T, N)`` and ``C (B, T, N)`` input-dependent (shared
  by all D channels), ``D (D,)`` skip, ``z (B, T, D)`` gate. ``N`` is the state size per channel.
- The state ``h (B, D, N)`` starts at zero. Discretisation is zero-order hold for ``A`` and Euler
  for ``B`` (``B_bar = delta * B``), exactly as Mamba's code does (the paper's full ZOH ``B_bar``
  differs by O(delta^2)).
- ``selective_scan_ref`` computes in float32 and casts back; here the result has the dtype that
  PyTorch's type promotion gives the floating-point inputs (float64 stays float64).
- ``linear_scan`` is the parallel part: O(log T) sequential steps, no Python loop over time.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def discretize(delta, A, B):
    r"""Discretise the continuous SSM per time step and channel (zero-order hold / Euler).

    .. math::
        \bar A_{t,d,n} = \exp(\Delta_{t,d} A_{d,n}), \qquad
        \bar B_{t,d,n} = \Delta_{t,d} B_{t,n}

    :math:`\bar A` is the exact zero-order-hold transition of :math:`h' = A h`; :math:`\bar B` is
    the Euler (first-order) simplification Mamba's code uses instead of the ZOH
    :math:`(\Delta A)^{-1}(\exp(\Delta A) - I)\,\Delta B`. A large :math:`\Delta_t` makes token
    :math:`t` overwrite the state, a small one lets the state pass through (L5 §18.2).

    Args:
        delta (Tensor): (B, T, D) float32/float64, step sizes (positive in practice).
        A (Tensor): (D, N), continuous state matrix, one diagonal per channel.
        B (Tensor): (B, T, N), input matrix, shared by all channels.

    Returns:
        (A_bar, B_bar): two new (B, T, D, N) tensors, ``A_bar`` in the promoted dtype of ``delta``
        and ``A``, ``B_bar`` in that of ``delta`` and ``B``.

    Notes: L5 §18.1-§18.2.

    Agrees with the ``deltaA`` and ``deltaB`` (before the factor ``u``) of Mamba's
    ``selective_scan_ref``, transposed to batch-first.
    """
    ### BEGIN SOLUTION
    A_bar = (delta[..., None] * A).exp_()  # exp in place on our own temporary: one (B,T,D,N) buffer
    B_bar = delta[..., None] * B[:, :, None, :]
    return A_bar, B_bar
    ### END SOLUTION


def linear_scan(a, b, h0=None):
    r"""First-order linear recurrence along axis 1, in O(log T) parallel steps.

    .. math::
        h_t = a_t \odot h_{t-1} + b_t, \quad t = 1, \dots, T, \qquad h_0 = h0 \text{ (zeros if None)}

    Each step is the affine map :math:`x \mapsto a_t x + b_t`; composing two maps gives another,
    :math:`(a_1, b_1)` then :math:`(a_2, b_2)` is :math:`(a_2 a_1,\ a_2 b_1 + b_2)`, and the
    composition is associative, so :math:`h_t` is a prefix "sum" that a parallel scan computes
    (L5 §18.3). This one is Blelloch / Brent-Kung style, in place on the output (positions
    counted from 0 below):

    1. *Up-sweep*, one level per halving: every odd position absorbs its left neighbour,
       :math:`h_{2k+1} \mathrel{+}= a_{2k+1} h_{2k}`, and the odd positions, with the pair
       products :math:`a_{2k+1} a_{2k}` as coefficients, form a recurrence of half the length.
    2. *Down-sweep*, back up the levels: the odd positions are now final, so every even
       position finishes from the one before it, :math:`h_{2k} \mathrel{+}= a_{2k} h_{2k-1}`.

    That is :math:`2\lfloor\log_2 T\rfloor` levels of a few vectorised operations and O(T) work
    in total (any T, no padding). It is exact for any real ``a`` (negative, zero, above one): it
    only multiplies and adds, and its float rounding is that of a loop summing in another order. A cumulative product :math:`\prod a` with a division would underflow after ~50 steps
    and then explode; a log-space scan loses accuracy and needs complex logs for negative ``a``.

    Args:
        a (Tensor): (B, T, ...) float32/float64, the coefficients, any real values.
        b (Tensor): (B, T, ...), same shape as ``a``, the inputs.
        h0 (Tensor, optional): (B, ...), the state before the first step; zeros if None.

    Returns:
        h (Tensor): (B, T, ...), a new tensor, ``h[:, t]`` the state after step ``t``, in the
        promoted dtype of the inputs, on their device.

    Notes: L5 §18.3 (prefix product + prefix sum structure, parallel scan).

    Agrees with the sequential loop ``h = a[:, t] * h + b[:, t]`` (the loop inside Mamba's
    ``selective_scan_ref``) up to reassociation; PyTorch has no built-in for it.
    """
    ### BEGIN SOLUTION
    dtype = torch.promote_types(a.dtype, b.dtype)
    if h0 is not None:
        dtype = torch.promote_types(dtype, h0.dtype)
    a = a.to(dtype)  # the pair products below must be formed in the output's precision
    # The output starts as a contiguous copy of b and is completed in place, level by level.
    h = out = b.to(dtype, memory_format=torch.contiguous_format, copy=True)
    if h0 is not None:
        h[:, 0].addcmul_(a[:, 0], h0)  # fold the initial state into the first input
    levels = []
    while h.shape[1] > 1:  # up-sweep: log2(T) levels, each half as long as the one before
        T = h.shape[1]
        # Odd positions absorb their left neighbour (in place: reads and writes never overlap).
        h[:, 1::2].addcmul_(a[:, 1::2], h[:, 0 : T - 1 : 2])
        levels.append((a, h))
        # The odd positions form the next level (views into `out`, so writes land there).
        a, h = a[:, 1::2] * a[:, 0 : T - 1 : 2], h[:, 1::2]
    for a, h in reversed(levels):  # down-sweep: odd positions are final; finish the even ones
        T = h.shape[1]
        h[:, 2::2].addcmul_(a[:, 2::2], h[:, 1 : T - 1 : 2])
    return out
    ### END SOLUTION


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False, return_last_state=False):
    r"""Mamba's selective scan (S6), batch-first.

    .. math::
        \begin{aligned}
        \Delta &= \mathrm{softplus}(\Delta + \Delta_{bias}) \quad
            \text{(bias if given, softplus if asked)} \\
        h_t &= \exp(\Delta_t A) \odot h_{t-1} + \Delta_t B_t\, u_t, \qquad h_0 = 0 \\
        y_t &= \textstyle\sum_n h_{t,:,n} C_{t,n} + D \odot u_t \\
        y &\leftarrow y \odot \mathrm{silu}(z) \quad \text{(if z is given)}
        \end{aligned}

    The parameters :math:`\Delta_t, B_t, C_t` depend on the input (the selective mechanism,
    L5 §18.2), so the recurrence is time-varying and no convolution applies; it is still linear
    in :math:`h`, so :func:`linear_scan` computes all states in O(log T) parallel steps
    (L5 §18.3). Built from :func:`discretize` and :func:`linear_scan`.

    Args:
        u (Tensor): (B, T, D) float32/float64, the input.
        delta (Tensor): (B, T, D), step sizes before bias and softplus.
        A (Tensor): (D, N), state matrix (negative real in practice).
        B (Tensor): (B, T, N), input-dependent input matrix.
        C (Tensor): (B, T, N), input-dependent output matrix.
        D (Tensor, optional): (D,), skip connection; none if None.
        z (Tensor, optional): (B, T, D), gate, applied as ``y * silu(z)``; none if None.
        delta_bias (Tensor, optional): (D,), added to ``delta`` before the softplus.
        delta_softplus (bool): apply ``softplus`` to ``delta`` (after the bias). Default False.
        return_last_state (bool): also return the final state. Default False.

    Returns:
        y (Tensor): (B, T, D), new, in the promoted dtype of the floating-point inputs; and,
        when ``return_last_state``, the tuple ``(y, h_T)`` with ``h_T (B, D, N)`` the state
        after the last step.

    Notes: L5 §18.1-§18.3; L7-8 (Lecture 7) §七.

    Agrees with Mamba's ``selective_scan_ref(u.mT, delta.mT, A, B.mT, C.mT, D, z.mT, delta_bias,
    delta_softplus, return_last_state)`` (its layout is channel-first ``(B, D, T)``), output
    transposed back, in float32 up to reassociation.
    """
    ### BEGIN SOLUTION
    dtype = u.dtype  # work in the promoted dtype of all inputs, so mixed precision loses nothing
    for x in (delta, A, B, C, D, z, delta_bias):
        dtype = dtype if x is None else torch.promote_types(dtype, x.dtype)
    u, delta, A, B, C = (x.to(dtype) for x in (u, delta, A, B, C))
    if delta_bias is not None:
        delta = delta + delta_bias  # (D,) broadcasts over the last axis
    if delta_softplus:
        delta = F.softplus(delta)
    A_bar, B_bar = discretize(delta, A, B)  # (B, T, D, N) each
    h = linear_scan(A_bar, B_bar * u[..., None])  # all states h_t at once: (B, T, D, N)
    # Read out through C_t: a batched matmul, no (B, T, D, N) temporary.
    y = torch.einsum("btdn,btn->btd", h, C)
    if D is not None:
        y = y + D * u
    if z is not None:
        y = y * F.silu(z)
    if return_last_state:
        return y, h[:, -1].clone()  # a copy, so the caller does not keep all of h alive
    return y
    ### END SOLUTION
