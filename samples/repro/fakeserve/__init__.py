"""fakeserve: a pure-Python stand-in for the parts of an SGLang-style server that run torch.compile.

Start-up path: launch_server -> run_scheduler_process -> Scheduler -> TpModelWorker -> ModelRunner
-> PiecewiseCudaGraphRunner (torch.compile(fullgraph=True), like SGLang's piecewise CUDA graph)
or -> torch.compile without fullgraph (like --enable-torch-compile).  CPU only, tiny model.
"""
