# function: lstm_gru.recall_logits
# mistake: for kind="lstm" the readout uses the last cell state c_T instead of the hidden state
#   h_T (the "memory" sounded like the thing to read); rnn and gru are right
# class: wrong state read out
# confirmed: kind='lstm': max |diff| 1.05 vs nn.LSTM's last output @ W_y.T + b_y (B=4 T=6 K=8
#   H=5); kind='gru' right
import torch


def recall_logits(kind, params, x):
    from .rnn import rnn_forward

    B = x.shape[0]
    H = params["W_hh"].shape[1]
    zeros = torch.zeros(B, H, dtype=x.dtype, device=x.device)
    if kind == "rnn":
        last = rnn_forward(x, zeros, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    elif kind == "lstm":
        _, (h_T, c_T) = lstm_forward(x, zeros, zeros, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        last = c_T
    else:
        _, last = gru_forward(x, zeros, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    return last @ params["W_y"].T + params["b_y"]
