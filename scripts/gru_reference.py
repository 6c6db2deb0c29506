"""Reference values for roboaudit-memory-learned's GRU cell (tests/gru_reference.rs).

PyTorch's torch.nn.GRUCell (gates reset, update, new; weight_ih [3H, I], weight_hh [3H, H])
run for three steps on a batch of two from a non-zero initial state, in float32 on the CPU.
Writes crates/roboaudit-memory-learned/tests/data/gru_reference.json: the weights, the inputs,
the initial state and the hidden state after each step.

Usage: python3 scripts/gru_reference.py   (torch and numpy from PyPI)
"""

import json
import pathlib

import torch

torch.manual_seed(25)
INPUT, HIDDEN, BATCH, STEPS = 5, 4, 2, 3
cell = torch.nn.GRUCell(INPUT, HIDDEN)
xs = torch.randn(STEPS, BATCH, INPUT) * 1.5
h = torch.randn(BATCH, HIDDEN) * 0.5
h0 = h.clone()
outputs = []
with torch.no_grad():
    for t in range(STEPS):
        h = cell(xs[t], h)
        outputs.append(h.clone())


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


out = {
    "source": "scripts/gru_reference.py, torch " + torch.__version__,
    "input": INPUT,
    "hidden": HIDDEN,
    "batch": BATCH,
    "weight_ih": flat(cell.weight_ih),
    "weight_hh": flat(cell.weight_hh),
    "bias_ih": flat(cell.bias_ih),
    "bias_hh": flat(cell.bias_hh),
    "inputs": [flat(x) for x in xs],
    "h0": flat(h0),
    "outputs": [flat(o) for o in outputs],
}
path = pathlib.Path(__file__).resolve().parent.parent / (
    "crates/roboaudit-memory-learned/tests/data/gru_reference.json"
)
path.write_text(json.dumps(out, indent=1) + "\n")
print("wrote", path)
