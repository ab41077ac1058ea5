#!/usr/bin/env bash
# test-clients.sh runs the tests of the clients of `ptcx serve` in clients/
# against a real server, the binary bin/ptcx (`make build`; PTCX_BIN names
# another): the Python client's unittest suite (clients/python/tests, which
# starts the server on a loopback port of its choosing, with two tenants,
# and runs clients/python/example.py), after checking its annotations with
# mypy --strict. It installs Debian's python3 and mypy when the machine has
# none; the client and its tests need nothing else.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PTCX_BIN=${PTCX_BIN:-$root/bin/ptcx}
if ! [ -x "$PTCX_BIN" ]; then
	echo "test-clients: $PTCX_BIN is missing: run make build" >&2
	exit 1
fi
missing=""
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
command -v mypy >/dev/null 2>&1 || missing="$missing mypy"
if [ -n "$missing" ]; then
	echo "test-clients: installing Debian's$missing" >&2
	if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
	$sudo apt-get update -qq
	# shellcheck disable=SC2086 # the list of packages
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
cd "$root/clients/python"
echo "test-clients: clients/python: $(mypy --version) --strict"
mypy --strict --python-version 3.11 --cache-dir "$root/.tools/mypy-cache" ptcx_client example.py tests
echo "test-clients: clients/python with $(python3 --version) against ${PTCX_BIN#"$root"/}"
PYTHONDONTWRITEBYTECODE=1 timeout 600 python3 -m unittest discover -s tests
