"""Runs a training command, sends it SIGNAL once its metrics file has AFTER
step lines, and reports how it ended (interrupt.test).

  interrupt_train.py INT|TERM METRICS AFTER -- COMMAND...

Prints the command's stderr, then "exit N" (N its exit status, or -SIG when a
signal ended it). Gives up, killing it, after 300 s."""
import os
import signal
import subprocess
import sys
import time

sig = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[sys.argv[1]]
metrics, after = sys.argv[2], int(sys.argv[3])
command = sys.argv[sys.argv.index("--") + 1:]
proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 300
sent = False
while proc.poll() is None and time.time() < deadline:
    if not sent and os.path.exists(metrics):
        with open(metrics) as f:
            if sum(1 for line in f if line.strip()) >= after:
                proc.send_signal(sig)
                sent = True
    time.sleep(0.01)
if proc.poll() is None:
    proc.kill()
err = proc.stderr.read()
proc.wait()
sys.stdout.write(err)
print("signal sent" if sent else "signal not sent")
print(f"exit {proc.returncode}")
