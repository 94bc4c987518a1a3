# function: selective_scan.copy_logits
# mistake: A is taken as exp(A_log) without the minus sign, so the state grows, exp(delta A) > 1,
#   instead of decaying
# class: sign error
# confirmed: logits off by 5e11 vs a sequential float64 loop of the docstring's model (B=3 T=20
#   M=5 D=6 N=4)
import torch


def copy_logits(params, tokens, selective=True):
    u = params["embedding"][tokens]
    Bsz, T, _ = u.shape
    if selective:
        delta = u @ params["W_delta"].T + params["b_delta"]
        B = u @ params["W_B"].T + params["b_B"]
        C = u @ params["W_C"].T + params["b_C"]
    else:
        delta = params["b_delta"].expand(Bsz, T, -1)
        B = params["b_B"].expand(Bsz, T, -1)
        C = params["b_C"].expand(Bsz, T, -1)
    A = torch.exp(params["A_log"])
    y = selective_scan(u, delta, A, B, C, params["D"], delta_softplus=True)
    return y[:, -COPY_COUNT:] @ params["W_out"].T + params["b_out"]
