"""Sub-pixel refinement of a camera estimate (issue 24, principle 5): Gauss–Newton on a similarity + exposure.

:func:`vreason.verify.align.align` finds the camera among ECC / ORB candidates; against a *rendering* (sharper
than the decoded frame, flat pages that clip, thin lines) its winner may still be 1–2 px off at the corners
(14 px when a row of equal bars locked onto a neighbour), more than the residual's one-pixel edge allowance.
:func:`refine_similarity` polishes it: the frame is warped onto the reference with the current estimate and the
four similarity parameters (zoom·cos, zoom·sin, shift, about the picture's centre) and a grey gain and offset are
solved for by Gauss–Newton, half size then full size, both images Gaussian-smoothed (σ 1 px), with

* the prediction ``gain · reference + offset`` **clipped** to 0..255 (a brighter exposure clips the page: the
  frame's clipped pixels are then explained, and choosing pixels by the frame's own values would bias the
  zoom toward where the frame happens to clip);
* the frame's border (7 px inside what the warp covers) left out (the interpolation with the outside is not the
  scene);
* Huber weights (threshold ``max(3σ̂, 40)`` levels: edges a pixel off are the signal, a changed object is
  not).

Measured (family start images, rotations ≤ 2°, zooms ≤ 5%, shifts ≤ 8 px, half-size decodes, ±15% exposure,
noise): corner error from the candidates' max 14.3 / median 0.62 px to max 0.21 / median 0.02 px.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

HUBER = 40.0
SIGMA = 1.0
MAX_STEP_PX = 12.0
"""A refinement that moves the picture's corners more than this is not a polish: it is rejected, unless the
caller's ``far`` test accepts it (:func:`vreason.verify.align.align` asks that it explain the frame clearly better
than the candidate it started from, :data:`vreason.verify.align.FAR_GAIN`)."""


def _solve(f: np.ndarray, r: np.ndarray, m: np.ndarray, iters: int, stride: int, stretch: float = 0.0) -> np.ndarray:
    """Gauss–Newton at one level: ``m`` (2×3, reference → frame, this level's pixels) refined. ``stretch`` > 0
    adds a seventh parameter ``e`` (|e| ≤ ``stretch``): the frame's x axis scaled by 1 + e and its y axis by
    1 − e after the similarity (the model ``diag(1 + e, 1 − e) · zoom · rotation``)."""
    import cv2

    h, w = r.shape
    cx, cy = (w - 1) / 2, (h - 1) / 2
    ys, xs = np.mgrid[0:h:stride, 0:w:stride].astype(np.float32)
    xc, yc = xs - np.float32(cx), ys - np.float32(cy)
    rs = r[::stride, ::stride]
    e = 0.0
    if stretch > 0:  # the stretch already in ``m`` (rows (1 + e)(a, −b) and (1 − e)(b, a))
        n0, n1 = float(np.hypot(*m[0, :2])), float(np.hypot(*m[1, :2]))
        e = float(np.clip((n0 - n1) / (n0 + n1), -stretch, stretch))
    a = (m[0, 0] / (1 + e) + m[1, 1] / (1 - e)) / 2
    b = (m[1, 0] / (1 - e) - m[0, 1] / (1 + e)) / 2
    tx = m[0, 0] * cx + m[0, 1] * cy + m[0, 2] - cx
    ty = m[1, 0] * cx + m[1, 1] * cy + m[1, 2] - cy
    g, c = 1.0, 0.0
    kernel = np.ones((7, 7), np.uint8)

    def matrix() -> np.ndarray:
        p, q = 1 + e, 1 - e
        return np.array([[p * a, -p * b, tx + cx - p * (a * cx - b * cy)],
                         [q * b, q * a, ty + cy - q * (b * cx + a * cy)]])

    k = 7 if stretch > 0 else 6
    for _ in range(iters):
        iw = cv2.warpAffine(f, matrix(), (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                            borderMode=cv2.BORDER_CONSTANT, borderValue=-1)
        v = (cv2.erode((iw >= 0).astype(np.uint8), kernel) > 0)[::stride, ::stride]
        # everything below on the valid pixels only, as 1-D vectors (no per-pixel stack of the Jacobian)
        gx = cv2.Sobel(iw, cv2.CV_32F, 1, 0, ksize=3)[::stride, ::stride][v] / 8
        gy = cv2.Sobel(iw, cv2.CV_32F, 0, 1, ksize=3)[::stride, ::stride][v] / 8
        xv, yv, rv, iv = xc[v], yc[v], rs[v], iw[::stride, ::stride][v]
        if iv.size < 200:
            break
        n2 = a * a + b * b
        fx = (a * gx - b * gy) / (n2 * (1 + e))  # the frame's gradient at the warped point: A^-T · ∇(warped frame)
        fy = (b * gx + a * gy) / (n2 * (1 - e))
        pred = g * rv + c
        inside = ((pred > 0) & (pred < 255)).astype(np.float64)
        jac = np.empty((k, iv.size))
        jac[0] = (1 + e) * fx * xv + (1 - e) * fy * yv
        jac[1] = (1 - e) * fy * xv - (1 + e) * fx * yv
        jac[2], jac[3], jac[4], jac[5] = fx, fy, -rv * inside, -inside
        if stretch > 0:
            jac[6] = fx * (a * xv - b * yv) - fy * (b * xv + a * yv)
        res = iv - np.clip(pred, 0, 255)
        sig = 1.4826 * float(np.median(np.abs(res[::7]))) + 1.0
        wt = np.minimum(1.0, max(3 * sig, HUBER) / (np.abs(res) + 1e-6)).astype(np.float32)
        jw = jac * wt
        try:
            d = -np.linalg.solve(jw @ jac.T, jw @ res)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(d)):
            break
        a, b, tx, ty, g, c = a + d[0], b + d[1], tx + d[2], ty + d[3], g + d[4], c + d[5]
        de = 0.0
        if stretch > 0:
            de = float(np.clip(e + d[6], -stretch, stretch)) - e
            e += de
        if max(abs(d[2]), abs(d[3]), (abs(d[0]) + abs(d[1]) + abs(de)) * max(w, h) / 2) < 0.01:
            break
    return matrix()


def refine_similarity(frame_g: np.ndarray, ref_g: np.ndarray, ref_to_frame: np.ndarray,
                      stretch: float = 0.0, *, far: Callable[[np.ndarray], bool] | None = None) -> np.ndarray | None:
    """``ref_to_frame`` (2×3, reference pixels → frame pixels, grey float32 images of one size) refined to
    sub-pixel precision (see the module); None when the refinement diverged (moved the corners more than
    :data:`MAX_STEP_PX`) or is degenerate. ``stretch`` > 0 also fits a stretch of the frame's axes, x by 1 + e
    and y by 1 − e with |e| ≤ ``stretch`` (a letterbox crop enlarged back: :data:`vreason.verify.align.STRETCH`);
    0 (the default) keeps the similarity. ``far``: called with a refinement that moved the corners farther than
    :data:`MAX_STEP_PX`; it is kept when that returns True."""
    import cv2

    h, w = ref_g.shape
    m = np.asarray(ref_to_frame, np.float64).copy()
    for level, iters, stride in ((2, 20, 1), (1, 10, 2)):
        lw, lh = w // level, h // level
        if min(lw, lh) < 32:
            continue
        r, f = ref_g, frame_g
        if level > 1:
            r = cv2.resize(ref_g, (lw, lh), interpolation=cv2.INTER_AREA)
            f = cv2.resize(frame_g, (lw, lh), interpolation=cv2.INTER_AREA)
        r = cv2.GaussianBlur(r, (0, 0), SIGMA)
        f = cv2.GaussianBlur(f, (0, 0), SIGMA)
        ml = m.copy()
        ml[:, 2] /= level
        ml = _solve(f, r, ml, iters, stride, stretch)
        m = ml.copy()
        m[:, 2] *= level
    pts = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64)
    if not np.all(np.isfinite(m)):
        return None
    if float(np.abs(pts @ (m - ref_to_frame).T).max()) > MAX_STEP_PX and (far is None or not far(m)):
        return None
    return m
