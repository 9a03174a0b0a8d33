"""A deliberately unreliable protocol peer for the process-target tests.

It speaks the protocol by hand (not through the companion module) so each
test can make it break the protocol in exactly one way. The prompt text picks
the misbehaviour for that turn; flags pick handshake-level ones. Every start
appends this process's pid to ``child.pids`` in the durable directory so a
test can check the process is gone after the target is dropped.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--version", type=int, default=1)
parser.add_argument("--ignore-shutdown", action="store_true")
parser.add_argument("--silent-handshake", action="store_true")
parser.add_argument("--chatty", action="store_true")
parser.add_argument("--durable-dir", required=True)
args = parser.parse_args()

with open(os.path.join(args.durable_dir, "child.pids"), "a") as pids:
    pids.write(f"{os.getpid()}\n")

out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def read():
    line = sys.stdin.buffer.readline()
    return json.loads(line) if line else None


def record(request_id, **attributes):
    send({"type": "turn_record", "id": request_id,
          "record": {"answer": "ok", "attributes": attributes}})


if args.chatty:
    sys.stderr.write(f"starting with {args.durable_dir}\n")
    sys.stderr.flush()

if args.ignore_shutdown:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

hello = read()
if args.silent_handshake:
    time.sleep(3600)
send({"type": "ready", "protocol_version": args.version,
      "capabilities": {"capabilities": ["tools"]}})

while True:
    message = read()
    if message is None or message["type"] == "shutdown":
        if args.ignore_shutdown:
            while True:
                time.sleep(1)
        sys.exit(0)
    request_id = message["id"]
    prompt = message["request"].get("prompt", "resume")
    if prompt == "echo":
        record(request_id, env=os.environ.get("AGENT_DURABLE_DIR"),
               flag=args.durable_dir, hello=hello["durable_dir"],
               trial=hello["trial"], versions=hello["protocol_versions"])
    elif prompt == "harness_env":
        # The harness's own variables this process can see.
        record(request_id, names=sorted(k for k in os.environ if k.startswith("SYMFONIC_EVALS")))
    elif prompt == "ledger":
        applied = []
        for key in ("refund:1", "refund:1", "refund:2"):
            send({"type": "ledger_apply", "id": request_id, "key": key})
            applied.append(read()["applied"])
        record(request_id, applied=applied)
    elif prompt == "typed_error":
        send({"type": "turn_error", "id": request_id,
              "error": {"kind": "PauseTokenReplayedError", "message": "spent"}})
    elif prompt == "exit":
        sys.stderr.write("the deployment is giving up: marker-7f3a\n")
        sys.stderr.flush()
        sys.exit(3)
    elif prompt == "malformed":
        out.write(b'{"type": "turn_record", "id": \n')
        out.flush()
    elif prompt == "non_protocol":
        out.write(b"processing your refund now\n")
        out.flush()
    elif prompt == "unknown_type":
        send({"type": "gossip", "id": request_id})
    elif prompt == "oversized":
        out.write(b'{"type":"turn_record","answer":"' + b"x" * (2 << 20) + b'"}\n')
        out.flush()
        time.sleep(3600)
    elif prompt.startswith("big:"):
        # A record whose model input is the given number of bytes.
        size = int(prompt[4:])
        send({"type": "turn_record", "id": request_id,
              "record": {"answer": "ok", "model_input": "m" * size}})
    elif prompt == "endless":
        # One line that never ends.
        chunk = b"x" * 65536
        try:
            while True:
                out.write(chunk)
        except BrokenPipeError:
            sys.exit(0)
    elif prompt == "silent":
        time.sleep(3600)
    elif prompt == "flood":
        chunk = b"e" * 65536
        for _ in range(160):  # 10 MiB, far beyond any pipe buffer
            sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
        record(request_id, flooded=True)
    elif prompt == "pending_completed":
        send({"type": "turn_record", "id": request_id, "record": {
            "answer": "done", "tool_calls": [
                {"id": "c1", "name": "ask_user", "arguments": {}, "outcome": {"status": "pending"}}]}})
    elif prompt == "long_code":
        send({"type": "turn_error", "id": request_id,
              "error": {"kind": "Gone", "message": "", "code": "g" * 65}})
    elif prompt == "free_code":
        send({"type": "turn_error", "id": request_id,
              "error": {"kind": "Gone", "message": "", "code": "token tok-1 gone"}})
    elif prompt == "malformed_question":
        send({"type": "turn_record", "id": request_id, "record": {
            "answer": "asked", "terminal": {"kind": "paused", "interaction": "ask_user",
                                            "resumable": True, "token": "t", "question_id": 7}}})
    elif prompt == "empty_question_id":
        send({"type": "turn_record", "id": request_id, "record": {
            "answer": "asked", "terminal": {"kind": "paused", "interaction": "ask_user",
                                            "resumable": True, "token": "t", "question_id": ""}}})
    elif prompt == "unknown_role":
        send({"type": "turn_record", "id": request_id, "record": {
            "answer": "done", "tool_calls": [
                {"id": "c1", "name": "t", "arguments": {}, "outcome": {"status": "parked"}}]}})
    elif prompt == "wrong_id":
        record(request_id + 100)
    elif prompt == "grandchild":
        sleeper = subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        record(request_id, grandchild=sleeper.pid)
    else:
        record(request_id)
