"""PAI-Bench-C (conditional generation): control fidelity, quality and diversity of generated videos.

``vreason run pai-c --data DATA --videos RESULTS --models NAME`` scores the generated videos
``RESULTS/{video_id}__{k}.mp4`` (k = 0..5, the six caption variants; importer convention ``pai``, the
variant is the seed) against the ground truth of the released layout (:mod:`vreason.protocols.pai.c.data`).

Metrics (formulas in :mod:`vreason.protocols.pai.c.metrics`, scorers in
:mod:`vreason.protocols.pai.c.scorers`): ``blur_ssim``, ``canny_f1_score`` / ``canny_precision`` /
``canny_recall``, ``depth_si_rmse``, ``seg_m_iou`` / ``seg_recall``, ``dover_tech_score`` — the released
``METRICS`` — plus ``blur_mse`` and ``diversity_lpips``. A metric whose model was not given is
``unscored`` with the reason, never 0. Defaults reproduce the released code; the options below that
depart from it are named and recorded in the manifest and in every score's evidence.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import pandas as pd
from pydantic import Field

from vreason.core.errors import ConfigError
from vreason.core.options import BootSeedField, LevelField, NBootField, ProtocolOptions, SeedOptions
from vreason.core.protocol import AggregateResult, LoadResult, Protocol, Requirement
from vreason.core.records import Sample
from vreason.core.registry import benchmarks
from vreason.core.scoring import Scorer

Preset = Literal["very_low", "low", "medium", "high", "very_high"]


class PaiCOptions(SeedOptions):
    """Options of ``vreason run pai-c``; defaults follow the released ``conditional_generation`` code."""

    max_frames: int = Field(121, ge=1, description="Frames read from each video (released: 121); the prediction "
                            "is trimmed to the ground truth's count.")
    canny_preset: Preset = Field("medium", description="Canny thresholds: very_low (20,50), low (50,100), medium "
                                 "(100,200, released), high (200,300), very_high (300,400).")
    canny_gray: bool = Field(False, description="Convert RGB→GRAY before Canny (the fork's fix); released: Canny on "
                             "the RGB array as is.")
    canny_degenerate: Literal["unscored", "score"] = Field(
        "unscored", description="An edge video with no edge (or only edges): the released code raises and the "
        "video has no Canny numbers (`unscored`); `score` computes F1 anyway (0 for a blank prediction).")
    depth: str | None = Field(None, description="Depth model for si-RMSE: transformers:/folder (Depth Anything). "
                              "The released code uses Video-Depth-Anything; the backend is recorded per score.")
    depth_gt: Literal["npz", "recompute"] = Field("npz", description="Ground-truth depth: the cached "
                                                  "depth_npzs/{id}.npz (released) or recomputed with `depth`.")
    depth_error_cap: float | None = Field(10.0, description="Clip each per-pixel residual to ±cap before squaring "
                                          "(10, the newer released code); null = the older uncapped code.")
    depth_empty: Literal["zero", "unscored"] = Field(
        "zero", description="No pixel valid in both depths in any frame: si-RMSE 0.0 as the released code (a "
        "'perfect' score, counted in the evidence and the report), or unscored.")
    depth_resize: Literal["nearest", "linear"] = Field(
        "nearest", description="A predicted depth map of another size than the ground truth's is resized to it "
        "by nearest neighbour (released), or `linear` (bilinear up, area down: vreason before 2026-11).")
    detector: str | None = Field(None, description="Open-vocabulary detector for segmentation (`--detector`): "
                                 "transformers:/grounding-dino-folder (released: grounding-dino-tiny).")
    segmenter: str | None = Field(None, description="Box-prompted segmenter: transformers:/sam2-video-folder "
                                  "(released: SAM2 hiera-large; frame-0 masks propagated through the video) or "
                                  "transformers:/sam-folder (SAM v1: frame 0 only).")
    box_threshold: float = Field(0.3, ge=0, le=1, description="Grounding DINO box threshold (released 0.3).")
    text_threshold: float = Field(0.25, ge=0, le=1, description="Grounding DINO text threshold (released 0.25).")
    seg_labels: Literal["gt_phrases", "caption"] = Field(
        "gt_phrases", description="Text queries of the detector: the phrases of the ground-truth instances (the "
        "phrases Grounded-SAM-2 found in the caption) or the caption split on . , ;")
    seg_propagate: bool = Field(True, description="With a SAM2 video segmenter, propagate the frame-0 masks over "
                                "the compared frames (released); false: compare frame 0 only.")
    seg_stride: int = Field(0, ge=0, description="0: propagation with a SAM2 video segmenter, else masks on frame 0 "
                            "compared with the ground truth's frame 0; N: re-detect every Nth frame, no "
                            "propagation.")
    seg_gt: Literal["pkl", "recompute"] = Field("pkl", description="Ground-truth masks: sam2_pkls (released) or "
                                                "recomputed with the same detector and segmenter.")
    seg_drop_empty: bool = Field(False, description="Drop empty phrase masks before matching (the fork's fix).")
    seg_empty: Literal["zero", "unscored"] = Field(
        "zero", description="No mask on one side: 0 / 0 as the released code, or unscored.")
    quality: str | None = Field(None, description="DOVER technical quality backend: torchscript:/path/model.pt "
                                "(uint8 T×H×W×3 in, score out).")
    dover_input: Literal["original", "aligned"] = Field(
        "original", description="What DOVER scores: the original files, every frame at their own size (the newer "
        "released code, which passes the file bytes), or `aligned`: the prediction trimmed to the ground truth's "
        "frame count and resized to its size (the September-2025 code).")
    dover_gt: bool = Field(True, description="Also score the ground truth with the quality backend (evidence "
                           "`dover_tech_score_gt`, as released).")
    diversity: bool = Field(True, description="Compute Diversity-LPIPS over the caption variants.")
    n_variants: int = Field(6, ge=2, description="Caption variants per video (released NUM_PROMPTS_PER_VIDEO = 6).")
    lpips_net: Literal["vgg", "alex"] = Field("vgg", description="LPIPS network (released diversity: vgg).")
    lpips_backbone: str | None = Field(None, description="Local torchvision-format backbone weights (.pth) for "
                                       "LPIPS.")
    lpips_heads: str | None = Field(None, description="Local LPIPS linear-head weights (the lpips wheel's "
                                    "weights/v0.1/<net>.pth).")
    device: str | None = Field(None, description="Device for local models (`--device`): cpu, cuda, auto. With cuda "
                               "(or auto) and a visible GPU, blur SSIM's bilateral filter and SSIM run in torch on it "
                               "(within 1e-4 of the CPU path); Canny stays on the CPU.")
    frame_threads: int = Field(0, ge=0, description="Threads computing the blur SSIM / Canny frames of one pair (0 = "
                               "automatic: the cores in the main process, 1 in a worker process; 1 = serial). "
                               "Numbers are identical for every value.")
    gt_cache_mb: float = Field(512.0, ge=0, description="Memory (MB, per process) keeping a ground truth's blurred "
                               "frames and Canny edges for its other caption variants (the released code recomputes "
                               "them per variant; numbers identical); 0 = off.")
    dtype: Literal["float32", "float16", "bfloat16"] = Field("float32", description="Model dtype.")
    batch_size: int = Field(8, ge=1, description="Frames per model batch (bounds memory).")
    n_boot: NBootField
    level: LevelField
    boot_seed: BootSeedField


RELEASED = ("canny_preset", "canny_gray", "canny_degenerate", "depth_gt", "depth_error_cap", "depth_empty",
            "depth_resize", "seg_labels",
            "seg_propagate", "seg_stride", "seg_gt", "seg_drop_empty", "seg_empty", "max_frames", "lpips_net",
            "n_variants", "dover_input")
"""Options named in the report when they depart from the released code (seg_labels is vreason's closest
equivalent; segmentation matches the released flow only with a SAM2 video segmenter — the evidence's
``seg_mode`` says which mode scored; see docs/pai_c.md)."""


@benchmarks.register("pai-c")
class PaiCProtocol(Protocol):
    """PAI-Bench-C: blur SSIM, Canny F1, depth si-RMSE, segmentation mIoU, DOVER, Diversity-LPIPS."""

    name: ClassVar[str] = "pai-c"
    summary: ClassVar[str] = "PAI-Bench-C: conditional generation fidelity, quality and diversity"
    default_seeds: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4, 5)
    layout: ClassVar[str] = "pai"
    options_model: ClassVar[type[ProtocolOptions]] = PaiCOptions
    requires = (Requirement("deep", "depth, segmentation, DOVER quality and Diversity-LPIPS (--opt depth, detector, "
                            "segmenter, quality, lpips_backbone…); unscored without them", weights=True),)
    opts: PaiCOptions

    def load(self) -> LoadResult:
        from vreason.protocols.pai.c.data import load_pai_c

        if not self.opts.data:
            raise ConfigError("pai-c needs --data pointing at the PAI-Bench-C folder (metadata.csv, videos/, "
                              "depth_npzs/, sam2_pkls/, captions/)")
        try:
            return load_pai_c(self.opts.data)
        except FileNotFoundError as exc:
            raise ConfigError(str(exc)) from None

    def scorer_options(self) -> dict:
        o = self.opts.model_dump()
        o["device"] = o.get("device") or "cpu"
        return o

    def scorers(self) -> list[Scorer]:
        from vreason.protocols.pai.c import scorers as S

        o = self.scorer_options()
        out: list[Scorer] = [S.PaiCFidelityScorer(**o), S.PaiCDepthScorer(**o), S.PaiCSegScorer(**o),
                             S.PaiCDoverScorer(**o)]
        if self.opts.diversity:
            out.append(S.PaiCDiversityScorer(**o))
        return out

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.pai.c.tables import aggregate_pai_c

        o = self.opts
        defaults = PaiCOptions.model_fields
        departing = {k: getattr(o, k) for k in RELEASED if getattr(o, k) != defaults[k].default}
        return aggregate_pai_c(scores, samples, n_variants=o.n_variants, departing=departing, n_boot=o.n_boot,
                               level=o.level, seed=o.boot_seed)


__all__ = ["PaiCOptions", "PaiCProtocol"]
