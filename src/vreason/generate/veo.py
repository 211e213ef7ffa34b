"""Google Veo through the Gemini API: ``veo:veo-3.1-generate-preview``, ``veo:veo-3.1-fast-generate-preview``…

Create ``POST {base}/models/{model}:predictLongRunning`` with ``{"instances": [{"prompt", "image":
{"bytesBase64Encoded", "mimeType"}}], "parameters": {"aspectRatio", "durationSeconds", …}}``; the reply
names an operation; poll ``GET {base}/{operation name}`` until ``done``; the video is
``response.generateVideoResponse.generatedSamples[0].video.uri``, downloaded with the key header
(sent only when the URI is on the API's own host). A finished operation with no sample and
``raiMediaFilteredCount`` > 0 (or an error about safety / content policy) is ``blocked`` with Google's
``raiMediaFilteredReasons``.

The key comes from ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` (or ``api_key_env``); the base URL from the
spec's ``base_url``, else ``VREASON_VEO_BASE_URL``, else ``https://generativelanguage.googleapis.com/v1beta``.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import urlparse

from pydantic import Field

from vreason.generate.api_generator import ApiGenerator, ApiOptions
from vreason.generate.api_jobs import HttpCall, JobAdapter, JobRequest, PollResult
from vreason.generate.pricing import Price, price_for

_REFUSAL = re.compile(r"safety|responsible[ -]ai|content[ _-]?policy|\brai\b|filtered|prohibited", re.I)


class VeoOptions(ApiOptions):
    poll_s: float = Field(10.0, gt=0)
    max_in_flight: int | None = Field(10, ge=1)
    """Google allows 10 concurrent Veo requests per project."""
    duration_seconds: int = Field(8, gt=0)
    """``durationSeconds`` (Veo 3.x: 4, 6 or 8; default 8, the API's)."""
    aspect_ratio: str | None = Field(None, pattern=r"^\d+:\d+$")
    """``16:9`` or ``9:16``; default: from the input image's orientation (16:9 for text only)."""
    resolution: str | None = None
    """``720p`` / ``1080p`` (default: the API's, 720p)."""
    negative_prompt: str | None = None
    person_generation: str | None = None
    send_seed: bool = False
    """Send the run's seed as ``parameters.seed`` (Vertex AI accepts it; off by default for the Gemini API)."""


class VeoAdapter(JobAdapter):
    provider = "google"
    idempotency_header = None
    """The Gemini API documents neither an idempotency key nor a list of operations for Veo: after an
    ambiguous create the row ends ``unknown`` (not created again) unless ``recreate_after_ambiguous``."""

    def __init__(self, base_url: str, key: str | None, model: str, params: dict[str, Any], send_seed: bool):
        self.base, self.model, self.params, self.send_seed = base_url, model, params, send_seed
        self.headers = {"x-goog-api-key": key} if key else {}
        self.host = urlparse(base_url).netloc

    def create_call(self, req: JobRequest) -> HttpCall:
        instance: dict[str, Any] = {"prompt": req.prompt}
        if req.image_png:
            instance["image"] = {"bytesBase64Encoded": base64.b64encode(req.image_png).decode("ascii"),
                                 "mimeType": "image/png"}
        params = dict(self.params)
        if "aspectRatio" not in params:
            portrait = req.image_size is not None and req.image_size[1] > req.image_size[0]
            params["aspectRatio"] = "9:16" if portrait else "16:9"
        if self.send_seed:
            params["seed"] = int(req.seed)
        return HttpCall("POST", f"{self.base}/models/{self.model}:predictLongRunning",
                        json={"instances": [instance], "parameters": params}, headers=self.headers)

    def job_id(self, body: Any) -> str:
        if not isinstance(body, dict) or not isinstance(body.get("name"), str) or not body["name"]:
            raise ValueError(f"no operation name in the create reply: {str(body)[:200]}")
        return body["name"]

    def poll_call(self, job_id: str) -> HttpCall:
        return HttpCall("GET", f"{self.base}/{job_id}", headers=self.headers)

    def read_status(self, job_id: str, body: Any) -> PollResult:
        if not isinstance(body, dict):
            return PollResult("failed", f"unexpected operation reply: {str(body)[:200]}")
        if not body.get("done"):
            return PollResult("pending", "running")
        err = body.get("error")
        if err:
            msg = f"{err.get('code')}: {err.get('message')}" if isinstance(err, dict) else str(err)
            return PollResult("refused" if _REFUSAL.search(msg) else "failed", msg)
        resp = (body.get("response") or {}).get("generateVideoResponse") or {}
        samples = resp.get("generatedSamples") or []
        uri = next((s.get("video", {}).get("uri") for s in samples if isinstance(s, dict)), None)
        if uri:
            same_host = urlparse(uri).netloc == self.host
            return PollResult("done", download=HttpCall("GET", uri, headers=self.headers if same_host else {}))
        if resp.get("raiMediaFilteredCount") or resp.get("raiMediaFilteredReasons"):
            reasons = "; ".join(str(r) for r in resp.get("raiMediaFilteredReasons") or []) or "no reason given"
            return PollResult("refused", f"filtered by Google's responsible-AI filters: {reasons}")
        return PollResult("failed", "operation done without a generated video")

    def refusal(self, status: int, body: Any) -> str | None:
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict) and _REFUSAL.search(f"{err.get('status', '')} {err.get('message', '')}"):
            return f"HTTP {status}: {err.get('status') or err.get('code')}: {err.get('message')}"
        return None


class VeoGenerator(ApiGenerator):
    """Google Veo through the Gemini API (predictLongRunning → operation → download)."""

    name = "veo"
    options_model = VeoOptions
    provider = "google"
    key_envs = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_env = "VREASON_VEO_BASE_URL"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    opts: VeoOptions

    def request_params(self) -> dict[str, Any]:
        o = self.opts
        out: dict[str, Any] = {"durationSeconds": o.duration_seconds}
        for k, v in (("aspectRatio", o.aspect_ratio), ("resolution", o.resolution),
                     ("negativePrompt", o.negative_prompt), ("personGeneration", o.person_generation)):
            if v is not None:
                out[k] = v
        return out

    def adapter(self, key: str | None) -> JobAdapter:
        return VeoAdapter(self.base_url(), key, self.target, self.request_params(), self.opts.send_seed)

    def video_seconds(self) -> float:
        return float(self.opts.duration_seconds)

    def price(self) -> Price:
        return price_for(self.target, usd_per_second=self.opts.usd_per_second, usd_per_video=self.opts.usd_per_video)

    def image_size(self, width: int, height: int) -> tuple[int, int] | None:
        ratio = self.opts.aspect_ratio or ("9:16" if height > width else "16:9")
        return (720, 1280) if ratio == "9:16" else (1280, 720)
