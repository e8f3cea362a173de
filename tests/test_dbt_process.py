"""`caot-dbt`: dbt run by a process started ahead, or by itself when none waits."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from dagster_project.transformation import dbt_process

CAOT_DBT = str(Path(sys.executable).parent / "caot-dbt")
DBT = Path(__file__).resolve().parents[1] / "dbt"
WORK = Path("/nonexistent/work/warehouse.duckdb")  # the warm-up's `dbt ls` opens no warehouse


def _caot_dbt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CAOT_DBT, *args], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )


def test_with_no_process_waiting_it_runs_dbt_itself(monkeypatch):
    monkeypatch.delenv(dbt_process.SOCKET_ENV, raising=False)
    done = _caot_dbt("--version")
    assert done.returncode == 0, done.stderr
    assert "installed: 1.11" in done.stdout


def test_a_prestarted_process_runs_one_command_then_the_next_runs_alone():
    with dbt_process.prestarted(WORK) as waiting:
        done = _caot_dbt("--version")
        assert done.returncode == 0, done.stderr
        assert "installed: 1.11" in done.stdout  # dbt's output, through the handed-over streams
        assert waiting.wait(timeout=30) == 0  # it served the command and exited
        again = _caot_dbt("no-such-command")  # nobody waits now: dbt runs in caot-dbt itself
    assert again.returncode == 2 and "No such command" in again.stderr


def test_the_prestarted_process_leaves_no_semaphores_behind(tmp_path):
    """dbt's adapters hold multiprocessing locks; a process that ends without unlinking them
    makes the resource tracker warn on the pipeline's standard error."""
    script = (
        "import subprocess; from pathlib import Path; "
        "from dagster_project.transformation import dbt_process; "
        f"w = dbt_process.prestarted(Path({str(WORK)!r})); waiting = w.__enter__(); "
        f"subprocess.run([{CAOT_DBT!r}, 'ls', '--quiet', '--project-dir', {str(DBT)!r}, "
        f"'--profiles-dir', {str(DBT)!r}, '--target-path', {str(tmp_path)!r}, "
        "'--log-level-file', 'none'], check=True, capture_output=True); "
        "waiting.wait(timeout=60); w.__exit__(None, None, None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=180
    )  # its standard error is the waiting process's and the resource tracker's
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr, done.stderr


def test_an_unused_prestarted_process_stopped_after_its_warm_up_leaves_no_semaphores():
    """A run that needs no dbt command (nothing changed) stops the waiting process: it must end
    as cleanly as after a command, or the resource tracker warns on the pipeline's stderr."""
    script = (
        "import time; from pathlib import Path; "
        "from dagster_project.transformation import dbt_process; "
        f"w = dbt_process.prestarted(Path({str(WORK)!r})); waiting = w.__enter__(); "
        "stat = Path(f'/proc/{waiting.pid}/stat'); used = lambda: stat.read_text().split()[13]; "
        "deadline, last, since = time.monotonic() + 90, used(), time.monotonic(); "
        "\nwhile time.monotonic() < deadline and time.monotonic() - since < 2:\n"
        "    time.sleep(0.25); now = used()\n"
        "    if now != last: last, since = now, time.monotonic()\n"
        "w.__exit__(None, None, None); print(waiting.returncode)"
    )  # waits until the process has used no CPU for 2 s: imports and warm-up done
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]  # it ended by itself on the stop, not killed
    assert "leaked" not in done.stderr, done.stderr


def test_a_pipeline_started_with_interrupts_ignored_can_stop_and_interrupt_dbt():
    """Under nohup or as a background job the pipeline inherits SIGINT and SIGTERM ignored: the
    waiting process must still end when the pipeline stops it, and take an interrupt."""
    script = f"""
import signal, time
from pathlib import Path
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
from dagster_project.transformation import dbt_process
started = dbt_process.prestarted(Path({str(WORK)!r}))
status = Path(f"/proc/{{started.__enter__().pid}}/status")
mask = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
def ignored():
    line = next(x for x in status.read_text().splitlines() if x.startswith("SigIgn:"))
    return int(line.split()[1], 16) & mask
deadline = time.monotonic() + 60
while ignored() and time.monotonic() < deadline:
    time.sleep(0.05)
print("ignored", ignored())
started.__exit__(None, None, None)
print("stopped")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ignored", "0", "stopped"]


def test_dbt_exit_codes_come_back_from_the_prestarted_process():
    with dbt_process.prestarted(WORK) as waiting:
        done = _caot_dbt("no-such-command")
        assert waiting.wait(timeout=30) == 0
    assert done.returncode == 2 and "No such command" in done.stderr


def test_the_waiting_process_ends_when_the_pipeline_is_gone(tmp_path):
    # a pipeline killed before its build: the waiting process must not wait forever
    parent = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os\n"
            "from pathlib import Path\n"
            "from dagster_project.transformation import dbt_process\n"
            "with dbt_process.prestarted(Path('/nonexistent/w.duckdb')) as p:\n"
            "    print(p.pid, os.environ[dbt_process.SOCKET_ENV], flush=True)\n"
            "    os._exit(0)\n",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    pid, socket_path = parent.stdout.split()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _running(int(pid)):
        time.sleep(0.2)
    assert not _running(int(pid))
    assert not Path(socket_path).parent.exists()  # its socket's folder went with it


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_an_interrupt_of_caot_dbt_reaches_the_process_running_dbt(tmp_path, monkeypatch):
    """A stand-in for the waiting process: it takes the command and reports as dbt's pid a
    `sleep` that only an interrupt ends; caot-dbt must forward the interrupt to it."""
    path = str(tmp_path / "dbt.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    sleeper = subprocess.Popen(  # ends on an interrupt even if this test's were ignored
        [sys.executable, "-c", "import signal, time; "
         "signal.signal(signal.SIGINT, signal.SIG_DFL); time.sleep(60)"]
    )  # fmt: skip
    outcome = {}

    def stand_in():
        conn, _ = listener.accept()
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        outcome["request"] = json.loads(conn.makefile("rb").read())
        for fd in fds:
            os.close(fd)
        conn.sendall(json.dumps({"pid": sleeper.pid}).encode() + b"\n")
        outcome["sleeper"] = sleeper.wait(timeout=60)
        conn.sendall(json.dumps({"exit": 130}).encode() + b"\n")
        conn.close()

    server = threading.Thread(target=stand_in)
    server.start()
    monkeypatch.setenv(dbt_process.SOCKET_ENV, path)
    client = subprocess.Popen([CAOT_DBT, "build", "--select", "x"], env=dict(os.environ))
    deadline = time.monotonic() + 30
    while "request" not in outcome and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # caot-dbt has read the pid and set its handlers
    client.send_signal(signal.SIGINT)
    try:
        assert client.wait(timeout=30) == 130
    finally:
        sleeper.kill()
        server.join(timeout=30)
    assert outcome["sleeper"] == -signal.SIGINT  # the interrupt reached "dbt"
    assert outcome["request"]["argv"] == ["build", "--select", "x"]
    assert outcome["request"]["cwd"] == os.getcwd()


def test_run_dbt_returns_dbt_exit_code_and_leaves_sys_argv():
    argv = list(sys.argv)
    assert dbt_process.run_dbt(["--version"]) == 0
    assert dbt_process.run_dbt(["--no-such-flag"]) == 2  # click's usage error
    assert sys.argv == argv


def test_the_warm_up_leaves_the_environment_and_no_scratch_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(dbt_process.tempfile, "tempdir", str(tmp_path))
    before = dict(os.environ)
    state = tmp_path / "state.msgpack"
    state.write_bytes(b"not really a parse state")
    dbt_process._warm_up(["--version"], {"CAOT_WAREHOUSE_WORK": "/elsewhere"}, str(state))
    assert dict(os.environ) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.msgpack"]


def test_the_warm_up_uses_the_parse_state_beside_the_warehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("DBT_PROJECT_DIR", str(tmp_path / "dbt"))
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    work = tmp_path / "work" / "warehouse.duckdb"
    command = dbt_process.warm_up_command(work)
    assert command["argv"][0] == "ls"  # opens no warehouse: the pipeline is writing it
    assert command["parse_state"] == str(tmp_path / "dbt" / "target" / "partial_parse.msgpack")
    assert command["env"] == {
        "DBT_PROJECT_DIR": str(tmp_path / "dbt"),
        "DBT_PROFILES_DIR": str(tmp_path / "dbt"),
        "CAOT_WAREHOUSE_WORK": str(work),
    }
    (work.parent / "dbt_parse").mkdir(parents=True)
    (work.parent / "dbt_parse" / "partial_parse.msgpack").write_bytes(b"")
    beside = dbt_process.warm_up_command(work)["parse_state"]
    assert beside == str(work.parent / "dbt_parse" / "partial_parse.msgpack")
