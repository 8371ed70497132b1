#!/usr/bin/env python3
"""A fake daemon for the runner's own tests: it registers like opencode-pty and answers a few requests, with
one deliberate fault chosen by FAKE_FAULT, so the tests can check that the runner reports it.

FAKE_FAULT=missing-member  pong leaves out `features`.
FAKE_FAULT=swapped-events  subscribe answers attached, then title_changed before controller_changed.
FAKE_FAULT=deadline-only   never refuses a bad frame: it waits for the whole declared payload, whatever its
                           length, and closes only when a 10 s read deadline runs out.
FAKE_FAULT=reworded        words the errors the protocol leaves to the implementation differently from
                           opencode-pty (`get` of an unknown id: `no process N` for `process N not found`).
FAKE_FAULT=changed-fixed   words a text the protocol fixes differently: `unknown request: OP` for
                           `unsupported request: OP`.
FAKE_FEATURES lists the features it announces, comma-separated (default `commands`; empty: a plain protocol 8
daemon).
FAKE_ATTACHED names a JSON file holding a valid `attached` frame (a schema example); FAKE_PIDFILE, if set, is
where it writes its pid."""
import json, os, secrets, socket, struct, sys, threading

args = sys.argv[1:]
name = args[args.index("--name") + 1]
root = args[args.index("--runtime-dir") + 1]
fault = os.environ.get("FAKE_FAULT", "")
features = [feature for feature in os.environ.get("FAKE_FEATURES", "commands").split(",") if feature]
directory = os.path.join(root, name)
os.makedirs(directory, mode=0o700, exist_ok=True)
path = os.path.join(directory, "fake.sock")
if os.environ.get("FAKE_PIDFILE"):
    with open(os.environ["FAKE_PIDFILE"], "w") as f:
        f.write(str(os.getpid()))
token, instance = secrets.token_hex(16), secrets.token_hex(16)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(16)
registration = {"instance_id": instance, "pid": os.getpid(), "protocol": 8, "features": features, "socket": path,
                "token": token}
with open(os.path.join(directory, "service.tmp"), "w") as f:
    json.dump(registration, f)
os.rename(os.path.join(directory, "service.tmp"), os.path.join(directory, "service.json"))


def send(conn, value):
    data = json.dumps(value).encode()
    conn.sendall(struct.pack(">I", len(data)) + data)


def recv(conn):
    header = b""
    while len(header) < 4:
        chunk = conn.recv(4 - len(header))
        if not chunk:
            return None
        header += chunk
    (size,) = struct.unpack(">I", header)
    payload = b""
    while len(payload) < size:
        chunk = conn.recv(size - len(payload))
        if not chunk:
            return None
        payload += chunk
    return json.loads(payload)


def serve(conn):
    if fault == "deadline-only":
        conn.settimeout(10.0)
    with conn:
        while True:
            try:
                envelope = recv(conn)
            except (socket.timeout, ValueError):
                return
            if envelope is None:
                return
            op = envelope.get("request", {}).get("op")
            if envelope.get("token") != token:
                send(conn, {"type": "error", "message": "authentication failed"})
                return
            if op == "own":
                send(conn, {"type": "owned"})
                continue
            if op == "ping":
                pong = {"type": "pong", "instance_id": instance, "pid": os.getpid(), "protocol": 8, "features": features}
                if fault == "missing-member":
                    del pong["features"]
                send(conn, pong)
                return
            if op == "subscribe":
                with open(os.environ["FAKE_ATTACHED"]) as f:
                    send(conn, json.load(f))
                events = [{"type": "controller_changed", "attachment_id": "A", "generation": 1},
                          {"type": "title_changed", "title": "t"}]
                if fault == "swapped-events":
                    events.reverse()
                for event in events:
                    send(conn, event)
                recv(conn)
                return
            if op == "get":
                wording = "no process %s" if fault == "reworded" else "process %s not found"
                send(conn, {"type": "error", "message": wording % envelope["request"].get("id")})
                return
            wording = "unknown request: %s" if fault == "changed-fixed" else "unsupported request: %s"
            send(conn, {"type": "error", "message": wording % op})
            return


while True:
    connection, _ = listener.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
