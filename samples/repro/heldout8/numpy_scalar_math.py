# numpy math on a Python number inside torch.compile(fullgraph=True): torch 2.1 and 2.4 reject
# `int(np.ceil(n / 3))` (a NumpyNdarrayVariable / a non-Tensor float from the traced numpy call); 2.7 and 2.13
# trace it. Run with each release's interpreter: /work/venvs/tX/bin/python numpy_scalar_math.py
import numpy as np
import torch


def f(x):
    n = int(np.ceil(x.shape[0] / 3))  # expect: numpy-scalar
    return x[:n] * 2


g = torch.compile(f, fullgraph=True, dynamic=True)
g(torch.randn(10))
g(torch.randn(11))
print("ok")
