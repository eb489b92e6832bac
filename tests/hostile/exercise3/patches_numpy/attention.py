"""Hostile case: patches NumPy's comparison functions to always agree, then returns garbage.

If the grader compared results in the same process, every check would pass.
"""
import numpy as np
import numpy.testing


def _always_true(*args, **kwargs):
    return True


def _never_fails(*args, **kwargs):
    return None


np.allclose = np.isclose = np.array_equal = np.array_equiv = _always_true
np.testing.assert_allclose = np.testing.assert_array_equal = _never_fails
np.testing.assert_array_almost_equal = np.testing.assert_almost_equal = _never_fails
numpy.testing.assert_allclose = _never_fails
try:  # also the copies the grader might have imported by name
    import numpy.testing._private.utils as _utils
    _utils.assert_allclose = _utils.assert_array_equal = _never_fails
except ImportError:
    pass


def _garbage(x):
    return np.full(np.shape(x), 0.125)


def softmax(x, axis=-1):
    return _garbage(x)


def layer_norm(x, weight, bias, eps=1e-5):
    return _garbage(x)


def gelu(x):
    return _garbage(x)


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    return _garbage(x)


def transformer_block(x, params, n_heads, causal=True):
    return _garbage(x)
