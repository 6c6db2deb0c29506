"""Reference values for roboaudit-memory-learned's anchor-window network
(tests/anchor_window_reference.rs).

The forward pass written out in NumPy (float64 from float32 weights), as
crates/roboaudit-memory-learned/src/anchor_window.rs documents it: e(x) = tanh(W_e x + b_e);
M' = M + P; q = W_q e(x), K = M' W_k^T, V = M' W_v^T; alpha = softmax(K q / sqrt(D)) over the
filled slots only; c = alpha^T V; chunk = W_2 relu(W_1 [c ; x] + b_1) + b_2. Weights and inputs
are drawn from a seeded generator; a batch of three samples with different filled slots (full;
anchor and one window row; window rows only, no anchor). Writes
crates/roboaudit-memory-learned/tests/data/anchor_window_reference.json.

PyTorch is not used: its PyPI wheel pulls gigabytes of CUDA libraries, and the pass is four
matrix products and a softmax, which NumPy computes in float64 without ambiguity.

Usage: python3 scripts/anchor_window_reference.py   (numpy from PyPI)
"""

import json
import pathlib

import numpy as np

rng = np.random.default_rng(25)
I, D, W, K, O = 5, 4, 3, 6, 7
S = W + 1


def draw(*shape, scale=0.8):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


w = {
    "embed.weight": draw(D, I),
    "embed.bias": draw(D),
    "slot.position": draw(S, D, scale=0.5),
    "attn.q.weight": draw(D, D),
    "attn.k.weight": draw(D, D),
    "attn.v.weight": draw(D, D),
    "head.0.weight": draw(K, D + I),
    "head.0.bias": draw(K),
    "head.2.weight": draw(O, K),
    "head.2.bias": draw(O),
}
N = 3
x = draw(N, I, scale=1.5)
memory = draw(N, S, D, scale=0.9)
filled = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [0, 1, 1, 1]], dtype=np.float32)
memory = memory * filled[:, :, None]

f = {k: v.astype(np.float64) for k, v in w.items()}
e = np.tanh(x.astype(np.float64) @ f["embed.weight"].T + f["embed.bias"])
mp = memory.astype(np.float64) + f["slot.position"][None]
q = e @ f["attn.q.weight"].T
k = mp @ f["attn.k.weight"].T
v = mp @ f["attn.v.weight"].T
scores = np.einsum("nsd,nd->ns", k, q) / np.sqrt(D)
scores = np.where(filled > 0, scores, -np.inf)
alpha = np.exp(scores - scores.max(axis=1, keepdims=True))
alpha = alpha / alpha.sum(axis=1, keepdims=True)
context = np.einsum("ns,nsd->nd", alpha, v)
hidden = np.maximum(
    np.concatenate([context, x.astype(np.float64)], axis=1) @ f["head.0.weight"].T
    + f["head.0.bias"],
    0.0,
)
chunk = hidden @ f["head.2.weight"].T + f["head.2.bias"]


def flat(a):
    return [float(t) for t in np.asarray(a).reshape(-1)]


out = {
    "source": "scripts/anchor_window_reference.py, numpy " + np.__version__,
    "input": I,
    "embed": D,
    "window": W,
    "head": K,
    "output": O,
    "batch": N,
    "weights": {k: flat(v) for k, v in w.items()},
    "x": flat(x),
    "memory": flat(memory),
    "filled": flat(filled),
    "embedding": flat(e),
    "alpha": flat(alpha),
    "context": flat(context),
    "chunk": flat(chunk),
}
path = pathlib.Path(__file__).resolve().parent.parent / (
    "crates/roboaudit-memory-learned/tests/data/anchor_window_reference.json"
)
path.write_text(json.dumps(out, indent=1) + "\n")
print("wrote", path)
