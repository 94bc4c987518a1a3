# function: rnn.rnn_forward
# mistake: the state is recorded before the update, so hs holds h_0 ... h_{T-1} instead of
#   h_1 ... h_T (h0 included, the final state lost)
# class: off-by-one (time)
# confirmed: max |diff| 2.59 vs torch.nn.RNN(batch_first=True) output on x=randn(3,6,4), H=5
import torch


def rnn_forward(x, h0, W_xh, W_hh, b_h):
    B, T, D = x.shape
    h = h0
    states = []
    for t in range(T):
        states.append(h)
        h = rnn_cell(x[:, t, :], h, W_xh, W_hh, b_h)
    return torch.stack(states, dim=1)
