"""The `caot-dbt` command: dbt for Dagster's dbt step, with its start-up done ahead of time.

A new dbt process spends about 1.3 s importing dbt and 0.5 s more on its first command's one-time
work (measured: a one-model build takes 1.1 s as a process's first dbt command, 0.6 s after a
`dbt ls`), and about 0.3 s freeing memory when it exits. The pipeline command starts one dbt
process as it begins (`start_early`, `prestarted`): that process imports dbt and runs a quiet
`dbt ls` on a scratch copy of dbt's parse state while the pipeline imports its own modules and
loads the tapes (`dbt ls` opens no warehouse connection), then waits on a Unix socket. Dagster's
dbt step runs `caot-dbt ARGS` where it would run `dbt ARGS`; `caot-dbt` hands its standard
streams, arguments, environment and working folder to the waiting process, which runs dbt exactly
as the `dbt` command would, then returns dbt's exit code. Interrupts are forwarded to it, so
stopping a run stops dbt as before.

Each waiting process serves one dbt command. With none waiting (a run started from the Dagster UI
or by the daemon, a second build in one pipeline command, a process that failed to start),
`caot-dbt` runs dbt itself: the result is the same, only the start-up is not saved.
"""

import json
import multiprocessing.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from contextlib import contextmanager, redirect_stdout, suppress
from dataclasses import dataclass
from pathlib import Path

from dagster_project import frozen_imports

SOCKET_ENV = "CAOT_DBT_PRESTARTED"  # the waiting process's socket, for `caot-dbt`
PARTIAL_PARSE = "partial_parse.msgpack"  # dbt's parse state, in its target folder
STOP_SECONDS = 10  # an unused waiting process gets this long to end, then is killed
PRELOAD = (  # what a `dbt build` imports before its first model
    "dbt.cli.main",
    "dbt.task.build",
    "dbt.parser.manifest",
    "dbt.adapters.duckdb",
    "dbt.include.duckdb",
)


def run_dbt(argv: list[str]) -> int:
    """dbt's own command line, as the `dbt` executable runs it; returns the exit code."""
    from dbt.cli.main import cli

    own, sys.argv = sys.argv, ["dbt", *argv]  # dbt reads its flags from sys.argv too
    try:
        cli.main(args=argv, prog_name="dbt")
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = own
    return 0


def main() -> int:
    """`caot-dbt ARGS`: dbt ARGS in the waiting process if there is one, else here."""
    argv = sys.argv[1:]
    path = os.environ.get(SOCKET_ENV)
    code = _hand_over(path, argv) if path else None
    return run_dbt(argv) if code is None else code


def _hand_over(path: str, argv: list[str]) -> int | None:
    """Run `argv` in the process waiting at `path`; None when no process took it."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()})
        socket.send_fds(conn, [b"R"], [0, 1, 2])
        conn.sendall(request.encode())
        conn.shutdown(socket.SHUT_WR)
        replies = conn.makefile("r")
        started = replies.readline()  # the waiting process's pid once it has taken the command
    except OSError:
        return None
    if not started:  # it had stopped, or another command took it first
        return None
    pid = json.loads(started)["pid"]
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda number, _frame: os.kill(pid, number))
    finished = replies.readline()
    if not finished:
        print(f"caot-dbt: the dbt process {pid} ended without an exit code", file=sys.stderr)
        return 1
    return json.loads(finished)["exit"]


def serve(listening: int, path: str, parent: int, warm_up: dict) -> None:
    """Import dbt and run the `warm_up` command, then run the first command handed over on the
    socket `listening` (bound at `path`) and exit; or exit when the process `parent` that
    started this one is gone.

    The socket was listening before this process started, so a command arriving early waits
    for the imports rather than starting dbt a second time."""
    # Interrupts and stops reach this process through caot-dbt and the pipeline even when it
    # inherited them ignored (a pipeline started under nohup or as a background job); a stop
    # (the pipeline needed no dbt command) ends it as cleanly as a command's end does.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda _number, _frame: _exit(0))
    listener = socket.socket(fileno=listening)
    with frozen_imports.frozen():  # out of the garbage collector's walks, as the pipeline's
        for module in PRELOAD:
            __import__(module)
        _warm_up(**warm_up)
    listener.settimeout(1.0)
    while True:
        try:
            conn, _ = listener.accept()
            break
        except TimeoutError:
            if os.getppid() != parent:  # the pipeline is gone: nobody will come
                with suppress(OSError):
                    os.unlink(path)
                    os.rmdir(os.path.dirname(path))
                _exit(0)
    listener.close()  # a second command finds nobody listening and runs dbt itself
    with suppress(OSError):
        os.unlink(path)
    conn.settimeout(None)
    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    request = json.loads(conn.makefile("rb").read())
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    code = run_dbt(request["argv"])
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
    _exit(0)


def _exit(code: int) -> None:
    """End this process without the interpreter's teardown (about 0.3 s after a build), but
    unlinking the semaphores of dbt's adapters (dbt makes their locks in a "spawn" context) as
    the teardown would: else multiprocessing's resource tracker warns of them."""
    multiprocessing.util._run_finalizers(0)
    os._exit(code)


def _warm_up(argv: list[str], env: dict[str, str], parse_state: str | None) -> None:
    """dbt's first command in this process, on a scratch target folder (a copy of the build's
    parse state, so that dbt need not parse the project again); its output is discarded."""
    scratch = Path(tempfile.mkdtemp(prefix="caot-dbt-warm-up-"))
    own = dict(os.environ)
    try:
        if parse_state and Path(parse_state).exists():
            shutil.copyfile(parse_state, scratch / PARTIAL_PARSE)
        os.environ.update(env, DBT_TARGET_PATH=str(scratch), DBT_LOG_PATH=str(scratch))
        with open(os.devnull, "w") as nowhere, redirect_stdout(nowhere):
            run_dbt(argv)
    except Exception:  # noqa: BLE001 - a warm-up that fails only saves less time
        pass
    finally:
        os.environ.clear()
        os.environ.update(own)
        shutil.rmtree(scratch, ignore_errors=True)


def warm_up_command(work: Path) -> dict:
    """The warm-up of a pipeline run on the working warehouse `work`: `dbt ls` with the build's
    project, profile and parse state (`dbt_assets` keeps it beside the warehouse, else the
    project's target folder)."""
    project = Path(os.environ.get("DBT_PROJECT_DIR") or Path(__file__).resolve().parents[2] / "dbt")
    parse_state = work.parent / "dbt_parse" / PARTIAL_PARSE
    if not parse_state.exists():
        parse_state = project / "target" / PARTIAL_PARSE
    return {
        "argv": ["ls", "--quiet", "--no-write-json", "--log-level-file", "none"],
        "env": {
            "DBT_PROJECT_DIR": str(project),
            "DBT_PROFILES_DIR": os.environ.get("DBT_PROFILES_DIR") or str(project),
            "CAOT_WAREHOUSE_WORK": str(work),  # the profile's warehouse, as the build has it
        },
        "parse_state": str(parse_state),
    }


@dataclass
class _Waiting:
    process: subprocess.Popen
    path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:  # still importing with SIGTERM ignored
                self.process.kill()
                self.process.wait()
        self.path.unlink(missing_ok=True)
        self.path.parent.rmdir()


_early: _Waiting | None = None  # started by the command line before its imports


def _start(work: Path) -> _Waiting:
    folder = Path(tempfile.mkdtemp(prefix="caot-dbt-"))
    path = folder / "dbt.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    with listener:
        process = subprocess.Popen(
            [sys.executable, "-u", "-m", __name__, "--serve"]
            + [str(listener.fileno()), str(path), str(os.getpid())]
            + [json.dumps(warm_up_command(work))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=[listener.fileno()],
        )
    return _Waiting(process, path)


def start_early(work: Path) -> None:
    """Start the waiting process now, for the `prestarted()` of this process to come (the
    pipeline's command line calls this before importing Dagster)."""
    global _early
    _early = _start(work)


@contextmanager
def prestarted(work: Path, wanted: bool = True):
    """A dbt process waiting (the early one, or one started now) for the next `caot-dbt` of this
    process and its children, when `wanted`; stopped on the way out if no command used it."""
    global _early
    waiting, _early = _early, None
    if not wanted:
        if waiting is not None:
            waiting.stop()
        yield None
        return
    waiting = waiting or _start(work)
    previous = os.environ.get(SOCKET_ENV)
    os.environ[SOCKET_ENV] = str(waiting.path)
    try:
        yield waiting.process
    finally:
        if previous is None:
            os.environ.pop(SOCKET_ENV, None)
        else:
            os.environ[SOCKET_ENV] = previous
        waiting.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5]))
    else:
        sys.exit(main())
