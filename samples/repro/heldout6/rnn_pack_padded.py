"""A speech-style GRU encoder over padded utterances with nn.utils.rnn.pack_padded_sequence / pad_packed_sequence."""

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from _run import compile_run


class Encoder(torch.nn.Module):
    def __init__(self, d=8, hidden=6):
        super().__init__()
        self.gru = torch.nn.GRU(d, hidden, batch_first=True)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return out, h


def main():
    torch.manual_seed(0)
    compile_run(Encoder(), torch.randn(3, 5, 8), torch.tensor([5, 2, 4]))


if __name__ == "__main__":
    main()
