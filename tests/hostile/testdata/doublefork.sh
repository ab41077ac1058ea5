#!/bin/sh
# A command tool whose grandchild is orphaned by a double fork (its parent
# exits at once, so it is re-parented away from the tool), records its PID
# in ./escaped.pid and answers at once. Its output goes to /dev/null.
( sh -c 'echo $$ >> escaped.pid; exec sleep 60' </dev/null >/dev/null 2>&1 & ) 
sleep 0.2
echo '"started"'
