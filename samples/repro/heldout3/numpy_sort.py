"""Top-k masking done in numpy: tensor.numpy(), np.argsort, back with torch.from_numpy."""

import numpy as np
import torch
from _run import compile_run


class NumpyTopK(torch.nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k

    def forward(self, logits):
        arr = logits.detach().numpy()
        order = np.argsort(-arr, axis=-1)[:, : self.k]
        mask = np.zeros_like(arr, dtype=bool)
        np.put_along_axis(mask, order, True, axis=-1)
        return logits.masked_fill(~torch.from_numpy(mask), float("-inf")).softmax(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(NumpyTopK(), torch.randn(4, 10))
