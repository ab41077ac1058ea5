#!/bin/sh
# A command tool that starts a grandchild in a session of its own (setsid),
# out of the tool's process group, records its PID in ./escaped.pid, and
# answers at once. The grandchild keeps the tool's stdout open.
setsid sh -c 'echo $$ >> escaped.pid; exec sleep 60' &
sleep 0.2
echo '"started"'
