"""A graph layer whose adjacency is made sparse (to_sparse()) in forward and applied with torch.sparse.mm."""

import torch
from _run import compile_run


class GraphConv(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x, adj):
        a = adj.to_sparse()
        return torch.relu(torch.sparse.mm(a, self.fc(x)))


def main():
    torch.manual_seed(0)
    adj = torch.tensor([[0.0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0]])
    compile_run(GraphConv(), torch.randn(4, 8), adj)


if __name__ == "__main__":
    main()
