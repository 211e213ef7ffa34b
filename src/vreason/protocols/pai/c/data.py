"""PAI-Bench-C (conditional generation) loader: the released Hugging Face layout.

::

    DATA/metadata.csv            one row per video (id + domain columns; see ID_COLUMNS / DOMAIN_COLUMNS)
    DATA/videos/{id}.mp4         ground-truth video (the reference every metric compares against)
    DATA/blur/{id}.mp4           blur control input            DATA/canny/{id}.mp4   edge control input
    DATA/depth_npzs/{id}.npz     ground-truth depth, key ``data``, T×H×W float
    DATA/sam2_pkls/{id}.pkl      ground-truth Grounded-SAM-2 instances (see :mod:`vreason.protocols.pai.c.masks`)
    DATA/captions/{id}.json      a single-key dict whose value is the caption

Generated videos: ``{id}__{k}.mp4`` with ``k`` = 0..5, the six caption variants (importer convention
``pai``: the variant is the seed). A record whose id is unsafe, whose caption file is missing or not a
single-key dict, or whose ground-truth video is missing is a per-record load error; a missing
``depth_npzs`` / ``sam2_pkls`` file only makes that metric fail for the sample (its scorer says so).
"""

from __future__ import annotations

import csv
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from vreason.core.errors import MissingFileError
from vreason.core.records import LoadResult, Mode, Sample, check_safe_id
from vreason.data.loaderrors import TOO_DEEP, WHOLE_RECORD, decode_utf8, load_error

ID_COLUMNS = ("video_id", "id", "task_id", "uid", "name", "video")
DOMAIN_COLUMNS = ("domain", "category", "dataset", "source", "subset")
DOMAINS = {"agibot": "robotics", "robot": "robotics", "robotics": "robotics", "opendv": "driving",
           "driving": "driving", "av": "driving", "ego-exo4d": "egocentric", "egoexo4d": "egocentric",
           "ego_exo4d": "egocentric", "egoexo": "egocentric", "egocentric": "egocentric", "ego": "egocentric"}
"""Source dataset → the paper's domain (200 Agibot robotics, 200 OpenDV driving, 200 Ego-Exo4D egocentric)."""


def domain_of(value: str) -> str:
    v = (value or "").strip().lower()
    return DOMAINS.get(v, DOMAINS.get(v.replace(" ", ""), v or "unknown"))


def _column(row: dict, names: tuple[str, ...]) -> str | None:
    low = {str(k).strip().lower(): k for k in row if k is not None}
    for n in names:
        if n in low and str(row[low[n]] or "").strip():
            return str(row[low[n]]).strip()
    return None


def read_caption(path: Path) -> str:
    """The caption of a ``captions/{id}.json`` file; ``ValueError`` with the reason otherwise."""
    try:
        obj = json.loads(decode_utf8(path.read_bytes()))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path.name}: {TOO_DEEP}") from None
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ValueError(f"expected a single-key dict, got {type(obj).__name__}"
                         + (f" with {len(obj)} keys" if isinstance(obj, dict) else ""))
    cap = next(iter(obj.values()))
    if not isinstance(cap, str) or not cap.strip():
        raise ValueError("the caption is empty or not text")
    return cap


def _rows(root: Path, errors: list[dict]) -> list[tuple[str, dict]]:
    meta = root / "metadata.csv"
    if not meta.is_file():  # no metadata: every ground-truth video, domain unknown
        return [(f"{root / 'videos' / p.name}", {"video_id": p.stem})
                for p in sorted((root / "videos").glob("*.mp4"))]
    lines = decode_utf8(meta.read_bytes()).splitlines()
    at = [0]  # the line the csv module last took (its own count lags when a row fails mid-way)

    def fed():
        for n, text in enumerate(lines, 1):
            at[0] = n
            yield text

    reader = csv.DictReader(fed())
    out = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # e.g. a field over the csv module's size limit: that row only
            where = f"{meta}:{at[0]}"
            errors.append(load_error(where, WHOLE_RECORD, f"unreadable CSV row: {exc}", file=str(meta), line=at[0]))
            continue
        where = f"{meta}:{reader.line_num}"
        if None in row:
            errors.append(load_error(where, WHOLE_RECORD, "more values than columns"))
            continue
        out.append((where, row))
    return out


def load_pai_c(data: str | os.PathLike) -> LoadResult:
    """Samples (one per ground-truth video) and per-record errors (a :class:`LoadResult`)."""
    root = Path(data)
    errors: list[dict[str, str]] = []
    if not (root / "videos").is_dir():
        raise MissingFileError(f"{root}: no videos/ folder (expected the PAI-Bench-C layout: metadata.csv, "
                                "videos/, depth_npzs/, sam2_pkls/, captions/)")
    samples: list[Sample] = []
    seen: set[str] = set()
    for where, row in _rows(root, errors):
        vid = _column(row, ID_COLUMNS)
        if not vid:
            errors.append(load_error(where, "video_id", f"no id column (tried {', '.join(ID_COLUMNS)})"))
            continue
        vid = Path(vid).stem if vid.endswith(".mp4") else vid
        try:
            check_safe_id(vid, "video id")
        except ValueError as exc:
            errors.append(load_error(where, "video_id", str(exc)))
            continue
        if vid in seen:
            errors.append(load_error(where, "video_id", f"duplicate video id {vid!r}", sample_id=vid))
            continue
        gt = root / "videos" / f"{vid}.mp4"
        if not gt.is_file():
            errors.append(load_error(where, "video_id", f"ground-truth video videos/{vid}.mp4 is missing",
                                     sample_id=vid))
            continue
        cap_path = root / "captions" / f"{vid}.json"
        try:
            if not cap_path.is_file():
                raise ValueError("file is missing")
            caption = read_caption(cap_path)
        except (OSError, ValueError) as exc:
            errors.append(load_error(where, "caption", f"captions/{vid}.json: {exc}", sample_id=vid))
            continue
        seen.add(vid)
        domain = domain_of(_column(row, DOMAIN_COLUMNS) or "")
        extra = {k: v for k, v in row.items() if k and isinstance(v, str)}
        samples.append(Sample(
            id=vid, benchmark="pai-c", category=domain, task="conditional", mode=Mode.v2v, prompt=caption,
            reference_video=f"videos/{vid}.mp4", root=str(root.resolve()),
            metadata={"domain": domain, "record": where, "row": extra,
                      "controls": {k: f"{k}/{vid}.mp4" for k in ("blur", "canny", "depth_vids", "sam2_vids")
                                   if (root / k / f"{vid}.mp4").is_file()},
                      "depth_npz": f"depth_npzs/{vid}.npz", "sam2_pkl": f"sam2_pkls/{vid}.pkl"}))
    return LoadResult(samples=samples, errors=errors)


def iter_npz_frames(path: str | os.PathLike, key: str = "data", limit: int | None = None) -> Iterator[np.ndarray]:
    """The T×H×W array ``key`` of an ``.npz``, one frame at a time (compressed or not), so a 121-frame
    float64 depth video is never held whole. ``ValueError`` for a missing key or a non-3-D array."""
    with zipfile.ZipFile(path) as zf:
        name = f"{key}.npy"
        if name not in zf.namelist():
            raise ValueError(f"no array {key!r} in {os.path.basename(str(path))} (has "
                             f"{', '.join(n.removesuffix('.npy') for n in zf.namelist()) or 'nothing'})")
        with zf.open(name) as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(fh)
            if len(shape) != 3:
                raise ValueError(f"{key!r} has shape {shape}, expected (T, H, W)")
            if dtype.hasobject:
                raise ValueError(f"{key!r} holds Python objects, not numbers")
            t, h, w = shape
            if fortran:  # rare: no frame-contiguous layout, read whole
                arr = np.frombuffer(fh.read(), dtype=dtype).reshape(shape, order="F")
                for i in range(t if limit is None else min(t, limit)):
                    yield np.ascontiguousarray(arr[i])
                return
            nbytes = h * w * dtype.itemsize
            for i in range(t if limit is None else min(t, limit)):
                buf = fh.read(nbytes)
                if len(buf) != nbytes:
                    raise ValueError(f"{key!r} ends at frame {i} of {t}")
                yield np.frombuffer(buf, dtype=dtype).reshape(h, w)


__all__ = ["DOMAINS", "domain_of", "iter_npz_frames", "load_pai_c", "read_caption"]
