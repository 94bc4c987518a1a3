# function: selective_scan.discretize
# mistake: A is discretised with the Euler step too, A_bar = 1 + delta * A, instead of the
#   zero-order hold exp(delta * A) (only B uses the Euler simplification)
# class: wrong formula
# confirmed: A_bar[0,1,2,3] = 0.94501 vs exp(delta*A) = 0.94649 by hand; over
#   delta=0.1+rand(2,4,3), A=-2*rand(3,5), float64: max |diff| 1.22
import torch
def discretize(delta, A, B):
    dA = delta[..., None] * A
    A_bar = 1 + dA
    B_bar = delta[..., None] * B[:, :, None, :]
    return A_bar, B_bar
