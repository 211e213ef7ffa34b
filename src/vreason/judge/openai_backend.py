"""Any OpenAI-compatible chat-completions endpoint as a judge.

OpenAI (GPT-5, o3, GPT-4o), Gemini's OpenAI-compatible endpoint, and vLLM / SGLang / LMDeploy /
Ollama servers hosting Qwen3-VL and others. Frames go as base64 data URLs (format, JPEG quality
and longest side configurable), in order; an :class:`~vreason.judge.base.ImagePart` that names its
own JPEG quality or carries a file's original bytes is sent that way instead. A
:class:`~vreason.judge.base.VideoPart` goes as a ``video_url`` part for servers that accept video
(vLLM). The client's own retries are off: the judge client retries by error class. The API key
comes from the environment only and appears in no identity, cache row, evidence or log message.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import mimetypes
import os
from typing import Any
from urllib.parse import urlparse

from vreason.core.errors import ConfigError
from vreason.judge.base import (
    Decoding,
    ImagePart,
    Judge,
    JudgeReply,
    JudgeRequest,
    TextPart,
    Usage,
    VideoPart,
)
from vreason.judge.retry import JudgeTransportError, transport_error

OPENAI_URL = "https://api.openai.com/v1"
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def encode_image(image: Any, *, fmt: str = "jpeg", quality: int = 90, max_side: int | None = None) -> str:
    """A ``data:image/...;base64,`` URL for an RGB uint8 frame (longest side resized to ≤ ``max_side``)."""
    import numpy as np
    from PIL import Image

    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"image must be uint8, got {arr.dtype}")
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    img = Image.fromarray(arr[..., :3])
    if max_side and max(img.size) > max_side:
        s = max_side / max(img.size)
        img = img.resize(
            (max(1, round(img.width * s)), max(1, round(img.height * s))), Image.Resampling.BICUBIC
        )
    buf = io.BytesIO()
    fmt = fmt.lower()
    if fmt in ("jpeg", "jpg"):
        img.save(buf, format="JPEG", quality=int(quality))
        mime = "image/jpeg"
    elif fmt == "png":
        img.save(buf, format="PNG")
        mime = "image/png"
    elif fmt == "webp":
        img.save(buf, format="WEBP", quality=int(quality))
        mime = "image/webp"
    else:
        raise ValueError(f"unknown image format {fmt!r} (jpeg, png, webp)")
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def encode_video(path: str) -> str:
    mime = mimetypes.guess_type(path)[0] or "video/mp4"
    with open(path, "rb") as f:
        return f"data:{mime};base64,{base64.b64encode(f.read()).decode('ascii')}"


def _bad(what: str, raw: str) -> JudgeTransportError:
    return JudgeTransportError("bad_reply", what, raw=raw[:2000])


def _snippet(text: str, n: int = 80) -> str:
    t = " ".join(text.split())
    return repr(t[:n] + ("…" if len(t) > n else ""))


def reply_from_body(text: str, content_type: str = "") -> JudgeReply:
    """The reply in an HTTP 200 chat-completion body, or a retryable ``bad_reply`` error naming what
    came back instead (an HTML page, a truncated or malformed JSON body, an empty ``choices`` list, a
    ``null`` message content, …). A message cut off by the token cap before any visible text
    (``finish_reason == "length"``, content empty or null) is a reply: the client grows the cap."""
    ctype = content_type.split(";", 1)[0].strip().lower()
    head = text.lstrip()[:64].lower()
    if ctype == "text/html" or head.startswith(("<!doctype html", "<html")):
        raise _bad(f"HTML page ({ctype or 'no content type'}) instead of JSON: {_snippet(text)}", text)
    if not text.strip():
        raise _bad(f"empty body ({ctype or 'no content type'}) instead of a chat completion", text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        if "json" not in ctype:
            raise _bad(f"non-JSON body ({ctype or 'no content type'}): {_snippet(text)}", text) from None
        if e.pos >= len(text.rstrip()) - 1 or e.msg.startswith("Unterminated string"):  # the input ran out
            raise _bad(f"truncated JSON body ({len(text)} characters, {e.msg} at the end)", text) from None
        raise _bad(f"malformed JSON body ({e.msg} at character {e.pos})", text) from None
    if not isinstance(data, dict):
        raise _bad(f"JSON {type(data).__name__} instead of a chat completion object", text)
    if "choices" not in data:
        err = data.get("error")
        if err:
            msg = err.get("message") if isinstance(err, dict) else err
            raise _bad(f"error object in an HTTP 200 reply: {_snippet(str(msg), 200)}", text)
        raise _bad("no 'choices' in the reply", text)
    choices = data["choices"]
    if not isinstance(choices, list):
        raise _bad(f"'choices' is a {type(choices).__name__}, not a list", text)
    if not choices:
        raise _bad("choices list empty", text)
    ch = choices[0]
    if not isinstance(ch, dict) or not isinstance(ch.get("message"), dict):
        raise _bad("choices[0] has no message object", text)
    msg = ch["message"]
    finish = ch.get("finish_reason")
    content = msg.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    refusal = msg.get("refusal")
    if not content and refusal:
        content, finish = str(refusal), "refusal"
    elif content is None:
        if finish != "length":
            raise _bad(f"message content null (finish_reason={finish})", text)
        content = ""
    elif not isinstance(content, str):
        raise _bad(f"message content is a {type(content).__name__}, not text", text)
    u = data.get("usage") if isinstance(data.get("usage"), dict) else {}

    def _int(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) else 0

    usage = Usage(_int(u.get("prompt_tokens")), _int(u.get("completion_tokens")))
    return JudgeReply(text=content, usage=usage, finish_reason=finish)


def _userinfo_secrets(base_url: str) -> list[str]:
    """The credential strings a base URL's ``user:password@`` puts on the wire: the user info as written
    and percent-decoded, the password alone, and the ``Basic`` header value (base64 of user:password)."""
    from urllib.parse import unquote

    u = urlparse(base_url)
    if u.username is None and u.password is None:
        return []
    raw = u.netloc.rpartition("@")[0]
    user, password = unquote(u.username or ""), unquote(u.password or "")
    plain = f"{user}:{password}"
    out = [raw, plain, password, base64.b64encode(plain.encode()).decode("ascii"),
           base64.b64encode(plain.encode("latin-1", "replace")).decode("ascii")]
    return [s for s in dict.fromkeys(out) if s]


class OpenAIJudge(Judge):
    backend = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        api_key: str | None = None,
        provider: str = "openai",
        timeout: float = 120.0,
        image_format: str = "jpeg",
        jpeg_quality: int = 90,
        max_side: int | None = None,
        image_detail: str | None = None,
        video_mode: str = "data",
        reasoning: bool | None = None,
        drop_params: list[str] | tuple[str, ...] = (),
        extra_body: dict[str, Any] | None = None,
        require_key: bool = True,
    ):
        """``require_key=False`` (a dry run, which sends nothing) builds the judge without an API key."""
        if not model:
            raise ConfigError("openai judge: a model name is required")
        self.model = model
        self.base_url = base_url or OPENAI_URL
        self.provider = provider
        self.api_key_env = api_key_env
        self._api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        from vreason.store import register_secret

        userinfo = _userinfo_secrets(self.base_url)
        if userinfo and self._api_key:
            # httpx turns user:password@ into "Authorization: Basic …", replacing the key's Bearer header:
            # the key would be dropped without a word. Refuse the ambiguity.
            raise ConfigError(
                f"judge {provider}:{model}: the base URL carries user:password@ and {api_key_env} is set; "
                f"the URL's credentials would replace the key (HTTP Basic) — keep one of them")
        for secret in userinfo:
            register_secret(secret)
        if userinfo:
            self._api_key = "EMPTY"  # the URL's credentials authenticate (HTTP Basic)
        if not self._api_key:
            if urlparse(self.base_url).hostname in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
                self._api_key = "EMPTY"  # local servers (vLLM, Ollama) accept any key
            elif not require_key:
                self._api_key = None
            else:
                raise ConfigError(
                    f"judge {provider}:{model}: set the API key in the environment variable {api_key_env}"
                )
        if self._api_key and self._api_key != "EMPTY":
            register_secret(self._api_key)
        self.timeout = float(timeout)
        self.image_format = image_format
        self.jpeg_quality = int(jpeg_quality)
        self.max_side = max_side
        self.image_detail = image_detail
        if video_mode not in ("data", "file"):
            raise ConfigError(f"video_mode must be 'data' or 'file', got {video_mode!r}")
        self.video_mode = video_mode
        self.reasoning = model.lower().startswith(_REASONING_PREFIXES) if reasoning is None else reasoning
        self.drop_params = set(drop_params)
        self.extra_body = dict(extra_body or {})
        self._clients: dict[int, Any] = {}

    # ------------------------------------------------------------------ identity
    @property
    def identity(self) -> str:
        u = urlparse(self.base_url)
        host = u.hostname or self.base_url
        if u.port:
            host = f"{host}:{u.port}"
        return f"{self.provider}:{self.model}@{host}"

    def settings(self) -> dict[str, Any]:
        """Input settings that change what the judge sees (part of the cache key, not the identity)."""
        return {
            "image_format": self.image_format,
            "jpeg_quality": self.jpeg_quality,
            "max_side": self.max_side,
            "image_detail": self.image_detail,
            "video_mode": self.video_mode,
            "extra_body": self.extra_body,
        }

    def sent_decoding(self, decoding: Decoding) -> dict[str, Any]:
        """The decoding parameters actually sent for ``decoding``."""
        d: dict[str, Any] = {}
        if not self.reasoning:
            d["temperature"] = decoding.temperature
            if decoding.top_p is not None:
                d["top_p"] = decoding.top_p
        if decoding.seed is not None:
            d["seed"] = decoding.seed
        if decoding.max_tokens is not None:
            d["max_completion_tokens" if self.reasoning else "max_tokens"] = decoding.max_tokens
        d.update(decoding.extra)
        return {k: v for k, v in d.items() if k not in self.drop_params}

    # ------------------------------------------------------------------ request
    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        c = self._clients.get(id(loop))
        if c is None:
            from openai import AsyncOpenAI

            c = AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
            self._clients = {id(loop): c}  # one live loop at a time; old clients die with their loop
        return c

    def _content(self, request: JudgeRequest) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        for p in request.parts:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            elif isinstance(p, ImagePart):
                if p.label:
                    content.append({"type": "text", "text": p.label})
                url: dict[str, Any] = {"url": self._image_url(p)}
                if self.image_detail:
                    url["detail"] = self.image_detail
                content.append({"type": "image_url", "image_url": url})
            elif isinstance(p, VideoPart):
                if not os.path.isfile(p.path):
                    raise JudgeTransportError("fatal", f"video file {p.path} does not exist")
                v_url = (
                    encode_video(p.path) if self.video_mode == "data" else f"file://{os.path.abspath(p.path)}"
                )
                content.append({"type": "video_url", "video_url": {"url": v_url}})
        return content

    def _image_url(self, p: ImagePart) -> str:
        """The data URL of an image part: its original bytes untouched (``data``), JPEG at the part's
        ``quality``, or the judge's own format and quality. ``max_side`` applies to pixels only."""
        if p.data is not None:
            return f"data:{p.mime};base64,{base64.b64encode(p.data).decode('ascii')}"
        if p.quality is not None:
            return encode_image(p.image, fmt="jpeg", quality=p.quality, max_side=self.max_side)
        return encode_image(p.image, fmt=self.image_format, quality=self.jpeg_quality, max_side=self.max_side)

    def messages(self, request: JudgeRequest) -> list[dict[str, Any]]:
        msgs: list[dict[str, Any]] = []
        if request.system:
            msgs.append({"role": "system", "content": request.system})
        msgs.append({"role": "user", "content": self._content(request)})
        return msgs

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        if any(isinstance(p, (ImagePart, VideoPart)) for p in request.parts):
            messages = await asyncio.to_thread(self.messages, request)
        else:
            messages = self.messages(request)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            **self.extra_body,
            **self.sent_decoding(request.decoding),
        }
        try:
            # The plain-dict body goes out as is: ``chat.completions.create`` would re-walk every
            # message part through the SDK's type transforms (≈3 ms of CPU per request). The raw HTTP
            # response comes back (status errors are still raised by the SDK) so that a 200 whose body
            # is no chat completion is named for what it is (``reply_from_body``).
            import httpx

            resp = await self._client().post("/chat/completions", body=body, cast_to=httpx.Response)
        except Exception as e:  # noqa: BLE001 - mapped to a transport error class below
            raise self._map_error(e) from None
        return reply_from_body(resp.text, resp.headers.get("content-type", ""))

    def _scrub(self, text: str) -> str:
        """Error text without any value this judge sends as a credential (key, URL user:password and
        its ``Basic`` base64 form — registered with :func:`~vreason.store.register_secret`), nor any
        other secret :func:`~vreason.store.redact_text` knows."""
        from vreason.store import redact_text

        if self._api_key and self._api_key != "EMPTY":
            text = text.replace(self._api_key, "***")
        return redact_text(text)[:500]

    def _map_error(self, e: Exception) -> JudgeTransportError:
        """``e`` by the shared classification (:func:`vreason.http_retry.classify_exception`), named."""
        import openai

        if isinstance(e, openai.APITimeoutError):
            message = f"no reply within {self.timeout:g} s"
        elif isinstance(e, openai.APIConnectionError):
            message = self._scrub(f"connection failed: {e.__cause__ or e}")
        elif isinstance(e, openai.APIStatusError):
            message = f"HTTP {e.status_code}: {self._scrub(f'{type(e).__name__}: {e}')}"
        else:
            message = self._scrub(f"{type(e).__name__}: {e}")
        return transport_error(e, message)

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for c in clients.values():
            try:
                await c.close()
            except Exception:  # noqa: BLE001 - closing a client from a dead loop is harmless
                pass
