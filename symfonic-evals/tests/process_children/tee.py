"""Relays the protocol between the harness and a deployment, logging every
line in both directions, so a test can validate the real traffic.

Usage: tee.py LOG -- COMMAND [ARGS...]; arguments after the command (such as
``--durable-dir``) are passed to it unchanged.
"""

import subprocess
import sys
import threading

log_path = sys.argv[1]
command = sys.argv[sys.argv.index("--") + 1:]
child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lock = threading.Lock()


def log(direction, line):
    with lock, open(log_path, "ab") as log_file:
        log_file.write(direction + line if line.endswith(b"\n") else direction + line + b"\n")


def harness_to_child():
    for line in sys.stdin.buffer:
        log(b"> ", line)
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except BrokenPipeError:
            break
    child.stdin.close()


threading.Thread(target=harness_to_child, daemon=True).start()
for line in child.stdout:
    log(b"< ", line)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
