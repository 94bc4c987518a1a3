# function: rnn.rnn_forward
# mistake: each state is stored before it is updated, so hs holds h_0 ... h_{T-1} (h0
#   included, the final state missing) instead of h_1 ... h_T
# class: off by one
# confirmed: max |diff| 1.86 vs the output of torch.nn.RNN(4, 6, batch_first=True) on
#   x=randn(3,5,4), float64
import torch
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    h = h0
    hs = []
    for t in range(x.shape[1]):
        hs.append(h)
        h = rnn_cell(x[:, t], h, W_xh, W_hh, b_h)
    return torch.stack(hs, dim=1)
