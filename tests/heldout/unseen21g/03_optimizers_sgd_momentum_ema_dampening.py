# function: optimizers.sgd_momentum
# mistake: the velocity is an exponential moving average v = mu*v + (1-mu)*g (the "beta" form
#   from other courses), which damps every gradient by (1 - momentum)
# class: wrong coefficient (dampening)
# confirmed: max |diff| 0.075 in w and 3.27 in velocity vs torch.optim.SGD(lr=0.01, momentum=0.9)
#   over 3 steps (w=randn(5,3))
import torch


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    if "velocity" in state:
        v = momentum * state["velocity"] + (1 - momentum) * dw
    else:
        v = (1 - momentum) * dw
    return w - lr * v, {"velocity": v}
