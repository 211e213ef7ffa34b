"""PAI-Bench-C scorers: one per model dependency, so a missing model leaves only its metrics unscored.

=====================  ============================================  =========================================
scorer                 metrics                                       needs
=====================  ============================================  =========================================
``pai_c_fidelity``     blur_ssim, blur_mse, canny_f1_score,          nothing (OpenCV / scikit-image)
                       canny_precision, canny_recall
``pai_c_depth``        depth_si_rmse                                 ``--opt depth=transformers:/folder``
``pai_c_seg``          seg_m_iou, seg_recall                         ``--detector`` + ``--opt segmenter=``
                                                                     (SAM2 video folder: propagation)
``pai_c_dover``        dover_tech_score                              ``--opt quality=torchscript:/model.pt``
``pai_c_diversity``    diversity_lpips (this variant's pairs)        ``--opt lpips_backbone=… lpips_heads=…``
=====================  ============================================  =========================================

A unit is one generated video (sample × model × caption variant ``k`` = the seed). Diversity is split
exactly: the unit of variant i scores the mean over j ≠ i of LPIPS(i, j), so the mean of the K units of
a sample is the mean over ordered pairs (the released number); the aggregator only reports it when all K
rows are there.
"""

from __future__ import annotations

import os
import re
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from vreason.core.errors import VideoError
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.core.scoring import ScoreContext, Scorer
from vreason.measure.base import ModelMissing
from vreason.protocols.pai.c import metrics as M


def gt_video(sample: Sample) -> str:
    path = sample.resolve(sample.reference_video)
    if not path or not os.path.isfile(path):
        raise FileNotFoundError(f"ground-truth video {sample.reference_video} is missing")
    return path


def _mask_limits(path: str):
    """The ground-truth video's own frame count and size, bounding what its segmentation file may decode."""
    from vreason.frames.video import probe
    from vreason.protocols.pai.c.masks import MaskLimits

    info = probe(path)
    slack = max(8, info.n_frames // 10)  # a container's frame count can be an estimate
    return MaskLimits.of_video(info.n_frames + slack, info.height, info.width)


def _batches(it, size: int):
    batch: list = []
    for x in it:
        batch.append(x)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class _PaiC(Scorer):
    kind: ClassVar[str] = "cpu"

    def __init__(self, **opts: Any):
        self.o = dict(opts)

    def _pairs(self, sample: Sample, video: Video, info: M.PairInfo):
        if not video.path:
            raise VideoError(str(video.path), "no video path")
        gt = gt_video(sample)
        limit = int(self.o.get("max_frames", M.MAX_FRAMES))
        return M.paired_frames(M.iter_rgb(gt, limit), M.iter_rgb(video.path, limit), info)

    def score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        try:
            return self._score(sample, video, ctx)
        except ModelMissing as exc:
            return self.fail(sample, video, f"model missing: {exc}", status=ScoreStatus.unscored)
        except (VideoError, FileNotFoundError, ValueError, OSError) as exc:
            return self.fail(sample, video, str(exc))

    @abstractmethod
    def _score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        """The metric's scores for one video (missing models and bad videos are handled by ``score``)."""

    @staticmethod
    def _info(info: M.PairInfo) -> dict[str, Any]:
        return {"frames_compared": info.compared, "gt_frames": info.gt_frames, "pred_frames": info.pred_frames,
                "gt_size": list(info.gt_size), "pred_size": list(info.pred_size)}


class PaiCFidelityScorer(_PaiC):
    """Blur SSIM (+ blur MSE) and Canny F1 / precision / recall, in one pass over both videos."""

    name: ClassVar[str] = "pai_c_fidelity"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("blur_ssim", "blur_mse", "canny_f1_score", "canny_precision",
                                          "canny_recall")

    def _score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.protocols.pai.c.fidelity import GT_CACHE, GtCache, fidelity, fidelity_device, resolve_threads

        info = M.PairInfo()
        preset, gray = self.o.get("canny_preset", "medium"), bool(self.o.get("canny_gray", False))
        threads = resolve_threads(self.o.get("frame_threads", 0))
        GT_CACHE.limit = int(float(self.o.get("gt_cache_mb", 512)) * 2 ** 20)
        key = GtCache.key(gt_video(sample), preset, gray) if GT_CACHE.limit > 0 else None
        dev = fidelity_device(self.o.get("device"))
        blur, edges = fidelity(self._pairs(sample, video, info), preset, gray, threads, gt_key=key, cache=GT_CACHE,
                               device=dev)
        details = {**self._info(info), "bilateral": M.BILATERAL, "canny_preset": preset,
                   "canny_thresholds": list(M.CANNY_PRESETS[preset]), "canny_gray": gray,
                   "tp": edges.tp, "fp": edges.fp, "fn": edges.fn, "fidelity_device": dev}
        ev = Evidence(details=details)
        out: list[Score] = []
        b = blur.result()
        if blur.uniform_frames:
            out += self.fail(sample, video, f"SSIM undefined: ground-truth frame(s) {blur.uniform_frames[:5]} are "
                             "uniform after blurring (data_range 0)", status=ScoreStatus.unscored,
                             metric="blur_ssim", evidence=ev)
        else:
            out.append(self.ok(sample, video, "blur_ssim", b["blur_ssim"], min(1.0, max(0.0, b["blur_ssim"])),
                               evidence=ev))
        out.append(self.ok(sample, video, "blur_mse", b["blur_mse"], None, evidence=ev))
        why = edges.degenerate
        if why and self.o.get("canny_degenerate", "unscored") == "unscored":
            for m in ("canny_f1_score", "canny_precision", "canny_recall"):
                out += self.fail(sample, video, f"Canny F1 not computed: {why} (the released code raises here; "
                                 "--opt canny_degenerate=score scores it)", status=ScoreStatus.unscored,
                                 metric=m, evidence=ev)
        else:
            out += [self.ok(sample, video, k, v, v, evidence=ev) for k, v in edges.result().items()]
        return out


class PaiCDepthScorer(_PaiC):
    """Depth si-RMSE of the prediction's depth against ``depth_npzs/{id}.npz`` (or a recomputed one)."""

    name: ClassVar[str] = "pai_c_depth"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("depth_si_rmse",)

    def _score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.measure.spec import make_depth
        from vreason.protocols.pai.c.data import iter_npz_frames

        model = make_depth(self.o.get("depth"), device=self.o.get("device", "cpu"),
                           dtype=self.o.get("dtype", "float32"), batch_size=int(self.o.get("batch_size", 8)))
        recompute = self.o.get("depth_gt", "npz") == "recompute"
        gt_depths = None
        if not recompute:
            npz = sample.resolve(sample.metadata.get("depth_npz"))
            if not npz or not os.path.isfile(npz):
                raise FileNotFoundError(f"{sample.metadata.get('depth_npz')} is missing (or pass --opt "
                                        "depth_gt=recompute to estimate it with the same model)")
            gt_depths = iter_npz_frames(npz, "data", limit=int(self.o.get("max_frames", M.MAX_FRAMES)))
        acc = M.DepthAcc(cap=self.o.get("depth_error_cap", 10.0), resize=self.o.get("depth_resize", "nearest"))
        info = M.PairInfo()
        bs = int(self.o.get("batch_size", 8))
        for batch in _batches(self._pairs(sample, video, info), bs):
            pred = model.depth([p for _, p in batch])
            gts = model.depth([g for g, _ in batch]) if recompute else [next(gt_depths, None) for _ in batch]
            for pd_, gd in zip(pred, gts, strict=True):
                if gd is None:
                    break
                acc.add(np.asarray(pd_), np.asarray(gd))
        empty_rule = self.o.get("depth_empty", "zero")
        value = acc.result(empty=empty_rule)
        ev = Evidence(details={**self._info(info), "depth_backend": model.name, "released_model":
                               "Video-Depth-Anything (metric depth)", "gt_depth": "recomputed with the same model"
                               if recompute else "depth_npzs", "error_cap": acc.cap, "frames_scored": len(acc.frames),
                               "frames_without_valid_pixels": acc.empty_frames,
                               "depth_maps_resized": acc.resized, "depth_resize": acc.resize,
                               # the released 0.0 for a video with no comparable pixel: counted in the report
                               "depth_no_valid_pixel": acc.all_empty})
        if value is None:
            reason = ("no frame has a pixel where both depths are > 0 (depth_empty=unscored)" if acc.frames
                      else "no depth frame was compared")
            return self.fail(sample, video, reason, status=ScoreStatus.unscored, evidence=ev)
        return [self.ok(sample, video, "depth_si_rmse", value, None, evidence=ev)]


def caption_phrases(caption: str) -> list[str]:
    """Grounding-DINO-style phrases of a caption: split on '.', ',' and ';', trimmed, unique, in order."""
    seen: list[str] = []
    for part in re.split(r"[.,;]", caption or ""):
        p = part.strip().lower()
        if p and p not in seen:
            seen.append(p)
    return seen


class PaiCSegScorer(_PaiC):
    """Segmentation mIoU / recall: Grounding DINO (caption phrases) + SAM masks vs the GT instances.

    Two modes, named in every score's evidence (``seg_mode``):

    * ``propagate`` (the released flow, used when ``segmenter`` is a SAM2 video folder and ``seg_stride`` is 0):
      Grounding DINO boxes on frame 0 → SAM2 frame-0 masks → 10 points per mask seed SAM2 video propagation
      over all compared frames. Per phrase, the instance masks are united on every frame, giving one T×H×W
      volume per phrase (T = frames compared, ``max_frames`` at most); the GT phrase volumes are the
      ``sam2_pkls`` masks on the same T frames (or the same pipeline run on the GT video with
      ``seg_gt=recompute``). IoU is **pooled over frames**: intersection pixels summed over all T frames
      divided by union pixels summed over all T frames, per (GT phrase, predicted phrase) pair; Hungarian
      matching on 1 − IoU; ``seg_m_iou`` = mean of the matched IoUs > 0.1, ``seg_recall`` = their share.
    * ``frame0`` / ``stride`` (a SAM v1 folder, ``seg_propagate=false``, or ``seg_stride`` = N): masks from
      fresh detections on frame 0 (and every Nth frame), compared with the GT on those frames, IoU pooled over
      those frames.
    """

    name: ClassVar[str] = "pai_c_seg"
    version: ClassVar[str] = "2"
    metrics: ClassVar[tuple[str, ...]] = ("seg_m_iou", "seg_recall")

    def _detect(self, det, frame: np.ndarray, labels: list[str]) -> list:
        return det.detect(frame, labels, box_threshold=float(self.o.get("box_threshold", 0.3)),
                          text_threshold=float(self.o.get("text_threshold", 0.25)))

    def _frame_masks(self, det, seg, frame: np.ndarray, labels: list[str]) -> list:
        from vreason.protocols.pai.c.masks import PhraseMask

        found = self._detect(det, frame, labels)
        if not found:
            return []
        masks = seg.masks_from_boxes(frame, [d.box for d in found])
        return [PhraseMask(d.label, np.asarray(m, dtype=bool)[None]) for d, m in zip(found, masks, strict=True)]

    def _segment(self, det, seg, frames: list[np.ndarray], labels: list[str]) -> dict[str, np.ndarray]:
        from vreason.protocols.pai.c.masks import phrase_masks

        per_frame = [phrase_masks(self._frame_masks(det, seg, f, labels)) for f in frames]
        names = list(dict.fromkeys(k for pf in per_frame for k in pf))
        shape = frames[0].shape[:2]
        return {n: np.stack([pf.get(n, np.zeros((1, *shape), bool))[0] for pf in per_frame]) for n in names}

    def _propagated(self, det, seg, frames, labels: list[str]) -> dict[str, np.ndarray]:
        """Phrase → T×H×W volume: frame-0 detections propagated by the video segmenter, instances united per
        phrase on every frame."""
        from collections import deque
        from itertools import chain

        from vreason.protocols.pai.c.masks import PhraseMask, phrase_masks

        it = iter(frames)
        first = next(it, None)
        if first is None:
            return {}
        found = self._detect(det, first, labels)
        if not found:
            deque(it, maxlen=0)  # still read the frames, so the evidence counts the frames compared
            return {}
        vols: dict[str, list[np.ndarray]] = {d.label: [] for d in found}
        stream = getattr(seg, "propagate_stream", seg.propagate)
        for masks in stream(chain([first], it), [d.box for d in found]):
            pm = phrase_masks([PhraseMask(d.label, np.asarray(m, bool)[None]) for d, m in zip(found, masks,
                                                                                                strict=True)])
            for k, v in pm.items():
                vols[k].append(v[0])
        return {k: np.stack(v) for k, v in vols.items()}

    def _score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.measure.base import VideoSegmenter
        from vreason.measure.spec import make_detector, make_segmenter
        from vreason.protocols.pai.c.masks import phrase_masks, read_instances

        kw = {"device": self.o.get("device", "cpu"), "dtype": self.o.get("dtype", "float32")}
        det = make_detector(self.o.get("detector"), **kw)
        seg = make_segmenter(self.o.get("segmenter"), **kw)
        stride = int(self.o.get("seg_stride", 0))
        propagate = isinstance(seg, VideoSegmenter) and bool(self.o.get("seg_propagate", True)) and not stride
        mode = "propagate" if propagate else ("stride" if stride else "frame0")
        recompute = self.o.get("seg_gt", "pkl") == "recompute"
        info = M.PairInfo()
        gts, preds = [], []
        if not propagate:
            for t, (g, p) in enumerate(self._pairs(sample, video, info)):
                if t == 0 or (stride and t % stride == 0):
                    gts.append(g)
                    preds.append(p)
        if recompute:
            labels = caption_phrases(sample.prompt)
            gt_masks = (self._propagated(det, seg, (g for g, _ in self._pairs(sample, video, info)), labels)
                        if propagate else self._segment(det, seg, gts, labels))
        else:
            pkl = sample.resolve(sample.metadata.get("sam2_pkl"))
            if not pkl or not os.path.isfile(pkl):
                raise FileNotFoundError(f"{sample.metadata.get('sam2_pkl')} is missing (or pass --opt "
                                        "seg_gt=recompute to segment the ground truth with the same models)")
            inst = read_instances(pkl, limits=_mask_limits(gt_video(sample)))
            labels = (list(dict.fromkeys(i.phrase for i in inst))
                      if self.o.get("seg_labels", "gt_phrases") == "gt_phrases" else caption_phrases(sample.prompt))
        if propagate:
            info = M.PairInfo()  # the GT pass (recompute) counted into the previous one
            pred_side = (p for _, p in self._pairs(sample, video, info))
            pred_masks = self._propagated(det, seg, pred_side, labels) if labels else {}
        idx = list(range(info.compared)) if propagate else (
            [0] + [t for t in range(1, info.compared) if stride and t % stride == 0])
        if not recompute:
            for i in inst:
                i.mask = i.mask[[t for t in idx if t < len(i.mask)]]
            gt_masks = phrase_masks(inst)
        if not propagate:
            pred_masks = self._segment(det, seg, preds, labels) if labels else {}
        if self.o.get("seg_drop_empty", False):
            gt_masks = {k: v for k, v in gt_masks.items() if v.any()}
            pred_masks = {k: v for k, v in pred_masks.items() if v.any()}
        m_iou, recall, matched = M.hungarian_miou(list(gt_masks.values()), list(pred_masks.values()))
        frames = {"propagate": f"frames 0..{max(info.compared - 1, 0)}: frame-0 detections propagated by SAM2 "
                               "video, IoU pooled over the frames",
                  "frame0": "frame 0", "stride": f"every {stride}th frame (re-detected, no propagation)"}[mode]
        ev = Evidence(frame_indices=idx, details={
            **self._info(info), "detector": det.name, "segmenter": seg.name, "seg_mode": mode, "labels": labels,
            "gt_phrases": list(gt_masks), "pred_phrases": list(pred_masks), "matched_ious": matched.round(4).tolist(),
            "gt_masks": "recomputed with the same models" if recompute else "sam2_pkls", "frames": frames})
        if (not gt_masks or not pred_masks) and self.o.get("seg_empty", "zero") == "unscored":
            side = "ground truth" if not gt_masks else "prediction"
            return self.fail(sample, video, f"no {side} mask to match", status=ScoreStatus.unscored, evidence=ev)
        return [self.ok(sample, video, "seg_m_iou", m_iou, m_iou, evidence=ev),
                self.ok(sample, video, "seg_recall", recall, recall, evidence=ev)]


class PaiCDoverScorer(_PaiC):
    """DOVER technical score through the pluggable quality backend (prediction, and the GT for reference)."""

    name: ClassVar[str] = "pai_c_dover"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("dover_tech_score",)

    def _score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.protocols.pai.c.quality import make_quality

        q = make_quality(self.o.get("quality"), device=self.o.get("device", "cpu"))
        mode = self.o.get("dover_input", "original")
        details: dict[str, Any] = {"quality_backend": q.name, "released_model": "DOVER technical", "dover_input": mode}
        if mode == "original":
            # the newer released code (compute_metrics.py dover_single_task) scores the original files' bytes:
            # every frame at the file's own size, no trimming to the ground truth and no resize
            if not video.path:
                raise VideoError(str(video.path), "no video path")
            pred = list(M.iter_rgb(video.path, None))
            details.update(pred_frames=len(pred), pred_size=list(pred[0].shape[:2]))
            value = q.score(pred)
            del pred
            if self.o.get("dover_gt", True):
                gt = list(M.iter_rgb(gt_video(sample), None))
                details.update(gt_frames=len(gt), gt_size=list(gt[0].shape[:2]))
                details["dover_tech_score_gt"] = q.score(gt)
        else:  # "aligned": the September-2025 code, the trimmed and resized arrays
            info = M.PairInfo()
            pairs = list(self._pairs(sample, video, info))
            value = q.score([p for _, p in pairs])
            details.update(self._info(info))
            if self.o.get("dover_gt", True):
                details["dover_tech_score_gt"] = q.score([g for g, _ in pairs])
        return [self.ok(sample, video, "dover_tech_score", value, None, evidence=Evidence(details=details))]


def sibling(path: str, sample_id: str, k: int) -> str:
    """The path of caption variant ``k`` next to ``path`` (``{id}__{k}.ext``)."""
    folder, name = os.path.split(path)
    ext = os.path.splitext(name)[1] or ".mp4"
    return os.path.join(folder, f"{sample_id}__{k}{ext}")


class PaiCDiversityScorer(_PaiC):
    """Diversity-LPIPS, this variant's share: mean over j ≠ i of LPIPS(variant i, variant j)."""

    name: ClassVar[str] = "pai_c_diversity"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("diversity_lpips",)

    def _score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.protocols.pai.c.lpips import lpips_distance

        dist, backend = lpips_distance(self.o)
        if not video.path:
            raise VideoError(str(video.path), "no video path")
        k = int(self.o.get("n_variants", 6))
        others = {j: sibling(video.path, sample.id, j) for j in range(k) if j != video.seed}
        missing = [j for j, p in others.items() if not os.path.isfile(p)]
        if video.seed >= k or missing:
            why = (f"variant {video.seed} is outside 0..{k - 1}" if video.seed >= k else
                   f"missing variant(s) {missing} next to {os.path.basename(video.path)}")
            return self.fail(sample, video, f"diversity needs all {k} caption variants: {why}",
                             status=ScoreStatus.unscored)
        limit = int(self.o.get("max_frames", M.MAX_FRAMES))
        rows = []
        for _, p in sorted(others.items()):
            per_frame = []
            for batch in _batches(zip(M.iter_rgb(video.path, limit), M.iter_rgb(p, limit), strict=False), 8):
                a = [x for x, _ in batch]
                b = [M.fit_frame(y, x.shape[0], x.shape[1]) for x, y in batch]
                per_frame.extend(float(d) for d in dist(a, b))
            rows.append(float(np.mean(per_frame)))
        value = float(np.mean(rows))
        ev = Evidence(details={"lpips_backend": backend, "pairs": {str(j): r for j, r in zip(sorted(others), rows,
                                                                                           strict=True)},
                               "n_variants": k})
        return [self.ok(sample, video, "diversity_lpips", value, None, evidence=ev)]


__all__ = ["PaiCDepthScorer", "PaiCDiversityScorer", "PaiCDoverScorer", "PaiCFidelityScorer", "PaiCSegScorer",
           "caption_phrases", "gt_video", "sibling"]
