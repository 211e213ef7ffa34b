"""Run ``vreason ARGS`` inside the test process: what a real process gives (exit code, stdout, stderr) without
a new interpreter's ≈ 1.3 s of imports. For tests that only need the CLI's behaviour (an exit code, a
message); every kind of exit keeps at least one test through a real ``python -m vreason.cli.main`` process
(tests/test_cli.py::test_errors_name_the_file_and_reason, tests/test_usage_mistakes.py, tests/test_exit_codes.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback


def run_cli(*args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = (),
            cwd: str | None = None) -> subprocess.CompletedProcess:
    """``vreason.cli.main.main()`` with ``sys.argv = ["vreason", *args]``, ``env`` set and ``drop`` removed
    from the environment and ``cwd`` as the working directory for the call, all restored afterwards. A crash
    (any exception ``main`` re-raises) is exit 1 with its traceback on stderr, as from the interpreter."""
    from vreason.cli.main import main

    saved_env, saved_argv, saved_cwd = dict(os.environ), sys.argv, os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        for k in drop:
            os.environ.pop(k, None)
        os.environ.update(env or {})
        sys.argv = ["vreason", *args]
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except Exception:  # noqa: BLE001 - what the interpreter does with an uncaught exception
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["vreason", *args], code, out.getvalue(), err.getvalue())
