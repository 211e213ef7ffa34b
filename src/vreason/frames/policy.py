"""Frame policies: which frames of a video a scorer looks at, named by a stable spec string.

Grammar: ``kind[:arg][+option...]``

=====================  ======================================================================
``uniform:N``          N evenly spaced indices ``linspace(0, T-1, min(N, T))`` (floor; ``+round``)
``fps:F``              about F frames per second: every ``max(1, int(video_fps // F))``-th frame
                       from 0 (RULER). ``+linspace``: ``linspace(0, T-1, ceil(T / interval))``
                       (RISE's fps mode). ``+qwen``: qwen-vl-utils' count
                       ``round(T / video_fps * F)`` rounded to a multiple of 2 (PAI-Bench).
``every:K``            every K-th frame from 0 (MME-CoF-Pro: ``every:10``)
``last`` / ``first``   the last / first frame (RISE maze, symmetry, board games)
``last_fraction:N/P``  N evenly spaced frames in the last P of the video (RISE ``-1`` = ``3/0.4``)
``all``                every frame
``indices:a,b,c``      explicit indices (those past the end dropped; none left → the last frame)
=====================  ======================================================================

Options: ``+drop_first``, ``+drop_last``, ``+drop_ends`` (after selection; RISE VQ is
``uniform:6+drop_ends``), ``+round`` (round instead of floor), ``+dedupe``, ``+nocap`` (let
``uniform:N`` repeat frames when T < N), ``+reverse`` (order reversed, RISE PR), ``+max_frames=M``
(keep M evenly spaced among the selection), ``+max_side=S`` (resize longest side ≤ S).

The canonical spec (:attr:`FramePolicy.name`) is recorded with every score. A video with fewer
frames than :attr:`FramePolicy.min_frames` cannot be used by the policy (``sample_frames`` raises
``VideoTooShortError``): a still image is never scored as a video.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, ClassVar, Literal, get_args

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict

from vreason.core.errors import ConfigError

Kind = Literal["uniform", "fps", "every", "last", "first", "last_fraction", "all", "indices"]
KINDS: tuple[str, ...] = get_args(Kind)
_FLAGS = ("linspace", "qwen", "drop_first", "drop_last", "drop_ends", "round", "dedupe", "nocap", "reverse")


class FramePolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    n: int | None = None
    fps: float | None = None
    k: int | None = None
    fraction: float | None = None
    explicit: tuple[int, ...] = ()
    fps_mode: Literal["stride", "linspace", "qwen"] = "stride"
    drop_first: bool = False
    drop_last: bool = False
    rounding: Literal["floor", "round"] = "floor"
    dedupe: bool = False
    cap: bool = True
    reverse: bool = False
    max_frames: int | None = None
    max_side: int | None = None

    # ---------------------------------------------------------------- naming
    @property
    def name(self) -> str:
        if self.kind == "uniform":
            head = f"uniform:{self.n}"
        elif self.kind == "fps":
            head = f"fps:{_num(self.fps)}"
        elif self.kind == "every":
            head = f"every:{self.k}"
        elif self.kind == "last_fraction":
            head = f"last_fraction:{self.n}/{_num(self.fraction)}"
        elif self.kind == "indices":
            head = "indices:" + ",".join(str(i) for i in self.explicit)
        else:
            head = self.kind
        opts: list[str] = []
        if self.kind == "fps" and self.fps_mode != "stride":
            opts.append(self.fps_mode)
        if self.drop_first and self.drop_last:
            opts.append("drop_ends")
        elif self.drop_first:
            opts.append("drop_first")
        elif self.drop_last:
            opts.append("drop_last")
        if self.rounding == "round":
            opts.append("round")
        if self.dedupe:
            opts.append("dedupe")
        if not self.cap:
            opts.append("nocap")
        if self.reverse:
            opts.append("reverse")
        if self.max_frames:
            opts.append(f"max_frames={self.max_frames}")
        if self.max_side:
            opts.append(f"max_side={self.max_side}")
        return "+".join([head, *opts])

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.name

    @classmethod
    def parse(cls, spec: str | FramePolicy) -> FramePolicy:
        """Parse a spec string (see the module docstring); raises ConfigError with the reason. A preset
        name may head the spec, its options following: ``pai.u+max_frames=8`` is ``fps:4+qwen+max_frames=8``
        (an option given again wins over the preset's)."""
        if isinstance(spec, FramePolicy):
            return spec
        head_name, plus, rest = str(spec).strip().partition("+")
        text = PRESETS[head_name.strip()] + plus + rest if head_name.strip() in PRESETS else str(spec)
        parts = [p.strip() for p in text.strip().split("+") if p.strip()]
        if not parts:
            raise ConfigError("empty frame policy")
        head, *opts = parts
        kind, _, arg = head.partition(":")
        kw: dict = {"kind": kind}
        try:
            if kind == "uniform":
                kw["n"] = int(arg)
            elif kind == "fps":
                kw["fps"] = float(arg)
            elif kind == "every":
                kw["k"] = int(arg)
            elif kind == "last_fraction":
                a, _, b = arg.partition("/")
                kw["n"], kw["fraction"] = int(a), float(b)
            elif kind == "indices":
                kw["explicit"] = tuple(int(x) for x in arg.split(",") if x.strip())
            elif kind in ("last", "first", "all"):
                if arg:
                    raise ValueError(f"{kind} takes no argument")
            else:
                raise ValueError(f"unknown kind {kind!r} (known kinds: {', '.join(KINDS)}; presets: "
                                 f"{', '.join(PRESETS)})")
            for opt in opts:
                key, eq, val = opt.partition("=")
                if eq:
                    if key not in ("max_frames", "max_side"):
                        raise ValueError(f"unknown option {key!r}")
                    kw[key] = int(val)
                elif key in ("linspace", "qwen"):
                    kw["fps_mode"] = key
                elif key == "drop_ends":
                    kw["drop_first"] = kw["drop_last"] = True
                elif key in ("drop_first", "drop_last", "dedupe", "reverse"):
                    kw[key] = True
                elif key == "round":
                    kw["rounding"] = "round"
                elif key == "nocap":
                    kw["cap"] = False
                else:
                    raise ValueError(f"unknown option {key!r} (known: {', '.join(_FLAGS)}, max_frames=, max_side=)")
            policy = cls(**kw)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"bad frame policy {spec!r}: {exc}") from exc
        policy._validate_args()
        return policy

    def _validate_args(self) -> None:
        bad = (
            (self.kind == "uniform" and (self.n or 0) < 1)
            or (self.kind == "fps" and not (self.fps and self.fps > 0))
            or (self.kind == "every" and (self.k or 0) < 1)
            or (self.kind == "last_fraction" and ((self.n or 0) < 1 or not (0 < (self.fraction or 0) <= 1)))
            or (self.kind == "indices" and (not self.explicit or min(self.explicit) < 0))
        )
        if bad:
            raise ConfigError(f"bad frame policy {self.name!r}: argument out of range")

    @property
    def min_frames(self) -> int:
        """Frames a video needs for this policy to be meaningful.

        A policy that looks at more than one frame (motion, consistency, progress) needs at
        least 2 — a 1-frame "video" is a still image; each ``drop_*`` option needs one frame
        more, so something is left after dropping. Single-frame kinds need 1.
        """
        multi = (
            self.kind in ("fps", "every", "all")
            or (self.kind in ("uniform", "last_fraction") and (self.n or 0) >= 2)
            or (self.kind == "indices" and len(set(self.explicit)) >= 2)
        )
        return max(2 if multi else 1, 1 + int(self.drop_first) + int(self.drop_last))

    # ---------------------------------------------------------------- selection
    def _space(self, start: int, stop: int, count: int) -> list[int]:
        vals = np.linspace(start, stop, count)
        if self.rounding == "round":
            vals = np.round(vals)
        return [int(v) for v in vals.astype(np.int64)]

    def indices(self, n_frames: int, video_fps: float | None = None) -> list[int]:
        """Frame indices (0-based, presentation order) for a video of ``n_frames`` frames.

        Raises ``ValueError`` for a video with no frames, or an fps policy without a video fps.
        Never returns an empty list for a non-empty video.
        """
        t = int(n_frames)
        if t <= 0:
            raise ValueError(f"frame policy {self.name}: the video has no frames")
        if self.kind == "uniform":
            count = min(self.n, t) if self.cap else self.n
            idx = self._space(0, t - 1, count)
        elif self.kind == "fps":
            if not video_fps or video_fps <= 0:
                raise ValueError(f"frame policy {self.name} needs the video's fps")
            if self.fps_mode == "qwen":
                count = round(t / video_fps * self.fps)
                count = max(2, int(round(count / 2) * 2))
                count = min(count, t) if self.cap else count
                idx = [int(v) for v in np.round(np.linspace(0, t - 1, count))]
            else:
                interval = max(1, int(video_fps // self.fps))
                if self.fps_mode == "linspace":
                    idx = self._space(0, t - 1, math.ceil(t / interval))
                else:
                    idx = list(range(0, t, interval))
        elif self.kind == "every":
            idx = list(range(0, t, self.k))
        elif self.kind == "last":
            idx = [t - 1]
        elif self.kind == "first":
            idx = [0]
        elif self.kind == "last_fraction":
            start = min(t - 1, int(math.floor(t * (1 - self.fraction))))
            count = min(self.n, t - start) if self.cap else self.n
            idx = self._space(start, t - 1, count)
        elif self.kind == "all":
            idx = list(range(t))
        elif self.kind == "indices":
            idx = [i for i in self.explicit if i < t] or [t - 1]
        else:  # pragma: no cover - guarded by the Literal
            raise ValueError(self.kind)

        if self.dedupe:
            seen: set[int] = set()
            idx = [i for i in idx if not (i in seen or seen.add(i))]
        if self.max_frames and len(idx) > self.max_frames:
            pick = np.linspace(0, len(idx) - 1, self.max_frames).astype(int)
            idx = [idx[p] for p in pick]
        before_drop = idx
        if self.drop_first:
            idx = idx[1:]
        if self.drop_last:
            idx = idx[:-1]
        if not idx:  # dropping emptied a tiny selection: keep its middle frame
            idx = [before_drop[len(before_drop) // 2]]
        if self.reverse:
            idx = idx[::-1]
        return idx


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


class _Presets(Mapping[str, str]):
    """Named frame policies: ``last`` here, each benchmark's in its package (declared in the
    ``frame_presets`` registry as a dict, keyed by the preset's first dotted part: ``rise`` for ``rise.tc``)."""

    BUILTIN: ClassVar[dict[str, str]] = {"last": "last"}

    def _all(self) -> dict[str, str]:
        from vreason.core.registry import frame_presets, load_builtins

        load_builtins()
        out: dict[str, str] = {}
        for family in frame_presets.names():
            out.update(frame_presets.get(family))
        out.update(self.BUILTIN)
        return out

    def __getitem__(self, name: str) -> str:
        return self._all()[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._all()

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


PRESETS: Mapping[str, str] = _Presets()
"""Every named frame policy (preset name → spec), the seed protocols' from their packages."""


def policy(spec: str | FramePolicy) -> FramePolicy:
    """A policy from a spec string or a preset name (optionally followed by options: ``pai.u+max_frames=8``)."""
    return FramePolicy.parse(spec)


def check_frame_policy(v: Any) -> Any:
    """A frame-policy spec or preset name that parses (else the option's error gives the reason)."""
    if v is not None:
        try:
            policy(v)
        except (ConfigError, ValueError) as exc:
            raise ValueError(str(exc)) from None
    return v


# The frame-policy option type of the protocols' options models (validated once, here).
FramePolicyField = Annotated[str, AfterValidator(check_frame_policy)]
