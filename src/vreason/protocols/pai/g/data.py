"""PAI-Bench-G loader (the released generation layout, ``shi-labs/physical-ai-bench-generation``).

Layout (``--data`` = the snapshot folder, or its prompt file)::

    cosmos_predict2_bench_full_info.json   the prompt file: a JSON list (or JSONL) of records
    condition_image/<image_name>           the input (condition) image of each record
    vqa/<video_id>.json                    the yes/no questions of each video

A prompt record needs ``video_id`` and a prompt (``prompt_en``, else ``prompt``; a dict prompt gives its
``en`` entry); ``image_name`` names its condition image (an i2v sample). A question is
``{uid, question, answer, index2ans, task}``; ``answer`` is a key of ``index2ans`` whose value is the
expected answer ("Yes" / "No"). The category is the video id's prefix (``av_``, ``common_sense_``,
``human_``, ``industry_``, ``misc_``, ``physics_``, ``robot_``) as in the released code, where anything
else is an ``assert``: here it is an error for that record, and the run goes on.

A video without a ``vqa`` file still gets its quality dimensions (no domain score; the released VQA code
skips it too). A malformed question file, a question without a key, or an ``answer`` that is not a key of
``index2ans`` is an error for the record (skipped, naming the file and the field).
"""

from __future__ import annotations

import json
import os
from typing import Any

from vreason.core.errors import MissingFileError
from vreason.core.protocol import LoadResult
from vreason.core.records import Mode, RubricItem, Sample, check_safe_id
from vreason.data.loaderrors import WHOLE_RECORD, decode_utf8, json_or_jsonl_records, load_error

CATEGORIES: tuple[str, ...] = ("av", "common_sense", "human", "industry", "misc", "physics", "robot")
"""The released code's categories, in its order (``common_sense`` before the others it prefixes)."""
DOMAIN_NAMES = {"av": "AV", "common_sense": "Common sense", "human": "Human", "industry": "Industry",
                "misc": "Misc", "physics": "Physics", "robot": "Robot"}
PROMPT_FILES = ("cosmos_predict2_bench_full_info.json", "prompts.json", "prompts.jsonl")
QUESTION_KEYS = ("uid", "question", "answer", "index2ans")


class _Bad(Exception):
    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field = field


def category_of(video_id: str) -> str | None:
    """The category of a video id by its file-name prefix, or ``None`` (the released code asserts)."""
    for cat in CATEGORIES:
        if video_id.startswith(cat + "_"):
            return cat
    return None


def find_prompt_file(data: str, name: str | None = None) -> str:
    """The prompt file: ``data`` itself when it is a file, else ``name`` or a known name inside it, else the
    only ``*.json``/``*.jsonl`` file at its top level."""
    if os.path.isfile(data):
        return data
    if not os.path.isdir(data):
        raise MissingFileError(f"PAI-Bench-G data {data}: no such file or folder")
    for cand in ([name] if name else []) + list(PROMPT_FILES):
        p = os.path.join(data, cand)
        if os.path.isfile(p):
            return p
    if name:
        raise MissingFileError(f"PAI-Bench-G data {data}: no prompt file {name!r}")
    found = sorted(f for f in os.listdir(data) if f.endswith((".json", ".jsonl")))
    if len(found) == 1:
        return os.path.join(data, found[0])
    raise MissingFileError(f"PAI-Bench-G data {data}: no prompt file ({', '.join(PROMPT_FILES)}) and "
                            f"{len(found)} other JSON files; name one with --opt prompt_file=NAME")


def _records(path: str) -> list[tuple[str, Any, dict[str, str] | None]]:
    def unwrap(items: Any) -> Any:  # {video_id: record} is accepted too
        if isinstance(items, dict):
            return [{"video_id": k, **v} if isinstance(v, dict) else v for k, v in items.items()]
        return items

    return json_or_jsonl_records(path, unwrap)


def _prompt(rec: dict[str, Any]) -> str:
    for key in ("prompt_en", "prompt"):
        v = rec.get(key)
        if isinstance(v, dict):
            v = v.get("en") or v.get("prompt_en")
        if isinstance(v, str) and v.strip():
            return v
    raise _Bad("prompt_en", "no prompt (prompt_en or prompt)")


def read_questions(path: str) -> list[dict[str, Any]]:
    """The questions of one ``vqa/<video_id>.json``; raises ``_Bad`` naming the field at fault."""
    try:
        with open(path, "rb") as fh:
            qs = json.loads(decode_utf8(fh.read()))
    except (OSError, json.JSONDecodeError) as exc:
        raise _Bad(WHOLE_RECORD, f"question file {os.path.basename(path)} is not readable JSON: {exc}") from None
    except RecursionError:
        raise _Bad(WHOLE_RECORD, f"question file {os.path.basename(path)}: nested deeper than can be parsed") from None
    if not isinstance(qs, list):
        raise _Bad(WHOLE_RECORD, f"question file {os.path.basename(path)}: expected a list, got {type(qs).__name__}")
    out = []
    seen: set[str] = set()
    for i, q in enumerate(qs):
        where = f"{os.path.basename(path)}[{i}]"
        if not isinstance(q, dict):
            raise _Bad(WHOLE_RECORD, f"{where}: a question must be an object")
        missing = [k for k in QUESTION_KEYS if k not in q]
        if missing:
            raise _Bad(missing[0], f"{where}: question without {', '.join(missing)} (has {', '.join(sorted(q))})")
        i2a = q["index2ans"]
        if not isinstance(i2a, dict) or str(q["answer"]) not in {str(k) for k in i2a}:
            raise _Bad("answer", f"{where}: answer {q['answer']!r} is not a key of index2ans {i2a!r}")
        expected = {str(k): v for k, v in i2a.items()}[str(q["answer"])]
        if not isinstance(expected, str) or not expected.strip() or not isinstance(q["question"], str):
            raise _Bad("question", f"{where}: question and expected answer must be text")
        uid = str(q["uid"])
        if uid in seen:
            raise _Bad("uid", f"{where}: duplicate uid {uid!r}")
        seen.add(uid)
        out.append({"uid": uid, "question": q["question"], "answer": str(q["answer"]), "expected": expected,
                    "index2ans": {str(k): v for k, v in i2a.items()}, "task": str(q.get("task", ""))})
    return out


def load_pai_g(data: str, *, prompt_file: str | None = None, check_images: bool = True) -> LoadResult:
    """Every record of the prompt file as a Sample (id = ``video_id``); one error per bad record."""
    path = find_prompt_file(data, prompt_file)
    root = data if os.path.isdir(data) else os.path.dirname(os.path.abspath(path))
    res = LoadResult()
    seen: set[str] = set()
    for where, rec, err in _records(path):
        if err is not None:
            res.errors.append(err)
            continue
        try:
            res.samples.append(_sample(rec, root, seen, check_images))
        except _Bad as exc:
            vid = rec.get("video_id") if isinstance(rec, dict) else None
            res.errors.append(load_error(where, exc.field, str(exc), **({"video_id": vid} if vid else {})))
    return res


def _sample(rec: Any, root: str, seen: set[str], check_images: bool) -> Sample:
    if not isinstance(rec, dict):
        raise _Bad(WHOLE_RECORD, f"a record must be an object, got {type(rec).__name__}")
    vid = rec.get("video_id")
    if not isinstance(vid, str) or not vid:
        raise _Bad("video_id", f"no video_id (fields: {', '.join(sorted(map(str, rec)))})")
    try:
        check_safe_id(vid, "video_id")
    except ValueError as exc:
        raise _Bad("video_id", str(exc)) from None
    if vid in seen:
        raise _Bad("video_id", f"duplicate video_id {vid!r}")
    cat = category_of(vid)
    if cat is None:
        known = ", ".join(c + "_" for c in CATEGORIES)
        raise _Bad("video_id", f"video_id {vid!r} has no known category prefix ({known})")
    prompt = _prompt(rec)
    image = rec.get("image_name") or rec.get("image_path")
    image_rel = None
    if image:
        if not isinstance(image, str):
            raise _Bad("image_name", f"image_name must be text, got {type(image).__name__}")
        image_rel = image if os.path.dirname(image) else os.path.join("condition_image", image)
        if check_images and not os.path.isfile(os.path.join(root, image_rel)):
            raise _Bad("image_name", f"condition image {image_rel} does not exist under {root}")
    vqa_path = os.path.join(root, "vqa", f"{vid}.json")
    questions = read_questions(vqa_path) if os.path.isfile(vqa_path) else []
    seen.add(vid)
    rubric = [RubricItem(id=q["uid"], kind="question", text=q["question"], dimension=q["task"],
                         expected=q["expected"]) for q in questions]
    return Sample(id=vid, benchmark="pai-g", category=cat, task=DOMAIN_NAMES[cat],
                  mode=Mode.i2v if image_rel else Mode.t2v, prompt=prompt, input_image=image_rel, rubric=rubric,
                  root=os.path.abspath(root),
                  metadata={"has_vqa": bool(questions), "questions": questions,
                            "image_name": image if image else None})


__all__ = ["CATEGORIES", "DOMAIN_NAMES", "category_of", "find_prompt_file", "load_pai_g", "read_questions"]
