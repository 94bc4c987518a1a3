# function: rnn.greedy_decode
# mistake: the token is recorded before it is replaced by the prediction, so the output starts
#   with the start token and misses the last generated one
# class: off by one
# confirmed: vs a loop over nn.RNNCell + nn.Linear + argmax, B=3, 6 steps: first row [5, 4,
#   2, 2, 2, 2] instead of [4, 2, 2, 2, 2, 2] (the start token 5 comes first, the last token
#   is lost)
import torch
def greedy_decode(params, embedding, h0, start_token, steps):
    h = h0
    token = start_token
    out = []
    for _ in range(steps):
        out.append(token)
        h = rnn_cell(embedding[token], h, params["W_xh"], params["W_hh"], params["b_h"])
        token = torch.argmax(h @ params["W_hy"].T + params["b_y"], dim=-1)
    if steps == 0:
        return torch.zeros(h0.shape[0], 0, dtype=torch.long, device=h0.device)
    return torch.stack(out, dim=1)
