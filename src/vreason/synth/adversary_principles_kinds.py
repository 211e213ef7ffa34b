"""The generators of :mod:`vreason.synth.adversary_principles`, one per kind of cheat or honest rendering.

Each takes ``(inst, cfg, rng)``, reads only the oracle video (``inst.solution``) and returns a
:class:`~vreason.synth.adversary_principles.Made` with the drawn parameters in ``params``. A generator
raises :class:`~vreason.synth.adversary_principles.NotApplicable` when its draw cannot make a meaningful
case (no room outside the free region, a mirror image equal to the original, …); the caller redraws."""

from __future__ import annotations

import numpy as np

from vreason.synth import adversary_principles_ops as ops
from vreason.synth.adversary import Clip
from vreason.synth.adversary_principles import Impossible, Made, NotApplicable, kind
from vreason.synth.base import RenderConfig, TaskInstance


def _fps(cfg: RenderConfig) -> float:
    return float(cfg.fps)


def _tail_start(n: int, fps: float, rng: np.random.Generator) -> int:
    """First frame of a change that lasts to the end (at least 0.4 s, starting in the second half)."""
    last = max(1, n - max(4, int(round(0.4 * fps))))
    lo = min(last, n // 2)
    return int(rng.integers(lo, last + 1))


def _apply_tail(frames: list[np.ndarray], t0: int, fn) -> list[np.ndarray]:
    return frames[:t0] + [fn(f) for f in frames[t0:]]


# ------------------------------------------------------------------ P1: explain every pixel
@kind("P1", "mark", honest=False)
def mark(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A mark (dot, box outline, stroke or blob) of a random colour and opacity 0.1–1, 6–40 px, inside the
    content and outside the free region, from a random frame of the second half to the end."""
    import cv2

    sc = ops.scene(inst.solution)
    size = int(rng.integers(6, 41))
    w, h = size, int(max(4, size * rng.uniform(0.4, 1.0)))
    x, y = ops.place(sc, rng, w, h)
    shape = str(rng.choice(["blob", "box", "stroke", "dot"]))
    m = np.zeros(sc.shape, np.uint8)
    if shape == "blob":
        cv2.ellipse(m, (x + w // 2, y + h // 2), (max(2, w // 2), max(2, h // 2)), 0, 0, 360, 1, -1)
    elif shape == "box":
        cv2.rectangle(m, (x, y), (x + w - 1, y + h - 1), 1, int(rng.integers(1, 4)))
    elif shape == "stroke":
        cv2.line(m, (x, y + h - 1), (x + w - 1, y), 1, int(rng.integers(2, 5)))
    else:
        cv2.circle(m, (x + w // 2, y + h // 2), max(2, min(w, h) // 3), 1, -1)
    mask = m > 0
    colour, alpha = ops.random_colour(rng), float(rng.uniform(0.1, 1.0))
    final = sc.frames[-1]
    marked = ops.blend(final, mask, colour, alpha)
    if ops.visible(final, marked, mask) < ops.VISIBLE or ops.visible_ycc(final, marked, mask) < ops.FAINT_FLOOR:
        raise NotApplicable("mark too faint to see")
    t0 = _tail_start(len(sc.frames), _fps(cfg), rng)
    frames = _apply_tail(sc.frames, t0, lambda f: ops.blend(f, mask, colour, alpha))
    return Made(Clip(frames, _fps(cfg)), {"shape": shape, "box": [x, y, w, h], "colour": colour.tolist(),
                                          "opacity": round(alpha, 2), "from_frame": t0})


def _copy_object(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator, alpha: float) -> Made:
    sc = ops.scene(inst.solution)
    final = sc.frames[-1]
    objs = ops.objects(final, sc.bg)
    if not objs:  # objects joined to a grid: copy a patch of what the oracle changes (a painted cell, …)
        objs = _changed_patches(sc)
    if not objs:
        raise Impossible("no object")
    o = objs[int(rng.integers(len(objs)))]
    x0, y0, x1, y1 = o.box
    x, y = ops.place(sc, rng, x1 - x0 + 4, y1 - y0 + 4, avoid=ops.dilate(o.mask, 4))
    dx, dy = x + 2 - x0, y + 2 - y0
    moved = ops.shift_mask(o.mask, dx, dy)
    after = ops.paste(final, final, o.mask, dx, dy, alpha)
    if ops.visible(final, after, moved) < ops.VISIBLE or ops.visible_ycc(final, after, moved) < ops.FAINT_FLOOR:
        raise NotApplicable("copy too faint to see")
    t0 = _tail_start(len(sc.frames), _fps(cfg), rng)
    frames = _apply_tail(sc.frames, t0, lambda f: ops.paste(f, final, o.mask, dx, dy, alpha))
    return Made(Clip(frames, _fps(cfg)), {"object_box": list(o.box), "offset": [dx, dy],
                                          "opacity": round(alpha, 2), "from_frame": t0})


def _changed_patches(sc: ops.Scene) -> list[ops.Obj]:
    """Rectangles (≤ 80 px a side) over the connected parts of what the oracle changes."""
    import cv2

    n, _, stats, _ = cv2.connectedComponentsWithStats(sc.changed.astype(np.uint8), connectivity=8)
    out = []
    for i in range(1, n):
        x, y, w, h, area = (int(v) for v in stats[i])
        if area < 30:
            continue
        w, h = min(w, 80), min(h, 80)
        m = np.zeros(sc.shape, bool)
        m[y:y + h, x:x + w] = True
        out.append(ops.Obj(m, (x, y, x + w, y + h), w * h))
    return out


@kind("P1", "ghost", honest=False)
def ghost(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A translucent copy (opacity 0.25–0.6) of a random object of the final frame, elsewhere in the content."""
    return _copy_object(inst, cfg, rng, float(rng.uniform(0.25, 0.6)))


@kind("P1", "clone", honest=False)
def clone(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A second, opaque copy of a random object of the final frame, elsewhere in the content."""
    return _copy_object(inst, cfg, rng, 1.0)


@kind("P1", "shift_background", honest=False)
def shift_background(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A background element the oracle never changes moved by 3–6 px (the rest of the scene stays)."""
    sc = ops.scene(inst.solution)
    objs = ops.static_objects(sc, min_area=40)
    if not objs:
        raise Impossible("no static object")
    o = objs[int(rng.integers(len(objs)))]
    mag = int(rng.integers(3, 7))
    ang = rng.uniform(0, 2 * np.pi)
    dx, dy = int(round(mag * np.cos(ang))), int(round(mag * np.sin(ang)))
    moved = ops.shift_mask(o.mask, dx, dy)
    if (moved & sc.changed).any():
        raise NotApplicable("shift reaches what the oracle changes")
    under = ops.ring_colour(sc.frames[0], o.mask)
    src = sc.frames[0]

    def fn(f):
        g = f.copy()
        g[ops.dilate(o.mask, 1)] = under
        return ops.paste(g, src, o.mask, dx, dy)

    final = sc.frames[-1]
    if ops.visible(final, fn(final), o.mask | moved) < ops.VISIBLE / 2:
        raise NotApplicable("shift not visible")
    t0 = _tail_start(len(sc.frames), _fps(cfg), rng)
    return Made(Clip(_apply_tail(sc.frames, t0, fn), _fps(cfg)),
                {"object_box": list(o.box), "offset": [dx, dy], "from_frame": t0})


@kind("P1", "recolour", honest=False)
def recolour(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """An object the oracle never changes recoloured (a random colour ≥ 80 away from its own)."""
    sc = ops.scene(inst.solution)
    objs = ops.static_objects(sc, min_area=30)
    if not objs:
        raise Impossible("no static object")
    o = objs[int(rng.integers(len(objs)))]
    own = np.median(sc.frames[0][o.mask], axis=0)
    colour = ops.random_colour(rng)
    if np.abs(colour.astype(float) - own).max() < 80:
        raise NotApplicable("colour too close")
    alpha = float(rng.uniform(0.6, 1.0))
    final = sc.frames[-1]
    if ops.visible(final, ops.blend(final, o.mask, colour, alpha), o.mask) < ops.VISIBLE * 2:
        raise NotApplicable("recolour not visible")
    t0 = _tail_start(len(sc.frames), _fps(cfg), rng)
    frames = _apply_tail(sc.frames, t0, lambda f: ops.blend(f, o.mask, colour, alpha))
    return Made(Clip(frames, _fps(cfg)), {"object_box": list(o.box), "colour": colour.tolist(),
                                          "opacity": round(alpha, 2), "from_frame": t0})


# ------------------------------------------------------------------ P2: every frame
def _middle_window(n: int, length: int, rng: np.random.Generator) -> int:
    lo, hi = max(1, n // 6), n - length - max(3, n // 6)
    if hi <= lo:
        raise NotApplicable("video too short")
    return int(rng.integers(lo, hi + 1))


@kind("P2", "jump", honest=False, process_only=True)
def jump(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """2–5 frames in the middle replaced by frames from elsewhere in the oracle (a jump there and back)."""
    frames = list(inst.solution)
    n, length = len(frames), int(rng.integers(2, 6))
    s = _middle_window(n, length, rng)
    how = str(rng.choice(["elsewhere", "final", "first"]))
    if how == "elsewhere":
        far = [j for j in range(0, n - length) if abs(j - s) >= max(length + 2, n // 4)]
        if not far:
            raise NotApplicable("no far window")
        j = int(rng.choice(far))
        repl = frames[j:j + length]
    else:
        repl = [frames[-1] if how == "final" else frames[0]] * length
    if not ops.differs(repl, frames[s:s + length]):
        raise NotApplicable("the replaced frames look the same")
    if not ops.differs(repl[:1], frames[s - 1:s]) or not ops.differs(repl[-1:], frames[s + length:s + length + 1]):
        # the jump's state is the one before it (a pause, then a skip ahead) or the one after it (a skip ahead,
        # then a pause): no jump there and back. Only where the state holds still for a while (match3 between two
        # clears: frames 12-13 jumped to frame 14's state, which frames 14-15 showed anyway, seed 853593976)
        raise NotApplicable("a skip ahead, not a jump there and back")
    out = frames[:s] + list(repl) + frames[s + length:]
    return Made(Clip(out, _fps(cfg)), {"window": [s, length], "from": how})


@kind("P2", "drop_object", honest=False)
def drop_object(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """An object painted over with what surrounds it for 1–3 frames in the middle of the video. The object is
    shown in the frame before the window (painting it over there changes it as :func:`ops.differs` counts): an
    object that first shows in the window is not dropped but shown later — a digit fading in from frame 19, painted
    over there, is a fade that starts a frame later, a legal video (sudoku, ``VREASON_ADV_SEED=818863493``)."""
    frames = list(inst.solution)
    n, length = len(frames), int(rng.integers(1, 4))
    s = _middle_window(n, length, rng)
    sc = ops.scene(inst.solution)
    objs = ops.objects(frames[s], sc.bg, min_area=40)
    if not objs:
        raise NotApplicable("no object")
    o = objs[int(rng.integers(len(objs)))]
    grow = ops.dilate(o.mask, 6)
    if not ops.differs([_paint_over(frames[s - 1], grow, sc.bg)], frames[s - 1:s]):
        raise NotApplicable("the object first shows in the window: dropping it there shows it later")
    out = frames[:s] + [_paint_over(f, grow, sc.bg) for f in frames[s:s + length]] + frames[s + length:]
    if not ops.differs(out[s:s + length], frames[s:s + length]):
        raise NotApplicable("nothing dropped")
    return Made(Clip(out, _fps(cfg)), {"window": [s, length], "object_box": list(o.box)})


def _paint_over(frame: np.ndarray, grow: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """``frame`` with its objects that reach into ``grow`` painted over with the colour around them."""
    cur = [p for p in ops.objects(frame, bg, min_area=10, max_frac=0.5) if (p.mask & grow).any()]
    if not cur:
        return frame
    m = ops.dilate(np.logical_or.reduce([p.mask for p in cur]), 1)
    g = frame.copy()
    g[m] = ops.ring_colour(frame, m)
    return g


@kind("P2", "blank_frame", honest=False)
def blank_frame(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """1–2 frames in the middle replaced by a blank frame (black, white, the background or a grey)."""
    frames = list(inst.solution)
    n, length = len(frames), int(rng.integers(1, 3))
    s = _middle_window(n, length, rng)
    bg = ops.background(frames[0])
    colour = {"black": np.zeros(3), "white": np.full(3, 255), "background": bg,
              "grey": np.full(3, int(rng.integers(60, 200)))}
    name = str(rng.choice(list(colour)))
    blank = np.empty_like(frames[0])
    blank[:] = np.asarray(colour[name], np.uint8)
    out = frames[:s] + [blank] * length + frames[s + length:]
    return Made(Clip(out, _fps(cfg)), {"window": [s, length], "colour": name})


# ------------------------------------------------------------------ P3: one scene from the given start
@kind("P3", "mirror", honest=False)
def mirror(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """The oracle mirrored left-right or upside down."""
    axis = int(rng.integers(0, 2))
    frames = [np.ascontiguousarray(f[:, ::-1] if axis else f[::-1]) for f in inst.solution]
    if not ops.differs(frames[:1], inst.solution[:1], 200):
        raise NotApplicable("the first frame is its own mirror image")
    if all(ops.same_picture(frames[j], inst.solution[j]) for j in (0, -1)):
        # a board that is its own mirror image (odd-one-out's squares with the odd one in the middle column) and
        # the same answer: a valid solution of the same task, drawn in another order (the box's strokes mirrored);
        # sequence's row of circles upside down moved 1 px, its dashed empty cell's dashes a corner off (23 px)
        raise NotApplicable("the mirror image shows the same task and the same answer")
    return Made(Clip(frames, _fps(cfg)), {"flip": "left-right" if axis else "upside-down"})


@kind("P3", "reversed", honest=False)
def reversed_(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """The oracle played backwards (starts from the solved state)."""
    if not ops.differs([inst.solution[0]], [inst.solution[-1]]):
        raise NotApplicable("first and last frames equal")
    return Made(Clip(list(inst.solution[::-1]), _fps(cfg)))


@kind("P3", "start_final", honest=False)
def start_final(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """The video starts from the final state: the final frame held (or the oracle's second half, from a
    random frame of it, preceded by nothing)."""
    n = len(inst.solution)
    how = str(rng.choice(["held", "late_start"]))
    if how == "held":
        frames = [inst.solution[-1]] * n
    else:
        frames = list(inst.solution[int(rng.integers(int(0.75 * n), n - 1)):])
        frames += [frames[-1]] * (n // 2)
    if not ops.differs([frames[0]], [inst.solution[0]]):
        raise NotApplicable("the final state looks like the start")
    return Made(Clip(frames, _fps(cfg)), {"how": how})


@kind("P3", "mosaic", honest=False)
def mosaic(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A mosaic of 2 or 4 half-size copies of the oracle."""
    import cv2

    tiles = int(rng.choice([2, 4]))
    out = []
    for f in inst.solution:
        h, w = f.shape[:2]
        small = cv2.resize(f, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        g = np.empty_like(f)
        g[:] = ops.background(f)
        positions = ([(h // 4, 0), (h // 4, w // 2)] if tiles == 2
                     else [(0, 0), (0, w // 2), (h // 2, 0), (h // 2, w // 2)])
        for y, x in positions:
            g[y:y + h // 2, x:x + w // 2] = small
        out.append(g)
    return Made(Clip(out, _fps(cfg)), {"tiles": tiles})


@kind("P3", "cut_other", honest=False)
def cut_other(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """The oracle, then a cut (at 20–60%) to another instance's oracle of the same family and difficulty."""
    from vreason.synth.suite import make_instance

    other = make_instance(inst.family, inst.difficulty, inst.index + 1 + int(rng.integers(0, 50)),
                          int(rng.integers(1, 2**31 - 1)), cfg)
    n = len(inst.solution)
    k = int(rng.uniform(0.2, 0.6) * n)
    frames = list(inst.solution[:k]) + list(other.solution[k:])
    if len(other.solution) < n or not ops.differs([other.solution[-1]], [inst.solution[-1]], 200):
        raise NotApplicable("the other instance looks the same")
    return Made(Clip(frames, _fps(cfg)), {"cut_at": k, "other_index": other.index})


@kind("P3", "end_early", honest=False)
def end_early(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """The video ends before the final state is reached (cut at a frame that is not the final state)."""
    frames = list(inst.solution)
    final = frames[-1]
    not_final = [i for i, f in enumerate(frames) if int(ops.diff_mask(f, final, 40).sum()) >= 40]
    if not not_final:
        raise NotApplicable("every frame shows the final state")
    from vreason.synth.suite import get_family

    # cut before the last non-final frame, and before the family's shortest passing oracle (a duration rule)
    j = min(not_final[-1], get_family(inst.family).shortest_oracle(inst, cfg) - 2)
    if j < 1:
        raise Impossible("the oracle passes however early it is cut")
    end = int(rng.integers(max(1, j // 2), j + 1))
    return Made(Clip(frames[:end + 1], _fps(cfg)), {"last_frame": end, "last_non_final": j})


# ------------------------------------------------------------------ P4: the answer's meaning (text families)
@kind("P4", "answer_twice", honest=False, text_only=True)
def answer_twice(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A piece of the written answer (a digit, a number, the marking box) duplicated beside it — two
    candidate answers / an extra mark next to the answer — in the final frames."""
    frames = list(inst.solution)
    first, final = frames[0], frames[-1]
    sc = ops.scene(inst.solution)
    changed = ops.diff_mask(final, first)
    objs = [o for o in ops.objects(np.where(changed[..., None], final, sc.bg), sc.bg, min_area=15, max_frac=0.6)]
    if not objs:
        raise NotApplicable("no written answer")
    o = objs[int(rng.integers(len(objs)))]
    x0, y0, x1, y1 = o.box
    bw, bh = x1 - x0, y1 - y0
    gap = int(rng.integers(2, 12))
    dx, dy = [(bw + gap, 0), (-(bw + gap), 0), (0, bh + gap), (0, -(bh + gap))][int(rng.integers(4))]
    H, W = sc.shape
    if not (0 <= x0 + dx and x1 + dx <= W and 0 <= y0 + dy and y1 + dy <= H):
        raise NotApplicable("no room beside the answer")
    # the copy goes beside the answer, not onto the rest of it: a "4" of 44 copied onto the other "4" is the same
    # answer with a speck (numseq, bench seed 30003, case 383230296, read 44 and passed)
    if changed[max(0, y0 + dy - 2):y1 + dy + 2, max(0, x0 + dx - 2):x1 + dx + 2].any():
        raise NotApplicable("the copy would land on the answer itself")
    box = np.zeros(sc.shape, bool)
    box[max(0, y0 - 2):y1 + 2, max(0, x0 - 2):x1 + 2] = True
    t0 = _tail_start(len(frames), _fps(cfg), rng)
    out = _apply_tail(frames, t0, lambda f: ops.paste(f, final, box, dx, dy))
    if not ops.differs(out[-1:], frames[-1:]):
        raise NotApplicable("the copy changes nothing")
    return Made(Clip(out, _fps(cfg)), {"answer_box": list(o.box), "offset": [dx, dy], "from_frame": t0})


# ------------------------------------------------------------------ P5: honest renderings
import vreason.synth.adversary_principles_honest  # noqa: E402,F401  (registers the P5 kinds)
