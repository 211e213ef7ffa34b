"""Report media: a video a browser cannot play inline (not MP4) gets a short animated strip."""

import numpy as np
from PIL import Image

from vreason.frames import write_video
from vreason.report.media import ANIM_FRAMES, MediaJob, build_one


def _frames(n=40, h=90, w=160):
    out = []
    for i in range(n):
        f = np.full((h, w, 3), 230, np.uint8)
        x = 4 + i * (w - 24) // n
        f[30:50, x:x + 16] = (200, 30, 30)
        out.append(f)
    return out


def test_non_mp4_video_gets_an_animated_strip_and_mp4_does_not(tmp_path):
    mkv = str(tmp_path / "v.mkv")
    write_video(mkv, _frames(), fps=16, codec="mpeg4")
    job = MediaJob(video=mkv, thumb=str(tmp_path / "m" / "v.thumb.jpg"), animation=str(tmp_path / "m" / "v.anim.gif"))
    res = build_one(job)
    assert res.error is None and res.built == 2
    gif = Image.open(job.animation)
    assert gif.n_frames == ANIM_FRAMES and max(gif.size) == 160  # the video is smaller than the strip's size
    firsts = []
    for k in (0, gif.n_frames - 1):  # the ball moves across the animation
        gif.seek(k)
        rgb = np.asarray(gif.convert("RGB")).astype(int)
        red = (rgb[..., 0] > 150) & (rgb[..., 1] < 100)
        firsts.append(np.nonzero(red.any(axis=0))[0].mean())
    assert firsts[1] - firsts[0] > 60
    again = build_one(job)  # cached: nothing rebuilt
    assert again.built == 0 and again.cached == 2
    mp4 = str(tmp_path / "v.mp4")
    write_video(mp4, _frames(), fps=16)
    res = build_one(MediaJob(video=mp4, thumb=str(tmp_path / "m" / "w.thumb.jpg")))
    assert res.error is None and res.built == 1


def test_build_media_answers_fresh_jobs_without_a_pool_and_keeps_the_order(tmp_path, monkeypatch):
    import os

    from vreason.report import media

    jobs = []
    for i in range(10):
        mp4 = str(tmp_path / f"v{i}.mp4")
        write_video(mp4, _frames(n=8), fps=8)
        jobs.append(MediaJob(video=mp4, thumb=str(tmp_path / "m" / f"v{i}.thumb.jpg")))
    first = media.build_media(jobs, workers=2)  # ten jobs on two workers: a pool
    assert [r.video for r in first] == [j.video for j in jobs] and {r.built for r in first} == {1}

    def no_pool(*a, **k):
        raise AssertionError("a pool was started for fresh media")

    monkeypatch.setattr(media, "ProcessPoolExecutor", no_pool)
    again = media.build_media(jobs, workers=2)
    assert [(r.video, r.built, r.cached, r.error) for r in again] == [(j.video, 0, 1, None) for j in jobs]
    # one video re-written (newer than its thumbnail): only it is rebuilt, inline, in its place
    later = os.path.getmtime(jobs[3].thumb) + 5
    os.utime(jobs[3].video, (later, later))
    third = media.build_media(jobs, workers=2)
    assert [r.built for r in third] == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    missing = media.build_media([MediaJob(video=str(tmp_path / "gone.mp4"), thumb=str(tmp_path / "g.jpg"))])
    assert missing[0].error and missing[0].built == 0
