# Two writers on a daemon's control socket, with and without a third connection that sends nothing:
# acknowledged writes/s, alternating. Shows that an idle connection does not slow the control loop's turns
# (ControlServer's TurnGathering). Run by hand: python3 Benchmarks/scripts/idle_connection_gather.py BINARY
# (BINARY: a groupsync build, e.g. .build/release/groupsync). Uses a temporary home, removed at the end.
import socket, subprocess, sys, threading, time, os, tempfile, json, shutil
binary = sys.argv[1]
home = tempfile.mkdtemp(prefix="gs-idle-")
subprocess.run([binary, "--home", home, "init", "--name", "idle"], check=True, capture_output=True)
daemon = subprocess.Popen([binary, "--home", home, "serve", "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
path = home + "/control.sock"
for _ in range(200):
    if os.path.exists(path): break
    time.sleep(0.05)
time.sleep(0.3)
def connect():
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s
def rate(idle, seconds=3.0):
    idles = [connect() for _ in range(idle)]
    counts = [0, 0]; stop = time.time() + seconds
    def writer(n):
        s = connect(); f = s.makefile("rb"); i = 0
        while time.time() < stop:
            s.sendall(json.dumps({"command": "set", "suite": "s", "key": f"w{n}-{i}-{idle}", "type": "string", "value": "x" * 80}).encode() + b"\n")
            assert f.readline().startswith(b'{"ok":true'); counts[n] += 1; i += 1
        s.close()
    ts = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    [t.start() for t in ts]; [t.join() for t in ts]
    [s.close() for s in idles]
    return sum(counts) / seconds
for idle in (0, 1, 0, 1):
    print(f"idle connections {idle}: {rate(idle):,.0f} writes/s")
daemon.terminate(); daemon.wait()
shutil.rmtree(home, ignore_errors=True)
