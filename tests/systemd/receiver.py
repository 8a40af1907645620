"""The HTTP receiver of tests/systemd/test_units.py, run in the
container's network namespace: receiver.py ROOT PORT FAIL_WHILE.
Stores each PUT under ROOT (harness.Receiver); answers 500 while the
file FAIL_WHILE exists. Says 'listening' once it is."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import harness  # noqa: E402

rcv = harness.Receiver(sys.argv[1], fail_while=sys.argv[3],
                       port=int(sys.argv[2]))
print("listening on " + rcv.url, flush=True)
while True:
    time.sleep(3600)
