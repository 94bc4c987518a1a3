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
    A_bar = (delta[..., None] * A).exp_()  # exp in place on our own temporary: one (B,T,D,N) buffer
    B_bar = delta[..., None] * B[:, :, None, :]
    return A_bar, B_bar


def linear_scan(a, b, h0=None):
    h = torch.zeros_like(b[:, 0]) if h0 is None else h0 * torch.ones_like(b[:, 0])
    out = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return torch.stack(out, dim=1)


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False):
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
