"""Hostile case: an infinite loop at import time (a training loop left at module level)."""
import numpy as np

step = 0
while True:  # "train until it converges"
    step += 1


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
