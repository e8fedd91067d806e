"""Split-KV attention over a shared prefix and a per-request suffix, combined with pagedkv.merge_state."""

import torch
from _run import compile_run

import pagedkv


def attend(q, k, v):
    s = torch.einsum("thd,shd->ths", q, k) / q.shape[-1] ** 0.5
    lse = torch.logsumexp(s, dim=-1)
    return torch.einsum("ths,shd->thd", s.softmax(-1), v), lse


class CascadeAttn(torch.nn.Module):
    def forward(self, q, k_prefix, v_prefix, k_suffix, v_suffix):
        o_a, s_a = attend(q, k_prefix, v_prefix)
        o_b, s_b = attend(q, k_suffix, v_suffix)
        return pagedkv.merge_state(o_a, s_a, o_b, s_b)


if __name__ == "__main__":
    torch.manual_seed(0)
    t, h, d = 3, 2, 8
    compile_run(CascadeAttn(), torch.randn(t, h, d), torch.randn(10, h, d), torch.randn(10, h, d),
                torch.randn(4, h, d), torch.randn(4, h, d))
