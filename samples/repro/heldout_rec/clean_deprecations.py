"""Not a failure: compiles and runs with fullgraph=True, among warnings printed by the program and by torch."""

import logging
import warnings

import torch

from _h import run

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("app.compile")


def gate(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x) * x


def main(fullgraph):
    warnings.warn("config key 'use_flash' is deprecated; torch.compile will pick the kernel", FutureWarning)
    log.info("compiling gate with torch.compile(fullgraph=%s, backend='eager')", fullgraph)
    log.warning("graph breaks are fatal in this mode; set fullgraph=False to allow them")
    torch.set_default_dtype(torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        run(gate, torch.randn(4, 4), fullgraph=fullgraph)
    log.info("warm-up done")
