"""The machine a measurement runs on and the role processes it starts, shared by the benchmarks and the
security experiments that time deployed jobs (bench.e2e, bench.net, bench.threads, security.admission_flood).
"""
import os
import platform
import time


def machine() -> str:
    """This machine in words: cores and CPU model, memory, Python and kernel (each report's machine line)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return (f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GiB, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def wait_for_line(path: str, text: str, process, limit_s: float) -> None:
    """Wait until the process's log holds ``text`` (a state, not a sleep); fail if it exits or takes too long."""
    deadline = time.monotonic() + limit_s
    while True:
        with open(path) as f:
            if text in f.read():
                return
        if process.poll() is not None or time.monotonic() > deadline:
            with open(path) as f:
                raise SystemExit(f"{process.args[4:7]} did not start: {f.read()[-2000:]}")
        time.sleep(0.1)
