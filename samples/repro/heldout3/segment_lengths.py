"""Per-sequence pooling over a packed batch: segment lengths taken with tolist(), summed in a Python loop."""

import torch
from _run import compile_run


class SegmentPool(torch.nn.Module):
    def forward(self, packed, lengths):
        outs, start = [], 0
        for n in lengths.tolist():
            outs.append(packed[start:start + n].mean(0))
            start += n
        return torch.stack(outs)


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(SegmentPool(), torch.randn(9, 8), torch.tensor([2, 3, 4]))
