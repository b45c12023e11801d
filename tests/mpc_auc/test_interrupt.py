"""Ctrl-C: the whole process group gets SIGINT in the middle of the sort (as at a terminal); the command
prints one line, exits 130, writes nothing, and leaves no process behind."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from mpc_auc.csv_io import write_evalset
from mpc_auc.synthetic import synthetic_evalset

COMMAND = Path(sys.executable).parent / "mpc-auc"


def _session_processes(sid: int) -> list:
    out = subprocess.run(["ps", "-o", "pid=,stat=", "-s", str(sid)], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if not line.split()[1].startswith("Z")]


def test_ctrl_c_prints_one_line_exits_130_and_leaves_no_process(tmp_path):
    data, out = tmp_path / "rows.csv", tmp_path / "auc.json"
    write_evalset(str(data), synthetic_evalset(m=20_000, clients=4, seed=2))
    # the bitonic network on 32,768 slots takes seconds, so the interrupt always lands mid-sort; the command
    # starts as from a terminal, with Ctrl-C's default action (a test run started in the background by a
    # shell inherits SIGINT ignored, and so would the command)
    proc = subprocess.Popen([str(COMMAND), "run", "--input", str(data), "--out", str(out), "--method", "bitonic"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines, sorting = [], threading.Event()

    def read():
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if "oblivious bitonic sort" in line:
                sorting.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert sorting.wait(120), lines
    before = len(lines)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(30) == 130
    reader.join(10)
    after = [line for line in lines[before:] if "oblivious bitonic sort" not in line]
    assert after == ["mpc-auc: interrupted: every role stopped, nothing written"], lines
    deadline = time.monotonic() + 10
    while _session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _session_processes(proc.pid) == []
    assert not out.exists()


def test_a_refused_input_stops_the_roles_started_while_it_was_read(tmp_path):
    """The roles start (from a fork server) while the input is read; a bad row ends the command with exit 2
    and one error line, and no role, fork server or helper process is left behind."""
    data, out = tmp_path / "rows.csv", tmp_path / "auc.json"
    rows = ["client,score,label"] + [f"c{i % 3},{i / 2000},{i % 2}" for i in range(1000)]
    rows[500] = "c1,nan,1"
    data.write_text("\n".join(rows) + "\n")
    proc = subprocess.Popen([str(COMMAND), "run", "--input", str(data), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr
    assert len(stderr.strip().splitlines()) == 1 and "nan" in stderr.lower(), stderr
    assert not out.exists()
    assert _leftovers(proc.pid, time.monotonic() + 10) == []


def _leftovers(sid: int, deadline: float) -> list:
    while _session_processes(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _session_processes(sid)
