"""Gravity's physics: the scene's constants and the simulated trajectory (shared by the family's renderer and
its verifier, which compares the tracked ball with it)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

SKY = (222, 230, 238)
FLOOR = (72, 72, 78)
BALLS = {"red": (215, 35, 30), "blue": (30, 80, 225), "green": (25, 165, 55), "magenta": (200, 40, 185)}
BOUNCE_FRICTION = 0.85
ROLL_DECAY = 1.2
"""Per-second exponential decay of the rolling speed once the ball rests on the floor."""


def simulate(p: dict[str, Any], n: int, fps: float) -> tuple[np.ndarray, list[float]]:
    """Positions (n, 2) at t = k / fps and the bounce times, for parameters ``p`` (pixels, seconds)."""
    return simulate_at(p, np.arange(n) / float(fps))


def simulate_at(p: dict[str, Any], times: np.ndarray, release: float = 0.0) -> tuple[np.ndarray, list[float]]:
    """Positions (len(times), 2) at ``times`` (seconds) for a ball let go at ``release`` (held at its
    start before), and the bounce times (on the same clock)."""
    g, e, r = p["g"], p["e"], p["r"]
    y_rest = p["floor_y"] - r
    x, y = p["start"]
    vx, vy = p["v0"]
    times = np.asarray(times, dtype=np.float64) - release
    t, t_end = 0.0, float(times.max()) if times.size else 0.0
    segs: list[tuple[float, float, float, float, float, float]] = []  # t0, t1, x, y, vx, vy
    bounces: list[float] = []
    v_min = math.sqrt(2 * g * 1.0)  # a bounce lower than 1 px ends the flight
    while t <= t_end:
        disc = vy * vy + 2 * g * (y_rest - y)
        tau = (-vy + math.sqrt(max(0.0, disc))) / g
        segs.append((t, t + tau, x, y, vx, vy))
        t += tau
        x += vx * tau
        vy = -e * (vy + g * tau)
        vx *= BOUNCE_FRICTION
        y = y_rest
        bounces.append(t)
        if -vy < v_min:
            break
    rest_t, rest_x, rest_vx = t, x, vx
    pos = np.empty((times.size, 2))
    for k, tk in enumerate(times):
        if tk < 0:
            pos[k] = p["start"]
            continue
        for t0, t1, x0, y0, vx0, vy0 in segs:
            if t0 <= tk < t1:
                d = tk - t0
                pos[k] = (x0 + vx0 * d, y0 + vy0 * d + 0.5 * g * d * d)
                break
        else:
            d = max(0.0, tk - rest_t)
            pos[k] = (rest_x + rest_vx / ROLL_DECAY * (1 - math.exp(-ROLL_DECAY * d)), y_rest)
    return pos, [b + release for b in bounces if b <= t_end]


def settle_time(p: dict[str, Any]) -> float:
    """Seconds after the release until the bounces die out (the ball then rolls on the floor)."""
    _, bounces = simulate_at(p, np.array([0.0, 60.0]))
    return float(bounces[-1]) if bounces else 0.0
