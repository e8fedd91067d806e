import torch

from fakeserve.managers.tp_worker import TpModelWorker
from fakeserve.server_args import ServerArgs


class Scheduler:
    def __init__(self, server_args: ServerArgs, tp_rank: int):
        self.server_args = server_args
        self.tp_rank = tp_rank
        self.tp_worker = TpModelWorker(server_args=server_args, tp_rank=tp_rank)
        self.max_total_num_tokens = self.tp_worker.model_runner.max_total_num_tokens

    def event_loop_normal(self, num_steps: int = 2):
        runner = self.tp_worker.model_runner
        input_ids = torch.arange(8) % runner.model_config.vocab_size
        for _ in range(num_steps):
            next_token = runner.forward(input_ids).argmax(-1)
        print(f"fakeserve: scheduler tp_rank={self.tp_rank} served {num_steps} steps, "
              f"last token {int(next_token[-1])}", flush=True)


def run_scheduler_process(server_args: ServerArgs, tp_rank: int) -> None:
    # SGLang wraps this body in `except Exception: logger.error(f"Scheduler hit an exception: ...")`
    # and then SIGQUITs its parent; here the exception is left to propagate so that the raw
    # recording is the plain Python traceback.
    scheduler = Scheduler(server_args, tp_rank)
    scheduler.event_loop_normal()
