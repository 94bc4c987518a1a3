# function: optimizers.sgd
# mistake: the step is taken in place on the parameter tensor you were given (w -= ...), so
#   the caller's w changes too and the "new" w returned is the argument itself
# class: in-place mutation
# confirmed: torch.optim.SGD leaves the tensor it is given alone; one step here changed the
#   caller's w by up to 0.22 (w=randn(3,4), lr=0.1) and returned the same object
import torch
def sgd(w, dw, state, lr=1e-2):
    w_next = w
    w_next -= lr * dw
    return w_next, {}
