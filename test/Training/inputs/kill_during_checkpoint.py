"""Runs a command with XLNETC_FAULT_PAUSE_CHECKPOINT_WRITE set, waits until it
reports that it is halfway through writing a checkpoint's temporary file,
and kills it with SIGKILL (kill -9). Exits 0 when that happened, 1 otherwise.

  kill_during_checkpoint.py CMD ARGS...
"""
import os
import signal
import subprocess
import sys

env = dict(os.environ, XLNETC_FAULT_PAUSE_CHECKPOINT_WRITE="60")
proc = subprocess.Popen(sys.argv[1:], env=env, stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, text=True)
for line in proc.stderr:
    if "fault injection: pausing while writing" in line:
        temp = line.rsplit(" ", 1)[-1].strip()
        if not os.path.exists(temp):
            print(f"the temporary file {temp} does not exist")
            proc.kill()
            sys.exit(1)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        print(f"killed with SIGKILL while writing {os.path.basename(temp)} "
              f"({os.path.getsize(temp)} bytes written)")
        sys.exit(0)
proc.wait()
print(f"the command ended (exit {proc.returncode}) without pausing in a checkpoint write")
sys.exit(1)
