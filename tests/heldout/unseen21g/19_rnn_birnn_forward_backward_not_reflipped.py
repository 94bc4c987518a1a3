# function: rnn.birnn_forward
# mistake: the backward RNN runs on the reversed sequence but its outputs are not flipped back,
#   so hs[:, t] pairs the forward state at t with the backward state at T-1-t
# class: alignment (reversal)
# confirmed: max |diff| 1.95 vs torch.nn.RNN(bidirectional=True, batch_first=True) on
#   x=randn(3,6,4), H=5
import torch


def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    fwd = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    x_rev = torch.flip(x, dims=[1])
    bwd = rnn_forward(x_rev, h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])
    return torch.cat([fwd, bwd], dim=2)
