# function: optimizers.sgd
# mistake: the step is taken in place (`w -= lr * dw`, the numpy-course idiom), so the caller's
#   w is overwritten and the argument itself and the old state dict are returned
# class: in-place mutation of an argument
# confirmed: values match torch.optim.SGD(lr=0.01), but the caller's w changes in place by up to
#   0.031 over 4 steps and the returned w and state are the arguments themselves
#   (w=randn(5,3), float64)
import torch


def sgd(w, dw, state, lr=1e-2):
    w -= lr * dw
    return w, state
