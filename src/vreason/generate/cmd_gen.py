"""``cmd:`` — any executable as a video model: the escape hatch for models with their own repository.

``cmd:./my_model.sh`` (or ``cmd:python my_model.py --flag``) is run once per (sample, seed) with one
argument: the path of a JSON request file (:class:`~vreason.generate.request.GenRequest`: ``prompt``,
``negative_prompt``, ``input_image``, ``seed``, ``mode``, ``num_frames`` / ``fps`` / ``width`` / ``height``
hints, ``output``, ``params``). It must write the video to ``output`` and exit 0. A non-zero exit, a
missing output or a timeout is a ``failed`` video whose reason carries the exit code and the tail of
stderr; a timeout kills the whole process group (the command and anything it started).

The command dies with the run: it is started under :mod:`~vreason.generate.cmd_guard` in a process group
of its own, which the guard kills the moment the run's process dies (``kill -9`` included), so a resumed
run never races a leftover command. The request's ``output`` is a temporary name next to the video
(``<name>.part-<random>.mp4``); the run renames it to the video's path (atomically) once the command
exited 0, so two writers can never interleave in one file and a half-written video never has the
final name.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import json
import os
import secrets
import shlex
import shutil
import signal
import sys
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreason.core.records import GenerationManifest, Sample, Video, VideoStatus, check_safe_id
from vreason.generate.base import Generator
from vreason.generate.request import RequestError, build_request

STDERR_TAIL = 600


class CmdParams(BaseModel):
    """Parameters of a ``cmd:`` model (YAML ``params``; unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(1, ge=1, description="Commands running at once for this model.")
    num_frames: int | None = Field(None, ge=1, description="Frame-count hint passed in the request.")
    fps: float | None = Field(None, gt=0, description="Frame-rate hint passed in the request.")
    width: int | None = Field(None, ge=1)
    height: int | None = Field(None, ge=1)
    negative_prompt: str | None = None
    prompt_variant: str | None = Field(None, description="Use this named prompt variant of each sample.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    cwd: str | None = Field(None, description="Working folder of the command (default: the current one).")
    params: dict[str, Any] = Field(default_factory=dict, description="Passed through as the request's params.")


class CmdGenerator(Generator):
    """Run a command per video with a JSON request file; it writes the video."""

    name: ClassVar[str] = "cmd"
    kind: ClassVar[Literal["cpu", "io"]] = "io"

    def __init__(self, target: str, name: str, **params: Any):
        try:
            self.opts = CmdParams(**params)
        except ValidationError as exc:
            raise ValueError(f"cmd parameters: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
        super().__init__(**self.opts.model_dump(exclude_defaults=True))
        self.run_name = check_safe_id(name, "model name")
        argv = shlex.split(target)
        if not argv:
            raise ValueError("cmd: needs a command (cmd:./my_model.sh)")
        exe = argv[0]
        if os.sep in exe or exe.startswith("."):
            exe = os.path.abspath(exe)
            if not os.path.isfile(exe):
                raise ValueError(f"cmd: {argv[0]} does not exist")
            if not os.access(exe, os.X_OK):
                raise ValueError(f"cmd: {argv[0]} is not executable (chmod +x it, or use cmd:python {argv[0]})")
        elif shutil.which(exe) is None:
            raise ValueError(f"cmd: {exe!r} is not on PATH")
        self.argv = [exe, *argv[1:]]
        self.concurrency = self.opts.concurrency

    @classmethod
    def default_name(cls, target: str) -> str:
        from vreason.core.records import safe_id_from

        argv = shlex.split(target) or ["cmd"]
        script = next((a for a in reversed(argv) if not a.startswith("-")), argv[0])
        return safe_id_from(os.path.splitext(os.path.basename(script))[0])

    def model_name(self) -> str:
        return self.run_name

    def resolved_params(self) -> dict[str, Any]:
        return {"argv": self.argv, **self.opts.model_dump()}

    def versions(self) -> dict[str, str]:
        return {}

    def manifest(self, sample: Sample, prompt: str | None = None, **extra: Any) -> GenerationManifest:
        return GenerationManifest(model_id=f"cmd:{' '.join(self.argv)}", revision=None,
                                  params={**self.params, **extra},
                                  prompt=prompt if prompt is not None else sample.prompt,
                                  prompt_variant=self.opts.prompt_variant, source="generated")

    def generate(self, sample: Sample, seed: int, out_path: str) -> Video:
        return asyncio.run(self.agenerate(sample, seed, out_path))

    async def agenerate(self, sample: Sample, seed: int, out_path: str) -> Video:
        o = self.opts
        try:
            req = build_request(sample, seed, out_path, self.run_name, prompt_variant=o.prompt_variant,
                                negative_prompt=o.negative_prompt, params=o.params,
                                hints={"num_frames": o.num_frames, "fps": o.fps, "width": o.width, "height": o.height})
        except RequestError as exc:
            return self.failed(sample, seed, f"cmd: {exc}")
        folder = os.path.join(os.path.dirname(os.path.abspath(out_path)), "requests")
        os.makedirs(folder, exist_ok=True)
        stem, ext = os.path.splitext(os.path.abspath(out_path))
        for stale in glob.glob(f"{glob.escape(stem)}.part-*"):  # left by a killed run (the run lock is ours)
            with contextlib.suppress(OSError):
                os.remove(stale)
        part = f"{stem}.part-{secrets.token_hex(4)}{ext or '.mp4'}"  # this attempt's own file
        req = req.model_copy(update={"output": part})
        req_path = os.path.join(folder, os.path.basename(stem) + ".json")
        _write_atomic(req_path, json.dumps(req.model_dump(), indent=2, ensure_ascii=False))
        if os.path.exists(out_path):
            os.remove(out_path)  # an old file must not pass for this attempt's output
        try:
            code, err_tail, timed_out = await self._run(req_path)
            ok = code == 0 and not timed_out and os.path.isfile(part) and os.path.getsize(part) > 0
            if ok:
                os.replace(part, out_path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(part)
        man = self.manifest(sample, req.prompt, request=req_path)
        if timed_out:
            return self._fail(sample, seed, f"cmd timed out after {self.ctx.timeout_s:g} s (process group killed)"
                              + (f"; stderr: {err_tail}" if err_tail else ""), man)
        if code != 0:
            return self._fail(sample, seed, f"cmd exited with code {code}" + (f"; stderr: {err_tail}" if err_tail
                                                                             else " (no stderr)"), man)
        if not ok:
            return self._fail(sample, seed, f"cmd exited 0 but wrote no video at {part}"
                              + (f"; stderr: {err_tail}" if err_tail else ""), man)
        return Video(sample_id=sample.id, model=self.run_name, seed=seed, path=out_path, manifest=man)

    def _fail(self, sample: Sample, seed: int, reason: str, man: GenerationManifest) -> Video:
        return Video(sample_id=sample.id, model=self.run_name, seed=seed, path=None, status=VideoStatus.failed,
                     reason=reason, manifest=man)

    async def _run(self, req_path: str) -> tuple[int | None, str, bool]:
        env = {**os.environ, **self.opts.env}
        guard = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmd_guard.py")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", guard, str(os.getpid()), *self.argv, req_path,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=self.opts.cwd, start_new_session=True)
        try:
            _, err = await asyncio.wait_for(proc.communicate(), timeout=self.ctx.timeout_s)
        except asyncio.TimeoutError:
            await _kill_group(proc)
            return None, "", True
        except BaseException:  # cancelled (Ctrl-C, the runner's own timeout): never leave it running
            await _kill_group(proc)
            raise
        tail = (err or b"").decode("utf-8", "replace").strip()[-STDERR_TAIL:]
        return proc.returncode, tail, False


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.{secrets.token_hex(4)}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        await asyncio.wait_for(proc.wait(), timeout=5)
    except (asyncio.TimeoutError, ProcessLookupError):
        return
