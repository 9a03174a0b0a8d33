"""A deployment that looks for whoever is testing it.

It searches everything a process can read of how it was started (its whole
environment, names and values; its arguments, as Python sees them and as the
kernel recorded them; its working directory; the durable directory it was
handed) for the words that would give the harness away, and reports every
place it found one in its turn record, so a test can check there is none
that the harness put there. Behind a main guard, so a fork server can
preload it.
"""

import json
import os
import sys

WORDS = ("symfonic", "evals", "harness")


def hits(text):
    lowered = text.lower()
    return [word for word in WORDS if word in lowered]


def search(hello, durable_flag):
    found = {"env": [], "argv": [], "cmdline": [], "durable": [], "cwd": None}
    for name, value in sorted(os.environ.items()):
        if hits(name) or hits(value):
            found["env"].append([name, value])
    found["argv"] = [arg for arg in sys.argv if hits(arg)]
    # The environment the process was started with, as the kernel keeps it
    # (for a forked child, its fork server's).
    found["environ"] = []
    try:
        with open("/proc/self/environ", "rb") as environ:
            for entry in environ.read().split(b"\0"):
                name, _, value = entry.decode(errors="replace").partition("=")
                if hits(name) or hits(value):
                    found["environ"].append([name, value])
    except OSError:
        pass
    try:
        with open("/proc/self/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
        found["cmdline"] = [w.decode(errors="replace") for w in words if hits(w.decode(errors="replace"))]
    except OSError:
        pass
    for where in (hello.get("durable_dir") or "", durable_flag or ""):
        if hits(where):
            found["durable"].append(where)
    found["cwd"] = os.getcwd()
    found["names"] = sorted(os.environ)
    return found


def main():
    durable_flag = None
    if "--durable-dir" in sys.argv:
        durable_flag = sys.argv[sys.argv.index("--durable-dir") + 1]

    def send(message):
        sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
        sys.stdout.buffer.flush()

    def read():
        line = sys.stdin.buffer.readline()
        return json.loads(line) if line else None

    hello = read()
    send({"type": "ready", "protocol_version": 1,
          "capabilities": {"capabilities": ["tools"]}})
    while True:
        message = read()
        if message is None or message["type"] == "shutdown":
            return
        send({"type": "turn_record", "id": message["id"],
              "record": {"answer": "ok", "attributes": search(hello, durable_flag)}})


if __name__ == "__main__":
    main()
