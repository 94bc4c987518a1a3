# function: rnn.sample_chars
# mistake: the logits are multiplied by the temperature instead of divided by it, so tau < 1
#   flattens the distribution and tau > 1 sharpens it (the opposite of the contract)
# class: wrong formula
# confirmed: same generator seed: 22 of 36 tokens differ at tau=0.5 and 9 of 20 at tau=2.0 from a
#   loop over nn.RNNCell + softmax(logits / tau) + multinomial; agrees at tau=1
def sample_chars(params, start_token, steps, temperature=1.0, generator=None):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    H, V = W_xh.shape
    B = start_token.shape[0]
    h = torch.zeros(B, H, dtype=W_xh.dtype, device=W_xh.device)
    token = start_token
    tokens = []
    for _ in range(steps):
        x = F.one_hot(token, num_classes=V).to(W_xh.dtype)
        h = rnn_cell(x, h, W_xh, W_hh, b_h)
        logits = h @ W_hy.T + b_y
        p = torch.softmax(logits * temperature, dim=-1)
        token = torch.multinomial(p, 1, generator=generator)[:, 0]
        tokens.append(token)
    if not tokens:
        return torch.zeros(B, 0, dtype=torch.long, device=W_xh.device)
    return torch.stack(tokens, dim=1)
