"""Run an experiment over seeds: resolve, validate, dispatch, store, resume.

`run_experiment` turns (experiment, preset, overrides, seeds) into one result file per seed.
Everything a user can get wrong is checked before anything is written. Seeds whose result file
already exists with status "ok" and the same config are skipped (resume). A seed that raises is
recorded as failed and the others go on. Results are written by this process only, atomically,
whichever backend ran them:

- "local": in this process (`jobs=1`) or in `jobs` worker processes: spawned, or forked from
  the fork server `prestart_workers` started (the CLI does, so that importing torch and the
  experiment in the workers overlaps with the driver's own imports);
- "ray": one Ray task per seed, on a local Ray instance or the cluster at `address`.

Both backends run the same `execute()` on the same inputs, so they write identical result files
(up to wall-clock fields and metrics the experiment declares volatile).

Limits: seeds are ints in [0, MAX_SEED] and one run takes at most MAX_SEEDS of them; an override
value is at most MAX_OVERRIDE_CHARS characters. Input files named by the config
(`core.config.InputFile` fields) must exist; their sha256 is stored in each result and a seed is
resumed only when both the config and these hashes match. A run holds the lock of its variant
folder (`results.run_lock`) and fails fast when another run holds it. Local worker processes die
with the driver: on an interrupt (Ctrl-C, SIGTERM) the driver terminates them, and on Linux each
worker asks the kernel for SIGKILL when the driver dies (PR_SET_PDEATHSIG, also on SIGKILL;
a worker forked from the fork server asks it for the server's death, and the server exits as
soon as the driver is gone).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import math
import multiprocessing as mp
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from iclr25.core import registry
from iclr25.core.claims import ClaimResult, judge
from iclr25.core.config import apply_overrides, config_hash, from_dict, input_files, to_dict
from iclr25.core.context import RunContext
from iclr25.core.errors import UsageError
from iclr25.core.experiment import Experiment
from iclr25.core.results import (
    TMP_SUFFIX,
    RunResult,
    check_out_dir,
    clean_stale_tmp,
    file_sha256,
    read_result,
    result_path,
    run_lock,
    write_result,
)

log = logging.getLogger(__name__)

Backend = Literal["local", "ray"]
BACKENDS = ("local", "ray")
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""Environment variables that fix BLAS/OpenMP thread pools when a worker process starts."""
MAX_SEED = 2**32 - 1
"""The largest seed: numpy's legacy `np.random.seed` and sklearn's `random_state` take 32 bits."""
MAX_SEEDS = 10_000
"""The most seeds one run takes (a longer list is refused before it is built)."""
MAX_OVERRIDE_CHARS = 10_000
"""The longest `key=value` override accepted (a longer one is refused before it is parsed)."""
MAX_JOBS = 1024
"""The most seeds run in parallel."""
MAX_THREADS = 1024
"""The most torch threads per job."""


def thread_env(threads: int) -> dict[str, str]:
    """Environment for a worker process whose thread pools should use `threads` threads."""
    return dict.fromkeys(THREAD_ENV, str(threads))


@contextlib.contextmanager
def _environ(changes: dict[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _blas_limits(threads: int):
    """Limit already-loaded BLAS/OpenMP pools in this process (needs threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(threads)


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to run one seed (plain data, cheap to pickle)."""

    experiment: str
    preset: str
    variant: str
    config: dict[str, Any]
    seed: int
    threads: int
    show_progress: bool | None = False
    inputs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    """A validated request: what will run and where its results go."""

    experiment: Experiment
    preset: str
    config: Any
    variant: str
    seeds: tuple[int, ...]
    folder: Path
    inputs: dict[str, str] = field(default_factory=dict)
    """`{config key: sha256}` of the input files the config names."""


@dataclass(frozen=True)
class RunReport:
    """The outcome of `run_experiment`."""

    plan: Plan
    results: list[RunResult]
    resumed: tuple[int, ...]

    @property
    def failed(self) -> list[RunResult]:
        """Seeds whose status is "failed"."""
        return [r for r in self.results if r.status != "ok"]

    def verdicts(self) -> list[ClaimResult]:
        """Claim verdicts over the successful seeds."""
        return judge_claims(self.plan.experiment, self.results)


def judge_claims(exp: Experiment, results: Sequence[RunResult]) -> list[ClaimResult]:
    """Judge every claim of `exp` over the "ok" results."""
    ok = [r.metrics for r in results if r.status == "ok"]
    clean = [{k: v for k, v in m.items() if v is not None} for m in ok]
    return [judge(c, clean) for c in exp.claims]


def parse_seeds(text: str | Sequence[int] | None) -> tuple[int, ...] | None:
    """Parse `"0-4"`, `"0,2,7"` or `"1-3,8"` into seeds; None means the preset's default.

    Raises:
        UsageError: for an empty list, a seed outside [0, MAX_SEED], more than MAX_SEEDS seeds
            or a malformed item.
    """
    if text is None:
        return None
    shown = repr(text) if len(repr(text)) <= 60 else repr(text)[:57] + "..."
    too_many = f"--seeds {shown}: more than {MAX_SEEDS} seeds (the most one run takes)"
    if isinstance(text, str):
        seeds: list[int] = []
        for item in (t.strip() for t in text.split(",")):
            if not item:
                continue
            lo, sep, hi = item.partition("-")
            try:
                if not item.isascii():  # int() also reads other scripts' digits
                    raise ValueError(item)
                a = int(lo)
                b = int(hi) if sep else a
            except ValueError:
                item = item if len(item) <= 30 else item[:27] + "..."
                raise UsageError(
                    f"--seeds {shown}: {item!r} is not a seed or a range like 0-4"
                ) from None
            if b < a:
                raise UsageError(f"--seeds {shown}: range {item!r} is empty")
            if b > MAX_SEED:
                raise UsageError(f"--seeds {shown}: seed {b} is larger than {MAX_SEED}")
            if len(seeds) + (b - a + 1) > MAX_SEEDS:
                raise UsageError(too_many)
            seeds.extend(range(a, b + 1))
    else:
        seeds = []
        for s in text:
            seeds.append(s)
            if len(seeds) > MAX_SEEDS:
                raise UsageError(too_many)
    if not seeds:
        raise UsageError(f"--seeds {shown}: the seed list is empty")
    bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int) or s < 0]
    if bad:
        raise UsageError(f"--seeds {shown}: seeds must be non-negative ints, got {bad[:5]}")
    big = [s for s in seeds if s > MAX_SEED]
    if big:
        raise UsageError(f"--seeds {shown}: seed {big[0]} is larger than {MAX_SEED}")
    return tuple(dict.fromkeys(seeds))  # unique, order kept


def _overrides(base: Any, overrides: list[str]) -> Any:
    """`apply_overrides`, with values too long, too large or too deeply nested to parse turned
    into UsageError."""
    for o in overrides:
        if isinstance(o, str) and len(o) > MAX_OVERRIDE_CHARS:
            raise UsageError(
                f"override {o[:30]!r}... is {len(o)} characters long (at most {MAX_OVERRIDE_CHARS})"
            )
    try:
        return apply_overrides(base, overrides)
    except (RecursionError, MemoryError, OverflowError) as err:
        keys = ", ".join(str(o).partition("=")[0][:40] for o in overrides)
        why = str(err) or type(err).__name__
        raise UsageError(f"override of {keys}: the value cannot be used ({why})") from None


def _input_hashes(cfg: Any) -> dict[str, str]:
    """`{key: sha256}` of every input file `cfg` names; UsageError for one that cannot be read."""
    out = {}
    for key, path in sorted(input_files(cfg).items()):
        if not os.path.isfile(path):
            raise UsageError(f"{key}={path!r}: no such input file")
        try:
            out[key] = file_sha256(path)
        except OSError as err:
            raise UsageError(
                f"{key}={path!r}: cannot read the input file ({err.strerror})"
            ) from None
    return out


def plan_run(
    name: str,
    preset: str = "quick",
    seeds: str | Sequence[int] | None = None,
    overrides: Iterable[str] = (),
    out: str | Path = "runs",
) -> Plan:
    """Validate a request without writing anything.

    Raises:
        UsageError: unknown experiment or preset, bad override, bad seeds, a missing input file,
            or an `out` folder that cannot hold the results (see `results.check_out_dir`).
    """
    exp = registry.get_experiment(name)
    base = exp.preset(preset)
    overrides = list(overrides)
    cfg = _overrides(base, overrides)
    variant = preset if cfg == base else f"{preset}+{config_hash(cfg)}"
    chosen = parse_seeds(seeds) or tuple(exp.default_seeds(preset))
    slug, rest = exp.name.split(".", 1)
    deepest = f"{slug}/{rest}/{variant}/.seed={max(chosen)}.json.{'x' * 8}{TMP_SUFFIX}"
    check_out_dir(out, "--out", below=deepest)
    folder = result_path(Path(out), exp.name, variant, 0).parent
    return Plan(exp, preset, cfg, variant, chosen, folder, _input_hashes(cfg))


def _clean(value: Any) -> Any:
    """Non-finite floats become None so that the result files are standard JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def _check_metrics(metrics: Any) -> dict[str, float]:
    if not isinstance(metrics, dict):
        raise TypeError(f"run() must return a dict of metrics, got {type(metrics).__name__}")
    out = {}
    for k, v in metrics.items():
        if not isinstance(k, str):
            raise TypeError(f"metric key {k!r} is not a string")
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"metric {k!r}={v!r} is not a number") from None
    return out


def execute(spec: RunSpec) -> dict[str, Any]:
    """Run one seed and return its `RunResult` as a dict. Never raises for a failing `run()`.

    Sets torch's thread count (and, with threadpoolctl installed, the BLAS pools') for the
    duration and seeds global RNGs (for third-party code); the experiment draws from `ctx.rngs`.
    """
    import torch

    from iclr25.core.envinfo import envinfo
    from iclr25.core.seeding import seed_everything

    exp = registry.get_experiment(spec.experiment)
    cfg = from_dict(exp.config, spec.config)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(spec.threads)
    ctx = RunContext(seed=spec.seed, preset=spec.preset, show_progress=spec.show_progress)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    error, metrics, status = None, {}, "ok"
    try:
        seed_everything(spec.seed)
        with _blas_limits(spec.threads):
            metrics = _check_metrics(exp.run(cfg, ctx))
    except Exception:  # a failing seed is recorded, the others go on
        status = "failed"
        error = "".join(traceback.format_exc().splitlines(keepends=True)[-30:])
    finally:
        runtime = time.perf_counter() - t0
        env = envinfo()
        torch.set_num_threads(previous_threads)
    result = RunResult(
        experiment=exp.name,
        preset=spec.preset,
        variant=spec.variant,
        seed=spec.seed,
        config=spec.config,
        status=status,
        metrics=metrics,
        curves=ctx.curves,
        error=error,
        runtime_s=round(runtime, 4),
        started_at=started,
        env=env,
        inputs=spec.inputs,
    )
    return _clean(result.to_dict())


def _failed(spec: RunSpec, error: str) -> dict[str, Any]:
    return RunResult(
        experiment=spec.experiment,
        preset=spec.preset,
        variant=spec.variant,
        seed=spec.seed,
        config=spec.config,
        status="failed",
        error=error,
        inputs=spec.inputs,
    ).to_dict()


def _exit_with_parent(parent: int | None) -> None:
    """Worker initializer: die when the driver process `parent` dies, even by SIGKILL.

    On Linux the kernel sends SIGKILL (PR_SET_PDEATHSIG); elsewhere a daemon thread polls the
    parent's pid. Either way a driver that is already gone ends the worker at once.

    `parent` None: a worker forked from the fork server, whose parent is the server. The server
    runs until every holder of its "alive" pipe has exited, and multiprocessing hands each
    forked child a copy; the worker closes its copy, so the server exits with the driver and
    the worker, watching the server, with it.
    """
    if parent is None:
        parent = os.getppid()
        from multiprocessing import forkserver

        server = getattr(forkserver, "_forkserver", None)
        fd = getattr(server, "_forkserver_alive_fd", None)
        if isinstance(fd, int):
            with contextlib.suppress(OSError):
                os.close(fd)
            server._forkserver_alive_fd = None
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the driver died before the request took effect
        os._exit(1)
    if not armed:

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, name="iclr25-parent-watch", daemon=True).start()


_PRESTARTED: int | None = None
"""Threads per job of the fork server `prestart_workers` started in this process, or None."""


def prestart_workers(names: Sequence[str], jobs: int, threads: int | None = None) -> bool:
    """Start the fork server local workers of `names` will fork from, and return at once.

    The server imports the experiments' modules (torch with them: seconds) while the caller
    imports them too, so each worker of a later local run with `jobs` > 1 and the same
    `threads` starts with everything imported instead of spending those seconds after the
    driver's. Does nothing (returns False) for `jobs` <= 1, where there is no fork server
    (Windows), or when one was started already; runs that it does not serve spawn their
    workers. The workers get the thread variables of `threads` per job as spawned ones do.
    """
    global _PRESTARTED
    if jobs <= 1 or _PRESTARTED is not None or "forkserver" not in mp.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    per_job = threads or default_threads(jobs)
    modules = [__name__, *dict.fromkeys(registry.experiment_module(n) for n in names)]
    with _environ(thread_env(per_job)):  # the server's environment is its workers'
        forkserver.set_forkserver_preload(modules)
        forkserver.ensure_running()
    _PRESTARTED = per_job
    return True


def _run_local(specs: list[RunSpec], jobs: int) -> Iterator[dict[str, Any]]:
    if jobs <= 1 or len(specs) <= 1:
        for spec in specs:
            yield execute(spec)
        return
    # fork after torch has started threads can deadlock: spawn, or fork from the fork server,
    # which has only imported modules
    forked = specs[0].threads == _PRESTARTED
    pool = cf.ProcessPoolExecutor(
        max_workers=min(jobs, len(specs)),
        mp_context=mp.get_context("forkserver" if forked else "spawn"),
        initializer=_exit_with_parent,
        initargs=(None if forked else os.getpid(),),
    )
    finished = False
    try:
        with _environ(thread_env(specs[0].threads)):  # workers start during submit
            futures = {pool.submit(execute, spec): spec for spec in specs}
        for fut in cf.as_completed(futures):
            try:
                yield fut.result()
            except Exception as err:  # the worker died (killed, out of memory)
                yield _failed(futures[fut], f"worker process failed: {err!r}")
        finished = True
    finally:
        if not finished:  # interrupted: stop the running seeds instead of waiting for them
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _run_ray(specs: list[RunSpec], jobs: int, address: str | None) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError:
        raise UsageError("--backend ray needs Ray: pip install 'iclr25[ray]'") from None
    started = not ray.is_initialized()
    if started:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = max(jobs, max(s.threads for s in specs))
        ray.init(**kwargs)
    refs: dict[Any, RunSpec] = {}
    try:
        task = ray.remote(execute)
        for spec in specs:
            opts = {"num_cpus": spec.threads, "runtime_env": {"env_vars": thread_env(spec.threads)}}
            refs[task.options(**opts).remote(spec)] = spec
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            spec = refs.pop(done[0])
            try:
                yield ray.get(done[0])
            except Exception as err:  # a task or its worker died
                yield _failed(spec, f"ray task failed: {err!r}")
    finally:
        for ref in refs:  # left over only when interrupted
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def default_threads(jobs: int) -> int:
    """Threads per job so that `jobs` jobs fill the machine's cores."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


def run_experiment(
    name: str,
    preset: str = "quick",
    seeds: str | Sequence[int] | None = None,
    overrides: Iterable[str] = (),
    out: str | Path = "runs",
    jobs: int = 1,
    backend: Backend = "local",
    address: str | None = None,
    threads: int | None = None,
    resume: bool = True,
) -> RunReport:
    """Run experiment `name` over seeds and store one result file per seed.

    Args:
        name: `slug.experiment` or a bare slug (its headline experiment).
        preset: "smoke", "quick" or "full".
        seeds: `"0-4"`, `"0,3"`, a sequence of ints, or None for the preset's default.
        overrides: `key=value` strings applied on top of the preset.
        out: Root folder of the result store.
        jobs: Seeds run in parallel (worker processes or Ray tasks).
        backend: "local" or "ray".
        address: Ray cluster address (`ray://host:10001` or `host:6379`); None starts a local
            Ray instance.
        threads: torch threads per job (default: cores // jobs).
        resume: Skip seeds that already have an "ok" result with the same config.

    Returns:
        The plan, every requested seed's result (resumed and new) and which were resumed.

    Raises:
        UsageError: bad input; nothing has been written.
    """
    if backend not in BACKENDS:
        raise UsageError(f"--backend {backend!r} is not allowed: use one of {', '.join(BACKENDS)}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs {jobs!r} is not allowed: must be an int in [1, {MAX_JOBS}]")
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS
    ):
        raise UsageError(
            f"--threads {threads!r} is not allowed: must be an int in [1, {MAX_THREADS}]"
        )
    if address is not None and backend != "ray":
        raise UsageError("--address is only used with --backend ray")
    plan = plan_run(name, preset, seeds, overrides, out)
    with run_lock(plan.folder) as since:
        clean_stale_tmp(plan.folder, before=since)
        return _run_locked(plan, preset, jobs, backend, address, threads, resume, out)


def _run_locked(
    plan: Plan,
    preset: str,
    jobs: int,
    backend: Backend,
    address: str | None,
    threads: int | None,
    resume: bool,
    out: str | Path,
) -> RunReport:
    """The body of `run_experiment`, run while holding the lock of `plan.folder`."""
    config = to_dict(plan.config)
    per_job = threads or default_threads(jobs)
    done: dict[int, RunResult] = {}
    if resume:
        for seed in plan.seeds:
            path = plan.folder / f"seed={seed}.json"
            if path.exists():
                try:
                    old = read_result(path)
                except (ValueError, TypeError, KeyError):
                    continue  # unreadable or old schema: rerun
                if old.status == "ok" and old.config == config and old.inputs == plan.inputs:
                    done[seed] = old
    pending = [s for s in plan.seeds if s not in done]
    if done:
        log.info(
            "%s [%s]: resuming, seeds %s already done",
            plan.experiment.name,
            plan.variant,
            sorted(done),
        )
    show = None if (jobs == 1 and backend == "local") else False
    specs = [
        RunSpec(plan.experiment.name, preset, plan.variant, config, s, per_job, show, plan.inputs)
        for s in pending
    ]
    if not specs:  # everything resumed: start no workers
        stream: Iterable[dict[str, Any]] = ()
    elif backend == "ray":
        stream = _run_ray(specs, jobs, address)
    else:
        stream = _run_local(specs, jobs)
    new: dict[int, RunResult] = {}
    for data in stream:
        result = RunResult.from_dict(data)
        write_result(Path(out), result)
        new[result.seed] = result
        line = f"{result.experiment} [{result.variant}] seed={result.seed} {result.status}"
        log.info("%s in %.1fs", line, result.runtime_s)
        if result.status != "ok":
            log.warning("%s:\n%s", line, result.error)
    results = [done.get(s) or new[s] for s in plan.seeds]
    return RunReport(plan, results, tuple(sorted(done)))
