import contextlib

PIECEWISE_CUDA_GRAPH_CAPTURE_FAILED_MSG = (
    "Piecewise CUDA Graph is enabled by default as an experimental feature.\n"
    "To work around this error, add --disable-piecewise-cuda-graph to your launch command.\n"
    "Please report this issue at https://github.com/sgl-project/sglang/issues/new/choose"
)

_in_piecewise_cuda_graph = False


def is_in_piecewise_cuda_graph() -> bool:
    return _in_piecewise_cuda_graph


@contextlib.contextmanager
def enable_piecewise_cuda_graph():
    global _in_piecewise_cuda_graph
    _in_piecewise_cuda_graph = True
    try:
        yield
    except Exception:
        # SGLang logs f"Piecewise CUDA Graph failed with error: {e}\n{PIECEWISE_CUDA_GRAPH_CAPTURE_FAILED_MSG}"
        # here before re-raising; the recording leaves that line to samples/frame.py.
        raise
    finally:
        _in_piecewise_cuda_graph = False
