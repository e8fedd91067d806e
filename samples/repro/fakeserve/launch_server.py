"""Entry point: python -m fakeserve.launch_server [--enable-torch-compile] [--disable-piecewise-cuda-graph] ..."""

import sys

from fakeserve.managers.scheduler import run_scheduler_process
from fakeserve.server_args import ServerArgs


def main(argv=None) -> int:
    server_args = ServerArgs.from_cli(argv)
    run_scheduler_process(server_args, tp_rank=server_args.tp_rank)
    return 0


if __name__ == "__main__":
    sys.exit(main())
