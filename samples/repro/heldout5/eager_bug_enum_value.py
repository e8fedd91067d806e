"""The KV-cache dtype looked up by value with a misspelled string (KVDtype("fp-8")): ValueError in eager too."""

import enum

import torch
from _run import compile_run


class KVDtype(enum.Enum):
    AUTO = "auto"
    FP8 = "fp8"


class KVStore(torch.nn.Module):
    def __init__(self, d=16, kv_dtype="fp-8"):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.kv_dtype = kv_dtype

    def forward(self, x):
        kind = KVDtype(self.kv_dtype)
        kv = self.proj(x)
        if kind is KVDtype.FP8:
            kv = kv.clamp(-448, 448)
        return kv


def main():
    torch.manual_seed(0)
    compile_run(KVStore(), torch.randn(3, 16))


if __name__ == "__main__":
    main()
