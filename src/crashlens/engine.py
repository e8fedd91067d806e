"""Where mine_file runs: local worker processes, or Ray tasks. Both hand every FileResult to the same
merge (mine.Groups), so they give the same groups by construction."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from .errors import UserError
from .mine import FileResult, mine_file

RAY_INSTALL = "--engine ray needs Ray: pip install 'crashlens[ray]'"


class EngineError(UserError):
    """An engine cannot run (Ray missing, a cluster that cannot be reached): one line, exit 2."""


def _mine_one(args: tuple[str, int, tuple[str, ...]]) -> FileResult:
    return mine_file(*args)


def run_local(paths: list[str], signatures: tuple[str, ...], jobs: int | None = None) -> Iterator[FileResult]:
    """mine_file for each path in up to `jobs` worker processes (default: one per core), results as
    they finish."""
    work = [(p, i, signatures) for i, p in enumerate(paths)]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(work)))
    if jobs == 1:
        for w in work:
            yield _mine_one(w)
        return
    import multiprocessing

    from .catalog import get_catalog

    methods = multiprocessing.get_all_start_methods()
    # fork shares the catalog already loaded here; elsewhere each worker loads its own.
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    get_catalog(list(signatures))
    with ctx.Pool(jobs) as pool:
        # Small files finish fast: a few per message keeps the parent's merge off the critical path.
        yield from pool.imap_unordered(_mine_one, work, chunksize=max(1, min(16, len(work) // (jobs * 8))))


def run_ray(paths: list[str], signatures: tuple[str, ...], address: str | None = None,
            in_flight: int | None = None) -> Iterator[FileResult]:
    """mine_file for each path as a Ray task, results streamed back as tasks finish. With no address a
    local Ray instance is started; otherwise the cluster at `address` is joined ("auto": the one this
    machine belongs to). The paths must be readable where the tasks run (a shared file system)."""
    try:
        import ray
    except ImportError:
        raise EngineError(RAY_INSTALL) from None
    import logging

    if address is not None:
        _reachable(address)
    started = False
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING, configure_logging=True)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = address or "a local Ray instance"
            raise EngineError(f"--engine ray: cannot start or join {where}: {str(e).splitlines()[0] if str(e) else e}") \
                from None
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=2)(mine_file)
        # A bounded window of tasks in flight: the results waiting to be merged stay few.
        window = in_flight or max(8, 2 * int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        todo = iter(enumerate(paths))
        pending: list[object] = []

        def submit() -> None:
            for i, p in todo:
                pending.append(task.remote(os.path.abspath(p), i, signatures, p))  # type: ignore[call-arg]
                if len(pending) >= window:
                    return

        submit()
        while pending:
            done, pending[:] = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
            submit()
    finally:
        if started:
            ray.shutdown()


def _reachable(address: str, timeout: float = 5.0) -> None:
    """A cluster address that does not answer is one line now, not minutes of Ray's own retries."""
    import socket

    if address == "auto" or address.startswith("local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise EngineError(f"--ray-address {address}: give host:port, ray://host:port or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise EngineError(f"--ray-address {address}: no Ray cluster answers there ({e.strerror or e})") from None


def run(engine: str, paths: list[str], signatures: tuple[str, ...], jobs: int | None,
        address: str | None, on_result: Callable[[FileResult], None]) -> None:
    it = run_ray(paths, signatures, address) if engine == "ray" else run_local(paths, signatures, jobs)
    for result in it:
        on_result(result)
