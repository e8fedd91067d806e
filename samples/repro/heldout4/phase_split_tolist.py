"""A mixed prefill/decode batch: rows are routed to the prefill or decode path from seq_lens.tolist()."""

import torch
from _run import compile_run


class MixedBatch(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.prefill = torch.nn.Linear(d, d)
        self.decode = torch.nn.Linear(d, d)

    def forward(self, x, seq_lens):
        prefill_rows = [i for i, n in enumerate(seq_lens.tolist()) if n > 1]
        decode_rows = [i for i, n in enumerate(seq_lens.tolist()) if n == 1]
        out = torch.empty_like(x)
        if prefill_rows:
            out[prefill_rows] = self.prefill(x[prefill_rows])
        if decode_rows:
            out[decode_rows] = self.decode(x[decode_rows])
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    compile_run(MixedBatch(), torch.randn(5, 16), torch.tensor([7, 1, 1, 3, 1]))
