"""Hostile case: a correct solution that defeated the keyring emptying once tried as the fix for
keyring_note, by taking away the *write* permission of its uid's user keyring (@u) after leaving a note in it
(the sandbox now refuses every keyring call with a seccomp filter, so nothing is left or read).

``KEYCTL_CLEAR`` needs write permission on the keyring (possessor and owner permissions are added, and
neither has it any more), and the emptying ignored the failure, so the note stayed in @u for every
later job of this uid (uids are reused: the lowest free one is claimed). Root cannot override a key's
permissions: only the owner uid can change them back (and only while it keeps "setattr").

This case keeps "setattr" for the owner so that the machine can be repaired: when it finds its own note it
restores the keyring's default permissions (0x1f3f0000) and empties it, then returns wrong results (so a
leak costs this full-marks case points and the test fails). A real attacker would drop "setattr" too: the
keyring of that uid then stays locked, note included, until reboot. Grade this folder twice in one Judge
(or any submission, then this one): the second result's output shows "locked note from an earlier job".
"""

import numpy as np


def softmax(x, axis=-1):
    """Numerically stable softmax of ``x`` along ``axis``; same shape as ``x``, float64.

    The row maximum is subtracted before ``exp`` so large scores cannot overflow.
    """
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x, weight, bias, eps=1e-5):
    """Layer norm over the last axis with the biased variance, as ``torch.nn.functional.layer_norm``.

    x: (..., C); weight, bias: (C,). Returns float64 of the shape of ``x``.
    """
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)  # biased: divides by C, not C - 1
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def gelu(x):
    """GELU, tanh approximation (GPT-2; ``torch.nn.GELU(approximate='tanh')``); float64, shape of ``x``."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def multi_head_attention(x, w_qkv, b_qkv, w_out, b_out, n_heads, causal=False):
    """Multi-head scaled dot-product attention (Vaswani et al. 2017), as ``torch.nn.MultiheadAttention``.

    x: (B, T, C); w_qkv: (3C, C) with rows [W_q; W_k; W_v]; b_qkv: (3C,); w_out: (C, C); b_out: (C,).
    Head i uses features [i*hs:(i+1)*hs] of q, k and v. With ``causal`` token t attends to tokens <= t.
    Returns (B, T, C) float64.
    """
    x = np.asarray(x, dtype=np.float64)
    B, T, C = x.shape
    hs = C // n_heads

    qkv = x @ np.asarray(w_qkv, dtype=np.float64).T + b_qkv  # (B, T, 3C)
    q, k, v = np.split(qkv, 3, axis=-1)  # each (B, T, C)
    q = q.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
    k = k.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)
    v = v.reshape(B, T, n_heads, hs).transpose(0, 2, 1, 3)  # (B, nh, T, hs)

    att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hs)  # (B, nh, T, T)
    if causal:
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # (T, T), True above the diagonal
        att = np.where(future, -np.inf, att)  # blocked before the softmax
    att = softmax(att, axis=-1)  # each query's weights over the keys sum to 1
    y = att @ v  # (B, nh, T, hs)

    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)  # (B, T, nh, hs) -> (B, T, C)
    return y @ np.asarray(w_out, dtype=np.float64).T + b_out  # (B, T, C)


def transformer_block(x, params, n_heads, causal=True):
    """Pre-norm transformer block: x + attn(ln1(x)), then + mlp(ln2(x)) with mlp = fc -> GELU -> proj.

    x: (B, T, C); params maps the reference torch block's state_dict names (``ln1.weight``,
    ``attn.in_proj_weight``, ``mlp.fc.weight`` (4C, C), ...) to float64 arrays. Returns (B, T, C) float64.
    """
    p = params
    x = np.asarray(x, dtype=np.float64)
    h = layer_norm(x, p["ln1.weight"], p["ln1.bias"])  # (B, T, C)
    x = x + multi_head_attention(
        h, p["attn.in_proj_weight"], p["attn.in_proj_bias"],
        p["attn.out_proj.weight"], p["attn.out_proj.bias"], n_heads, causal=causal,
    )
    h = layer_norm(x, p["ln2.weight"], p["ln2.bias"])  # (B, T, C)
    h = gelu(h @ p["mlp.fc.weight"].T + p["mlp.fc.bias"])  # (B, T, 4C)
    x = x + h @ p["mlp.proj.weight"].T + p["mlp.proj.bias"]  # (B, T, C)
    return x


def _locked_note():
    """Read (and undo) a locked note an earlier job of this uid left in @u; then leave one and lock @u."""
    import ctypes, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    SYS_add_key, SYS_keyctl = 248, 250
    KEYCTL_SETPERM, KEYCTL_CLEAR, KEYCTL_LINK, KEYCTL_SEARCH, KEYCTL_READ = 5, 7, 8, 10, 11
    KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
    keyctl = lambda *a: libc.syscall(SYS_keyctl, *(ctypes.c_long(x) if isinstance(x, int) else x for x in a))
    keyctl(KEYCTL_LINK, KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING)  # so this process possesses what is in @u
    found = None
    kid = keyctl(KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", b"grader-locked-note", 0)
    if kid > 0:
        buf = ctypes.create_string_buffer(512)
        n = keyctl(KEYCTL_READ, kid, buf, 512)
        found = buf.raw[:max(n, 0)]
        print(f"locked note from an earlier job (now uid {os.getuid()}):", found, flush=True)
        keyctl(KEYCTL_SETPERM, KEY_SPEC_USER_KEYRING, 0x1F3F0000)  # repair: the default permissions
        keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING)
        return found
    note = b"uid %d, job at %.0f" % (os.getuid(), time.time())
    key = libc.syscall(SYS_add_key, b"user", b"grader-locked-note", note, len(note), KEY_SPEC_USER_KEYRING)
    if key > 0:
        keyctl(KEYCTL_SETPERM, key, 0x3F0B0000)  # the note: anyone of this uid may view, read, search it
        # @u: possessor view|read|search|link, owner view|read|search|setattr; nobody may write (or clear) it
        keyctl(KEYCTL_SETPERM, KEY_SPEC_USER_KEYRING, 0x1B2B0000)
    return found


if _locked_note() is not None:  # something crossed from an earlier job: make it visible in the score
    import functools

    _exact = multi_head_attention

    @functools.wraps(_exact)
    def multi_head_attention(*args, **kwargs):  # noqa: F811
        return _exact(*args, **kwargs) + 1.0
