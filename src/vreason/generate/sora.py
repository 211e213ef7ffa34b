"""OpenAI's videos API (Sora 2): ``sora:sora-2``, ``sora:sora-2-pro`` (or a dated snapshot).

Create ``POST {base}/videos`` (multipart form: ``model``, ``prompt``, ``seconds``, ``size`` and the input
image as ``input_reference``, resized to ``size`` as the API requires), poll ``GET {base}/videos/{id}``
until ``status`` is ``completed`` or ``failed``, download ``GET {base}/videos/{id}/content``.

The key comes from ``OPENAI_API_KEY`` (or the variable ``api_key_env`` names); the base URL from the
spec's ``base_url``, else ``VREASON_SORA_BASE_URL``, else ``https://api.openai.com/v1``. The API takes no
seed: several seeds of one sample are independent draws (the manifest records ``seed_sent: false``).
A job that fails for moderation (or a create refused with a moderation/content-policy error) is
``blocked`` with OpenAI's message.

Every create carries ``Idempotency-Key`` (the row's client reference); OpenAI does not document it for
this endpoint, so after an ambiguous create (5xx, timeout, dropped connection) the job is looked up in
``GET /videos`` (model, prompt, seconds, size, creation time) before anything is sent again. A proxy
that honours the key can be declared with ``idempotent_creates: true``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pydantic import Field

from vreason.generate.api_generator import ApiGenerator, ApiOptions
from vreason.generate.api_jobs import HttpCall, JobAdapter, JobRequest, PollResult
from vreason.generate.pricing import Price, price_for

LOOKUP_SKEW_S = 300.0
"""How much earlier than our clock says a listed video may have been made and still be ours."""
_REFUSAL = re.compile(r"moderation|content[ _-]?policy|safety|policy[ _-]?violation|inappropriate", re.I)


class SoraOptions(ApiOptions):
    seconds: int = Field(4, gt=0)
    """Clip length (the API's values: 4, 8, 12; newer models also 16, 20). Default: the API's, 4."""
    size: str | None = Field(None, pattern=r"^\d+x\d+$")
    """``WIDTHxHEIGHT`` (720x1280, 1280x720; sora-2-pro also 1024x1792, 1792x1024). Default: 1280x720
    for a landscape or square input image, 720x1280 for a portrait one or a text-only prompt."""


class SoraAdapter(JobAdapter):
    provider = "openai"

    def __init__(self, base_url: str, key: str | None, model: str, seconds: int, size: str | None):
        self.base, self.model, self.seconds, self.size = base_url, model, seconds, size
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}

    def create_call(self, req: JobRequest) -> HttpCall:
        data = {"model": self.model, "prompt": req.prompt, "seconds": str(self.seconds)}
        size = self.size or (f"{req.image_size[0]}x{req.image_size[1]}" if req.image_size else None)
        if size:
            data["size"] = size
        # multipart/form-data always, as OpenAI's SDK sends it (fields as file parts without a filename)
        files: dict[str, Any] = {k: (None, v) for k, v in data.items()}
        if req.image_png:
            files["input_reference"] = ("input.png", req.image_png, "image/png")
        return HttpCall("POST", f"{self.base}/videos", files=files, headers=self.headers)

    def lookup_call(self, req: JobRequest, since: float) -> HttpCall | None:
        return HttpCall("GET", f"{self.base}/videos?limit=100&order=desc", headers=self.headers)

    def lookup_identity(self, req: JobRequest) -> str | None:
        size = self.size or (f"{req.image_size[0]}x{req.image_size[1]}" if req.image_size else None)
        return hashlib.sha256(f"{self.model}|{self.seconds}|{size}|{req.prompt}".encode()).hexdigest()[:24]

    def lookup_matches(self, req: JobRequest, since: float, body: Any) -> list[str]:
        """Videos of the list (``GET /videos``, newest first) with this create's model, prompt, seconds and
        size, made since the create began (less a clock-skew margin), oldest first. The list does not show
        the input image: while another request with this prompt and size but another image is unresolved
        the match is not taken (see :meth:`lookup_identity`), and the ledger hands each job to one row."""
        data = body.get("data") if isinstance(body, dict) else None
        size = self.size or (f"{req.image_size[0]}x{req.image_size[1]}" if req.image_size else None)
        out: list[str] = []
        for v in data if isinstance(data, list) else []:
            if not isinstance(v, dict) or not isinstance(v.get("id"), str) or v.get("prompt") != req.prompt:
                continue
            if v.get("model") not in (None, self.model) or str(v.get("seconds") or self.seconds) != str(self.seconds):
                continue
            if size and v.get("size") and v["size"] != size:
                continue
            if float(v.get("created_at") or 0) >= since - LOOKUP_SKEW_S:
                out.append(v["id"])
        return out[::-1]

    def job_id(self, body: Any) -> str:
        if not isinstance(body, dict) or not isinstance(body.get("id"), str) or not body["id"]:
            raise ValueError(f"no video id in the create reply: {str(body)[:200]}")
        return body["id"]

    def poll_call(self, job_id: str) -> HttpCall:
        return HttpCall("GET", f"{self.base}/videos/{job_id}", headers=self.headers)

    def read_status(self, job_id: str, body: Any) -> PollResult:
        if not isinstance(body, dict):
            return PollResult("failed", f"unexpected status reply: {str(body)[:200]}")
        status = body.get("status")
        if status == "completed":
            return PollResult("done", download=HttpCall("GET", f"{self.base}/videos/{job_id}/content",
                                                        headers=self.headers))
        if status == "failed":
            err = body.get("error") or {}
            code, msg = (err.get("code"), err.get("message")) if isinstance(err, dict) else (None, str(err))
            reason = ": ".join(str(x) for x in (code, msg) if x) or "failed (no error given)"
            return PollResult("refused" if _REFUSAL.search(reason) else "failed", reason)
        if status in ("queued", "in_progress"):
            prog = body.get("progress")
            return PollResult("pending", f"{status} {prog}%" if prog is not None else status)
        return PollResult("failed", f"unknown status {status!r}")

    def refusal(self, status: int, body: Any) -> str | None:
        err = body.get("error") if isinstance(body, dict) else None
        if not isinstance(err, dict):
            return None
        text = " ".join(str(err.get(k) or "") for k in ("code", "type", "message"))
        return f"HTTP {status}: {err.get('code') or err.get('type')}: {err.get('message')}" \
            if _REFUSAL.search(text) else None


class SoraGenerator(ApiGenerator):
    """OpenAI Sora 2 through the videos API (create → poll → download)."""

    name = "sora"
    options_model = SoraOptions
    provider = "openai"
    key_envs = ("OPENAI_API_KEY",)
    base_url_env = "VREASON_SORA_BASE_URL"
    default_base_url = "https://api.openai.com/v1"
    opts: SoraOptions

    def adapter(self, key: str | None) -> JobAdapter:
        return SoraAdapter(self.base_url(), key, self.target, self.opts.seconds, self.opts.size)

    def request_params(self) -> dict[str, Any]:
        return {"seconds": self.opts.seconds, "size": self.opts.size, "seed_sent": False}

    def video_seconds(self) -> float:
        return float(self.opts.seconds)

    def price(self) -> Price:
        return price_for(self.target, size=self.opts.size, usd_per_second=self.opts.usd_per_second,
                         usd_per_video=self.opts.usd_per_video)

    def image_size(self, width: int, height: int) -> tuple[int, int] | None:
        size = self.opts.size or ("1280x720" if width >= height else "720x1280")
        w, h = (int(x) for x in size.split("x"))
        return w, h
