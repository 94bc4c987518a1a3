# function: rnn.sample_chars
# mistake: the temperature divides the probabilities after the softmax instead of the logits
#   before it, which multinomial's normalisation undoes: every temperature samples as tau = 1
# class: wrong formula
# confirmed: tokens drawn at tau=0.1 are identical to those at tau=1 (same seed); 12 of 36 differ
#   at tau=0.5 from a loop over nn.RNNCell + softmax(logits / tau) + multinomial
def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    V = params["W_hy"].shape[0]
    H = params["W_hh"].shape[0]
    ref = params["W_hh"]
    h = torch.zeros(start_token.shape[0], H, dtype=ref.dtype, device=ref.device)
    prev = start_token
    result = torch.zeros(start_token.shape[0], steps, dtype=torch.long, device=ref.device)
    for s in range(steps):
        x = F.one_hot(prev, V).to(ref.dtype)
        h = rnn_cell(x, h, params["W_xh"], params["W_hh"], params["b_h"])
        probs = torch.softmax(h @ params["W_hy"].T + params["b_y"], dim=-1) / temperature
        prev = torch.multinomial(probs, 1, generator=generator)[:, 0]
        result[:, s] = prev
    return result
