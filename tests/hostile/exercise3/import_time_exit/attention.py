"""Hostile case: calls sys.exit() at import time (a script's `if True: sys.exit(main())` left in)."""
import sys

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def main():
    print("attention demo")
    return 0


sys.exit(main())
