from fakeserve.model_executor.model_runner import ModelRunner
from fakeserve.server_args import ServerArgs


class TpModelWorker:
    def __init__(self, server_args: ServerArgs, tp_rank: int):
        self.server_args = server_args
        self.tp_rank = tp_rank
        self.model_runner = ModelRunner(server_args=server_args, tp_rank=tp_rank)
