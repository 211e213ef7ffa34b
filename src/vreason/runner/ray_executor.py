"""The Ray executor (``vreason run … --executor ray``, extra ``ray``): the runner's CPU units
(generation, ``kind = "cpu"`` scorers) run as Ray tasks on a cluster — or as calls to a Ray actor
that holds a heavy component (a GPU model) across units — while judge (``io``) units stay on the
driver's event loop. Same interface as :class:`~vreason.runner.executor.LocalExecutor`: results come
back to the driver and ``on_done`` is called on the loop thread, where the runner writes each unit to
the store as it arrives (same atomic units, same resume, same ``--retry-failed``).

* **Resources** come from the component's class attribute ``resources`` (``num_cpus``, ``num_gpus``,
  ``memory`` in bytes, custom ``resources``); ``actor: True`` or any ``num_gpus`` loads the component
  once per actor (``actors: N`` of them, default 1) and reuses it across units.
* **Back-pressure**: at most ``2 ×`` the cluster's CPUs units in flight (``--workers N``: ``2 × N``).
* **Failures**: a worker death, a task killed for memory, a lost node → Ray retries the unit
  (``max_retries``, actors ``max_restarts`` / ``max_task_retries``); after that the unit is recorded as
  an error naming Ray's reason (:class:`UnitLostError`). A unit's result is written once, by the driver.
* **Videos**: workers write to the run folder's path (same machine or a shared filesystem), or, with
  ``ship_videos``, send the bytes back (:mod:`vreason.runner.ray_worker`).
* **Ray itself**: ``address=None`` starts a local instance (token auth off, temporary folder inside the run
  folder, see :mod:`vreason.runner.ray_local`) and shuts it down at the end; ``"auto"`` or
  ``"ray://host:10001"`` connects to a running cluster; an already initialised Ray is used as it is.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from vreason.core.errors import ConfigError
from vreason.runner import ray_local
from vreason.runner.executor import Job, dispatch
from vreason.runner.ray_worker import ComponentActor, Shipped, generate_shipped, run_unit, score_shipped
from vreason.runner.work import _generate_in_worker, _score_in_worker

DEFAULT_RESOURCES: dict[str, Any] = {"num_cpus": 1}
RAY_KEYS = ("num_cpus", "num_gpus", "memory", "resources")
RECORD_EVERY = 5.0
"""Seconds between refreshes of the local instance's process record (see ray_local)."""


class UnitLostError(RuntimeError):
    """Ray could not finish a unit (worker died, out of memory, node lost) after its retries."""


def _ray():
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ConfigError("--executor ray needs the ray extra: pip install 'vreason[ray]'") from exc
    return ray


class RayExecutor:
    def __init__(self, run_dir: str, address: str | None = None, *, temp_dir: str | None = None,
                 ship_videos: bool = False, workers: int | None = None, io_concurrency: int = 32,
                 max_retries: int = 2, num_cpus: int | None = None):
        self.run_dir = os.path.abspath(run_dir)
        self.address = address or None
        self.temp_dir_given = temp_dir
        self.ship_videos = ship_videos
        self.workers = workers
        self.io_concurrency = io_concurrency
        self.max_retries = max_retries
        self.num_cpus = num_cpus
        self.temp_dir: str | None = None
        self._started = False  # vreason called ray.init (and so calls ray.shutdown)
        self._local = False  # … and that started a local instance
        self._own_temp = False
        self._last_record = 0.0
        self._refs: dict[int, Any] = {}  # id(component) → (component, ObjectRef)
        self._actors: dict[int, tuple[Any, list[Any]]] = {}
        self._next: dict[int, int] = {}
        self._in_flight: set[Any] = set()
        self._task: Any = None

    # ------------------------------------------------------------------ Ray up / down
    def _ensure_ray(self) -> None:
        ray = _ray()
        if ray.is_initialized() or self._started:
            return
        env = self._runtime_env()
        if self.address is None:
            ray_local.end_leftovers(self.run_dir)
            self.temp_dir, self._own_temp = ray_local.temp_dir_for(self.run_dir, self.temp_dir_given)
            os.makedirs(self.temp_dir, exist_ok=True)
            os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private instance: no token file in ~/.ray
            ray.init(num_cpus=self.num_cpus, include_dashboard=False, _temp_dir=self.temp_dir, runtime_env=env,
                     log_to_driver=False, logging_level="warning")
            self._local = True
            ray_local.record(self.run_dir, self.temp_dir)
            self._last_record = time.monotonic()
        else:
            try:
                ray.init(address=self.address, runtime_env=env, log_to_driver=False, logging_level="warning")
            except ConnectionError as exc:
                raise ConfigError(f"--ray-address {self.address}: no Ray cluster there ({exc}); start one with "
                                  "`ray start --head`, or leave --ray-address out for a local instance") from exc
        self._started = True

    @staticmethod
    def _runtime_env() -> dict[str, Any] | None:
        """Folders the driver imports from that workers would not see (plugins, a source checkout)."""
        skip = (sys.base_prefix, sys.prefix)
        extra = [p for p in sys.path if p and os.path.isdir(p) and "-packages" not in p
                 and not p.startswith(skip)]
        return {"env_vars": {"PYTHONPATH": os.pathsep.join(extra)}} if extra else None

    def shutdown(self, cancel: bool = False) -> None:
        ray = sys.modules.get("ray")
        if ray is None:
            return
        if cancel:
            for ref in list(self._in_flight):
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - actor calls cannot be force-cancelled; shutdown ends them
                    continue
        self._in_flight.clear()
        self._refs.clear()
        self._actors.clear()
        self._task = None
        if not self._started:
            return
        self._started = False
        ray.shutdown()
        if self._local:
            ray_local.forget(self.run_dir)
            if self._own_temp and self.temp_dir:
                shutil.rmtree(self.temp_dir, ignore_errors=True)

    def in_flight_limit(self) -> int:
        if self.workers:
            return 2 * self.workers
        cpus = _ray().cluster_resources().get("CPU", 1)
        return max(2, 2 * int(cpus))

    # ------------------------------------------------------------------ units
    @staticmethod
    def resources_of(component: Any) -> dict[str, Any]:
        return dict(getattr(component, "resources", None) or DEFAULT_RESOURCES)

    def _options(self, res: dict[str, Any]) -> dict[str, Any]:
        return {k: res[k] for k in RAY_KEYS if res.get(k) is not None}

    def _actor_call(self, component: Any, res: dict[str, Any], fn: Any, rest: tuple) -> Any:
        ray = _ray()
        key = id(component)
        if key not in self._actors:
            cls = ray.remote(ComponentActor).options(**self._options(res), max_restarts=self.max_retries,
                                                     max_task_retries=self.max_retries)
            n = max(1, int(res.get("actors", 1)))
            self._actors[key] = (component, [cls.remote(component) for _ in range(n)])
            self._next[key] = 0
        actors = self._actors[key][1]
        i = self._next[key] = (self._next[key] + 1) % len(actors)
        return actors[i].call.remote(fn, *rest)

    def _task_call(self, component: Any, res: dict[str, Any], fn: Any, rest: tuple) -> Any:
        ray = _ray()
        key = id(component)
        if key not in self._refs:  # one copy in the object store per component, not one per unit
            self._refs[key] = (component, ray.put(component))
        if self._task is None:
            self._task = ray.remote(run_unit)
        task = self._task.options(**self._options(res), max_retries=self.max_retries, retry_exceptions=False)
        return task.remote(fn, self._refs[key][1], *rest)

    def _submit(self, job: Job) -> tuple[Any, Callable[[Any], Any]]:
        component, rest = job.args[0], tuple(job.args[1:])
        fn: Any = job.fn
        finish: Callable[[Any], Any] = lambda res: res
        if self.ship_videos and fn is _generate_in_worker:
            fn, out_path = generate_shipped, rest[2]
            finish = lambda shipped: self._land(shipped, out_path=out_path)
        elif self.ship_videos and fn is _score_in_worker:
            video = rest[1]
            with open(video.path, "rb") as fh:
                rest = (*rest, fh.read())
            fn, finish = score_shipped, self._land
        res = self.resources_of(component)
        if res.get("actor") or (res.get("num_gpus") or 0) > 0:
            return self._actor_call(component, res, fn, rest), finish
        return self._task_call(component, res, fn, rest), finish

    def _land(self, shipped: Shipped, out_path: str | None = None) -> Any:
        """Write the files a shipped unit returned into the run folder (atomically); return its result."""
        for rel, data in shipped.files.items():
            if out_path is not None and rel == "":
                dest = out_path
            else:
                dest = os.path.normpath(os.path.join(self.run_dir, rel))
                if os.path.isabs(rel) or not dest.startswith(self.run_dir + os.sep):
                    raise ValueError(f"a worker returned a file outside the run folder: {rel!r}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            tmp = f"{dest}.part"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, dest)
        return shipped.result

    def _explain(self, exc: BaseException) -> BaseException:
        """Ray's system failures become one-line :class:`UnitLostError`; a task's own exception is unwrapped."""
        rex = _ray().exceptions
        system = (rex.WorkerCrashedError, rex.OutOfMemoryError, rex.NodeDiedError, rex.RayActorError,
                  rex.ObjectLostError, rex.OwnerDiedError, rex.LocalRayletDiedError, rex.TaskUnschedulableError,
                  rex.ActorUnschedulableError)
        if isinstance(exc, system):
            first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
            return UnitLostError(f"{type(exc).__name__} after {self.max_retries} Ray retries: {first[:300]}")
        if isinstance(exc, rex.RayTaskError) and getattr(exc, "cause", None) is not None:
            return exc.cause
        return exc

    def _maybe_record(self) -> None:
        if self._local and time.monotonic() - self._last_record > RECORD_EVERY:
            self._last_record = time.monotonic()
            ray_local.record(self.run_dir, self.temp_dir or "")

    # ------------------------------------------------------------------ the executor interface
    async def run(self, jobs: Iterable[Job], on_done: Callable[[Job, Any, BaseException | None], None]) -> None:
        """Run every job; call ``on_done(job, result, error)`` on the loop thread as each finishes."""
        cpu_slots: asyncio.Semaphore | None = None
        io_slots = asyncio.Semaphore(self.io_concurrency)

        async def one(job: Job, slots: asyncio.Semaphore) -> None:
            ref = None
            try:
                if job.kind == "cpu":
                    ref, finish = self._submit(job)
                    self._in_flight.add(ref)
                    res = finish(await ref)
                else:
                    res = await job.coro_factory()
                err = None
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - reported to the caller, never swallowed
                res, err = None, self._explain(exc)
            finally:
                self._in_flight.discard(ref)
                slots.release()
            self._maybe_record()
            on_done(job, res, err)

        def slots_for(job: Job) -> asyncio.Semaphore:
            nonlocal cpu_slots
            if job.kind != "cpu":
                return io_slots
            if cpu_slots is None:  # Ray starts only when a CPU unit needs it
                self._ensure_ray()
                cpu_slots = asyncio.Semaphore(self.in_flight_limit())
            return cpu_slots

        await dispatch(jobs, one, slots_for)
