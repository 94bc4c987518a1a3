# function: optimizers.sgd_momentum
# mistake: the velocity is an exponential moving average, v = mu*v + (1 - mu)*g (a dampening of
#   1 - mu, as in Adam's first moment), not PyTorch's raw accumulation v = mu*v + g
# class: wrong formula
# confirmed: max |diff| 0.286 in w after 4 steps vs torch.optim.SGD(lr=0.1, momentum=0.8) on
#   w=randn(3,4), float32 and float64
import torch


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    if "velocity" in state:
        v = momentum * state["velocity"] + (1 - momentum) * dw
    else:
        v = dw.clone()
    w_next = w - lr * v
    return w_next, {"velocity": v}
