# function: lstm_gru.gru_forward
# mistake: the states are stacked time-major (T, B, H) and then reshaped, not transposed, to
#   (B, T, H), which scrambles batch and time (the shape is right, the values are not)
# class: reshape instead of transpose
# confirmed: hs max |diff| 2.5 vs torch.nn.GRU(batch_first=True) on x=randn(3,6,4), H=5 (h_T
#   right)
import torch


def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    B, T, _ = x.shape
    h = h0
    hs = []
    for t in range(T):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    hs = torch.stack(hs)
    return hs.reshape(B, T, -1), h
