"""Correct stand-ins for contract functions a notebook uses from another assignment.

The transformer notebook calls ``multi_head_attention`` and ``causal_mask`` from the attention
assignment; the labs call ``adam`` and ``clip_grad_norm`` (optimizers), ``rnn_forward`` and
``softmax_cross_entropy`` (rnn), ``sinusoidal_encoding`` and ``embed_tokens`` (positional). A notebook kernel has no package to import the student's
other answers from, and pasting the reference there would hand out another assignment's solution. These stand-ins are
built on PyTorch's own operations instead (``F.multi_head_attention_forward``,
``nn.Transformer.generate_square_subsequent_mask``), follow the contract's conventions (``True`` =
may attend, a fully masked row gives zero weights and ``b_o``) and are only for the notebook: the
exported module imports the student's own attention functions (``from .attention import ...``),
and the grader substitutes correct ones during graded calls either way.

An answer that imports from here is not an answer: importing this module from the graded
``exercises`` package raises ImportError.
"""

from __future__ import annotations

import sys
import types

import torch
import torch.nn.functional as F


def _imported_by_a_submission() -> bool:
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == "exercises" or name.startswith("exercises."):
            return True
        frame = frame.f_back
    return False


if _imported_by_a_submission():
    raise ImportError("seqlab.nbgrader.provided is for notebooks only; a submission must use its own functions")


def causal_mask(T, device=None):
    """(T, T) bool, ``True`` on and below the diagonal (see the attention assignment)."""
    return ~torch.isinf(torch.nn.Transformer.generate_square_subsequent_mask(T, device=device))


def multi_head_attention(query, key, value, params, num_heads, mask=None):
    """The contract's multi-head attention via ``F.multi_head_attention_forward``.

    ``query (B, L, E)``, ``key``/``value (B, S, E)``, ``params`` with ``W_q, W_k, W_v, W_o (E, E)``
    and ``b_q, b_k, b_v, b_o (E,)``; ``mask`` broadcastable to ``(B, L, S)``, ``True`` = may attend.
    Returns ``out (B, L, E)`` and ``weights (B, num_heads, L, S)``.
    """
    B, L, E = query.shape
    S = key.shape[1]
    attn_mask, empty_rows = None, None
    if mask is not None:
        allowed = torch.broadcast_to(mask.to(torch.bool), (B, L, S))
        empty_rows = ~allowed.any(dim=-1)  # (B, L)
        attn_mask = (~allowed).repeat_interleave(num_heads, dim=0)  # (B*h, L, S), True = blocked
    p = params
    out, weights = F.multi_head_attention_forward(
        query.transpose(0, 1),
        key.transpose(0, 1),
        value.transpose(0, 1),
        E,
        num_heads,
        in_proj_weight=None,
        in_proj_bias=torch.cat([p["b_q"], p["b_k"], p["b_v"]]),
        bias_k=None,
        bias_v=None,
        add_zero_attn=False,
        dropout_p=0.0,
        out_proj_weight=p["W_o"],
        out_proj_bias=p["b_o"],
        training=False,
        need_weights=True,
        attn_mask=attn_mask,
        use_separate_proj_weight=True,
        q_proj_weight=p["W_q"],
        k_proj_weight=p["W_k"],
        v_proj_weight=p["W_v"],
        average_attn_weights=False,
    )
    out = out.transpose(0, 1)
    if empty_rows is not None and bool(empty_rows.any()):
        # PyTorch gives NaN where every key is blocked; the contract gives zero weights and b_o.
        weights = weights.masked_fill(empty_rows[:, None, :, None], 0.0)
        out = torch.where(empty_rows[..., None], p["b_o"].expand_as(out), out)
    return out, weights


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    """Every hidden state ``(B, T, H)`` of the Elman RNN, through ``nn.RNN`` called with the given
    weights (differentiable in ``x`` and in them, for the labs)."""
    rnn = torch.nn.RNN(x.shape[-1], W_hh.shape[0], batch_first=True, device=x.device, dtype=x.dtype)
    weights = {"weight_ih_l0": W_xh, "weight_hh_l0": W_hh, "bias_ih_l0": b_h, "bias_hh_l0": torch.zeros_like(b_h)}
    hs, _ = torch.func.functional_call(rnn, weights, (x, h0[None]))  # differentiable in the weights too
    return hs


def clip_grad_norm(grads, max_norm):
    """``(clipped, total_norm)`` through ``torch.nn.utils.clip_grad_norm_`` on copies."""
    holders = [torch.zeros_like(g) for g in grads]
    for holder, g in zip(holders, grads):
        holder.grad = g.detach().clone()
    total = torch.nn.utils.clip_grad_norm_(holders, max_norm)
    return [holder.grad for holder in holders], total


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """One ``torch.optim.Adam`` step of ``w`` from ``state`` (``{}`` first); a new state dict."""
    p = w.detach().clone()
    p.grad = dw.detach().clone()
    opt = torch.optim.Adam([p], lr=lr, betas=betas, eps=eps)
    if state:
        opt.state[p] = {
            "step": torch.tensor(float(state["step"])),
            "exp_avg": state["m"].clone(),
            "exp_avg_sq": state["v"].clone(),
        }
    opt.step()
    kept = opt.state[p]
    return p.detach(), {"step": int(kept["step"]), "m": kept["exp_avg"].clone(), "v": kept["exp_avg_sq"].clone()}


def softmax_cross_entropy(logits, targets):
    """The mean cross-entropy, ``F.cross_entropy`` (the labs' losses)."""
    return F.cross_entropy(logits, targets)


def sinusoidal_encoding(num_positions, d_model, device=None, dtype=torch.float32):
    """Vaswani et al.'s encoding, interleaved sin/cos, as the positional assignment defines it (no
    PyTorch built-in computes it; given here only for the Transformer lab's cell)."""
    angle = torch.outer(
        torch.arange(num_positions, device=device, dtype=torch.float64),
        torch.pow(10000.0, -torch.arange(0, d_model, 2, device=device, dtype=torch.float64) / d_model),
    )
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1)[:, :d_model].to(dtype)


def embed_tokens(tokens, embedding, pe):
    """``F.embedding`` scaled by sqrt(d), plus the first T rows of ``pe``."""
    return F.embedding(tokens, embedding) * embedding.shape[1] ** 0.5 + pe[: tokens.shape[1]]


STAND_IN_PACKAGE = "seqlab_notebook"


def stand_in_package(names: dict[str, list[str]]) -> str:
    """The name of a package whose modules hold these stand-ins (``{"optimizers": ["adam"]}``:
    ``seqlab_notebook.optimizers.adam``), registered in ``sys.modules``. A notebook sets its
    ``__package__`` to it (PEP 366), so that an answer's own ``from .optimizers import adam``,
    written inside the function as in the graded module, finds a stand-in in the kernel."""
    package = sys.modules.get(STAND_IN_PACKAGE)
    if package is None:
        package = types.ModuleType(STAND_IN_PACKAGE, "correct stand-ins for other assignments' functions")
        package.__path__ = []  # a package: its modules are the ones registered below, nothing on disk
        sys.modules[STAND_IN_PACKAGE] = package
    own = globals()
    for topic, functions in names.items():
        name = f"{STAND_IN_PACKAGE}.{topic}"
        module = sys.modules.get(name) or types.ModuleType(name)
        for function in functions:
            setattr(module, function, own[function])
        sys.modules[name] = module
        setattr(package, topic, module)
    return STAND_IN_PACKAGE
