"""PAI-Bench-G quality scorer: loads the feature backends from local files and streams each video once.

Backends (all optional; a dimension whose backend is not given is ``unscored`` with the reason, never 0):

==========================  ===============================  =============================================
dimension                   option                           released code's model
==========================  ===============================  =============================================
subject_consistency         ``features`` (``--features``)    DINO ViT-B/16
background_consistency      ``clip``                         CLIP ViT-B/32
aesthetic_quality           ``aesthetic_head`` + CLIP        LAION linear head on CLIP ViT-L/14 features
                            (``aesthetic_clip``, else clip)
imaging_quality             ``imaging_model``                MUSIQ (SPAQ), pyiqa
motion_smoothness           ``interpolator``                 AMT (``linear`` = opt-in classical substitute,
                                                             ``torchscript:/file.pt`` = your own model)
overall_consistency         ``overall_consistency``          ViCLIP (``clip-mean`` = opt-in substitute)
i2v_subject                 ``features``                     DINO ViT-B/16
i2v_background              ``i2v_background_features``      DreamSim
==========================  ===============================  =============================================

A TorchScript imaging model takes a (1, 3, H, W) float tensor in [0, 1] and returns its score on the
0–100 scale; a TorchScript interpolator takes two such tensors and returns the middle frame.
The aesthetic head is a ``torch.nn.Linear(D, 1)`` state dict (``weight`` (1, D), ``bias`` (1)).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from vreason.core.errors import VideoError
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.core.scoring import ScoreContext, Scorer
from vreason.measure.base import ModelMissing
from vreason.protocols.pai.g import quality as q


def stream_frames(path: str, max_side: int | None = None) -> Iterator[np.ndarray]:
    """Every frame of ``path`` (RGB uint8) in order, one at a time; damage anywhere raises a VideoError."""
    from vreason.frames.video import iter_frames

    return iter_frames(path, max_side=max_side)


@lru_cache(maxsize=8)
def _embedder(spec: str, device: str, dtype: str, batch_size: int, text: bool):
    from vreason.measure import spec as mspec

    make = mspec.make_text_image if text else mspec.make_embedder
    return make(spec, device=device, dtype=dtype, batch_size=batch_size)


@lru_cache(maxsize=4)
def _aesthetic_head(path: str) -> tuple[np.ndarray, float]:
    import torch

    if not os.path.isfile(path):
        raise ModelMissing(f"aesthetic head {os.path.basename(path)} does not exist (--opt aesthetic_head=FILE.pth)")
    sd = torch.load(path, map_location="cpu", weights_only=True)
    sd = {k.split(".")[-1]: v for k, v in sd.items()} if isinstance(sd, dict) else {}
    if "weight" not in sd or "bias" not in sd or sd["weight"].ndim != 2 or sd["weight"].shape[0] != 1:
        raise ModelMissing(f"aesthetic head {os.path.basename(path)} is not a Linear(D, 1) state dict "
                           f"(keys: {sorted(sd)})")
    return sd["weight"].float().numpy()[0], float(sd["bias"].float().reshape(-1)[0])


@lru_cache(maxsize=4)
def _torchscript(path: str, what: str):
    import torch

    if not os.path.isfile(path):
        raise ModelMissing(f"{what} TorchScript file {os.path.basename(path)} does not exist")
    return torch.jit.load(path, map_location="cpu").eval()


def _to_tensor(frame: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(frame)).permute(2, 0, 1)[None].float() / 255.0


def torchscript_interpolator(path: str) -> q.Interpolator:
    mod = _torchscript(path, "interpolator")

    def interp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            out = mod(_to_tensor(a), _to_tensor(b))
        # Released (VBench motion_smoothness.py): the interpolated frame is scaled by 255 and cast with
        # numpy's astype(np.uint8), which truncates; no rounding.
        return out[0].permute(1, 2, 0).clamp(0, 1).mul(255).numpy().astype(np.uint8)

    return interp


def imaging_scores(path: str, frames: list[np.ndarray]) -> np.ndarray:
    import torch

    mod = _torchscript(path, "imaging-quality")
    with torch.no_grad():
        return np.array([float(mod(_longer_512_tensor(f)).reshape(-1)[0]) for f in frames])


def _longer_512_tensor(frame: np.ndarray):
    """Released (VBench imaging_quality.py, transform 'longer'): the longer side brought to 512 when above it
    by a bilinear resize of the float tensor without antialiasing (align_corners=False, as torchvision's Resize)."""
    import torch

    t = _to_tensor(frame)
    h, w = frame.shape[:2]
    if max(h, w) > 512:
        s = 512.0 / max(h, w)
        t = torch.nn.functional.interpolate(t, size=(int(s * h), int(s * w)), mode="bilinear",
                                            align_corners=False, antialias=False)
    return t


class PaiGQualityScorer(Scorer):
    """PAI-Bench-G quality dimensions (VBench formulas) from locally loaded backbones; one pass per video."""

    name: ClassVar[str] = "pai_g_quality"
    version: ClassVar[str] = "1"
    kind: ClassVar[str] = "cpu"
    metrics: ClassVar[tuple[str, ...]] = q.DIMENSIONS

    def __init__(self, *, features: str | None = None, clip: str | None = None, aesthetic_clip: str | None = None,
                 aesthetic_head: str | None = None, imaging_model: str | None = None,
                 interpolator: str | None = None, overall_consistency: str | None = None,
                 i2v_background_features: str | None = None, formula: str = "released", device: str = "cpu",
                 dtype: str = "float32", batch_size: int = 16, dimensions: tuple[str, ...] | None = None):
        self.cfg = dict(features=features, clip=clip, aesthetic_clip=aesthetic_clip or clip,
                        aesthetic_head=aesthetic_head, imaging_model=imaging_model, interpolator=interpolator,
                        overall_consistency=overall_consistency, i2v_background_features=i2v_background_features)
        self.formula = formula
        # only the chosen dimensions are computed and emitted (VBench's --dimension); the others are not scores
        self.metrics = tuple(d for d in q.DIMENSIONS if dimensions is None or d in dimensions)
        self.device, self.dtype, self.batch_size = device or "cpu", dtype, int(batch_size)

    # ----------------------------------------------------------------- backends
    def _emb(self, spec: str | None, what: str, text: bool = False):
        if not spec:
            raise ModelMissing(what)
        return _embedder(spec, self.device, self.dtype, self.batch_size, text)

    def _plan(self, sample: Sample) -> tuple[dict[str, Any], dict[str, str]]:
        """dimension → its prepared consumer; dimension → why it cannot be scored."""
        c, plan, missing = self.cfg, {}, {}
        image = None
        if sample.input_image:
            from vreason.protocols.judge_inputs import load_image

            image = load_image(sample.resolve(sample.input_image))

        def want(dim: str, fn) -> None:
            if dim not in self.metrics:
                return
            try:
                plan[dim] = fn()
            except ModelMissing as exc:
                missing[dim] = str(exc)
            except (ImportError, OSError, ValueError, RuntimeError, KeyError) as exc:
                missing[dim] = f"backend could not be loaded: {type(exc).__name__}: {exc}"

        dino_msg = ("subject features not given: the released code uses DINO ViT-B/16; pass --features "
                    "transformers:/local/dino-folder")
        want("subject_consistency", lambda: (self._emb(c["features"], dino_msg), q.ConsistencyAcc(self.formula)))
        want("background_consistency", lambda: (self._emb(c["clip"], "CLIP not given: the released code uses CLIP "
                                                           "ViT-B/32; pass --opt clip=transformers:/local/clip-folder",
                                                           text=True), q.ConsistencyAcc(self.formula)))

        def aesthetic():
            if not c["aesthetic_head"]:
                raise ModelMissing("LAION aesthetic head not given: pass --opt aesthetic_head=FILE.pth (a Linear(768,"
                                   " 1) state dict) and a CLIP ViT-L/14 folder (--opt aesthetic_clip=…)")
            w, b = _aesthetic_head(c["aesthetic_head"])
            emb = self._emb(c["aesthetic_clip"], "CLIP for the aesthetic head not given: --opt "
                            "aesthetic_clip=transformers:/local/clip-vit-l-14", text=True)
            return emb, (w, b), q.MeanAcc()

        want("aesthetic_quality", aesthetic)

        def imaging():
            if not c["imaging_model"]:
                raise ModelMissing("imaging-quality model not given: the released code uses MUSIQ (pyiqa); pass "
                                   "--opt imaging_model=FILE.pt (TorchScript, frame in [0,1] -> score 0-100)")
            _torchscript(c["imaging_model"], "imaging-quality")
            return c["imaging_model"], q.MeanAcc()

        want("imaging_quality", imaging)

        def smooth():
            spec = c["interpolator"]
            if not spec:
                raise ModelMissing("no frame interpolator: the released code uses AMT, which vreason cannot ship; "
                                   "pass --opt interpolator=linear (classical substitute, recorded) or "
                                   "--opt interpolator=torchscript:/file.pt")
            fn = q.linear_interpolator if spec == "linear" else torchscript_interpolator(spec.split(":", 1)[1])
            return q.SmoothnessAcc(fn)

        want("motion_smoothness", smooth)

        def overall():
            if c["overall_consistency"] != "clip-mean":
                raise ModelMissing("no video-text model: the released code uses ViCLIP (not available in vreason); "
                                   "pass --opt overall_consistency=clip-mean with --opt clip=… (substitute, recorded)")
            emb = self._emb(c["clip"], "clip-mean needs --opt clip=transformers:/local/clip-folder", text=True)
            return emb, emb.embed_text([sample.prompt])[0], q.MeanFeatureAcc()

        want("overall_consistency", overall)
        for dim, spec, msg in (("i2v_subject", c["features"], dino_msg),
                               ("i2v_background", c["i2v_background_features"],
                                "i2v background features not given: the released code uses DreamSim (not in "
                                "vreason); pass --opt i2v_background_features=SPEC (any image embedder, recorded)")):
            if image is None and dim in self.metrics:
                missing[dim] = "the sample has no input image (i2v dimensions need one)"
                continue
            if image is not None:
                want(dim, lambda spec=spec, msg=msg: self._i2v(spec, msg, image))
        return plan, missing

    def _i2v(self, spec: str | None, msg: str, image: np.ndarray) -> tuple[Any, q.I2VAcc]:
        emb = self._emb(spec, msg)
        return emb, q.I2VAcc(emb.embed([image])[0], self.formula)

    # ----------------------------------------------------------------- scoring
    def score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        if not video.path:
            return self.fail(sample, video, "no video path")
        try:
            plan, missing = self._plan(sample)
        except VideoError as exc:
            return self.fail(sample, video, f"input image: {exc}")
        n = 0
        try:
            if plan:
                batch: list[np.ndarray] = []
                for f in stream_frames(video.path):
                    n += 1
                    if "motion_smoothness" in plan:
                        plan["motion_smoothness"].add_frame(f)
                    batch.append(f)
                    if len(batch) == self.batch_size:
                        self._feed(plan, batch)
                        batch = []
                if batch:
                    self._feed(plan, batch)
        except VideoError as exc:
            return self.fail(sample, video, str(exc))
        return self._scores(sample, video, plan, missing, n)

    def _feed(self, plan: dict[str, Any], batch: list[np.ndarray]) -> None:
        cache: dict[int, np.ndarray] = {}

        def feats(emb) -> np.ndarray:
            if id(emb) not in cache:
                cache[id(emb)] = np.asarray(emb.embed(batch), np.float64)
            return cache[id(emb)]

        for dim in ("subject_consistency", "background_consistency", "i2v_subject", "i2v_background"):
            if dim in plan:
                emb, acc = plan[dim]
                acc.add(feats(emb))
        if "aesthetic_quality" in plan:
            emb, (w, b), acc = plan["aesthetic_quality"]
            acc.add(q.unit(feats(emb)) @ w + b)
        if "imaging_quality" in plan:
            path, acc = plan["imaging_quality"]
            acc.add(imaging_scores(path, batch))
        if "overall_consistency" in plan:
            emb, _, acc = plan["overall_consistency"]
            acc.add(feats(emb))

    def _scores(self, sample: Sample, video: Video, plan: dict[str, Any], missing: dict[str, str],
                n: int) -> list[Score]:
        c = self.cfg
        backend = {"subject_consistency": c["features"], "i2v_subject": c["features"],
                   "background_consistency": c["clip"], "aesthetic_quality": c["aesthetic_clip"],
                   "overall_consistency": c["clip"], "i2v_background": c["i2v_background_features"]}
        released_model = {"subject_consistency": "DINO ViT-B/16", "i2v_subject": "DINO ViT-B/16",
                          "background_consistency": "CLIP ViT-B/32", "aesthetic_quality": "CLIP ViT-L/14"}
        out: list[Score] = []
        for dim in self.metrics:
            if dim not in plan:
                out += self.fail(sample, video, missing.get(dim, "not computed"), status=ScoreStatus.unscored,
                                 metric=dim)
                continue
            item = plan[dim]
            details: dict[str, Any] = {"frames": n, "formula": self.formula}
            if dim in backend:
                details["backend"] = getattr(item[0], "name", "")
                spec = str(backend[dim] or "")
                if dim == "i2v_background":
                    details["substitute"] = f"{spec} (DreamSim in the released code)"
                elif spec.startswith("classical:"):
                    details["substitute"] = f"{spec} ({released_model.get(dim, '?')} in the released code)"
            if dim in ("subject_consistency", "background_consistency"):
                # released aggregation (VBench subject_/background_consistency.py): summed similarities over
                # summed frame pairs across videos; the pair count is kept for it
                details["pairs"] = item[1].n
            if dim == "motion_smoothness":
                value, norm = item.result(), item.result()
                details["interpolator"] = c["interpolator"]
                if c["interpolator"] == "linear":
                    details["substitute"] = "linear (AMT in the released code)"
            elif dim == "aesthetic_quality":
                raw = item[2].result()
                value, norm = raw, None if raw is None else raw / 10.0
                details["aesthetic_head"] = os.path.basename(c["aesthetic_head"] or "")
            elif dim == "imaging_quality":
                raw = item[1].result()
                value, norm = raw, None if raw is None else raw / 100.0
                details["imaging_model"] = os.path.basename(c["imaging_model"] or "")
            elif dim == "overall_consistency":
                value = norm = item[2].cosine(item[1])
                details["substitute"] = "clip-mean (ViCLIP in the released code)"
            else:
                value = norm = item[1].result()
            if value is None:
                out += self.fail(sample, video, f"{dim}: video too short ({n} frames)", status=ScoreStatus.unscored,
                                 metric=dim)
                continue
            norm = float(norm)
            if not 0.0 <= norm <= 1.0:
                # released: unbounded (aesthetic / 10 above 1 stays). The record's `normalized` is in [0, 1];
                # the unclamped value is kept here and the tables use it (counted), unless --opt clamp=true
                details["normalized_unclamped"] = norm
                norm = float(min(1.0, max(0.0, norm)))
            out.append(self.ok(sample, video, dim, float(value), norm, evidence=Evidence(details=details)))
        return out


__all__ = ["PaiGQualityScorer", "stream_frames", "torchscript_interpolator"]
