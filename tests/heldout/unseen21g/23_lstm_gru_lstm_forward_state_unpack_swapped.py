# function: lstm_gru.lstm_forward
# mistake: the cell's result is unpacked as `c, h = lstm_cell(...)` although it returns (h, c),
#   so the hidden and cell states trade places at every step
# class: wrong order (tuple unpacking)
# confirmed: max |diff| 0.69 in hs, 0.32 in h_T, 0.39 in c_T vs torch.nn.LSTM(batch_first=True)
#   on x=randn(3,6,4), H=5
import torch


def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c = h0, c0
    outputs = []
    for t in range(x.shape[1]):
        c, h = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1), (h, c)
