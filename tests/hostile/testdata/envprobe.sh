#!/bin/sh
# A command tool that says whether it can see a variable of the ptcx
# process's environment that is not on any allowlist.
if [ -n "$PTCX_HOSTILE_SECRET" ]; then echo '"leaked"'; else echo '"clean"'; fi
