#!/usr/bin/env bash
# openapi-lint.sh lints serve/openapi.yaml with the pinned Redocly CLI under
# its recommended rules (scripts/openapi-lint/redocly.yaml) and fails on any
# error or warning: the document is what the clients are generated from, and
# its operationIds are their method names.
#
# The version is pinned in scripts/openapi-lint/package.json; its
# package-lock.json carries the tarball's integrity hash, which `npm ci`
# verifies. It is installed into .tools/openapi-lint, and the install is
# skipped when that already holds exactly what the two files describe. The
# lint itself touches no network (telemetry off).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src="$root/scripts/openapi-lint"
dst="$root/.tools/openapi-lint"
cli="$dst/node_modules/@redocly/cli/bin/cli.js"

stamp_of() { cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1; }
want_stamp=$(stamp_of)
if ! [ -f "$dst/.stamp" ] || [ "$(cat "$dst/.stamp")" != "$want_stamp" ] || ! [ -f "$cli" ]; then
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		echo "openapi-lint: node and npm are missing; installing Debian's nodejs and npm" >&2
		if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
		$sudo apt-get update -qq
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
	echo "openapi-lint: installing @redocly/cli into ${dst#"$root"/}" >&2
	rm -rf "$dst"
	mkdir -p "$dst"
	cp "$src/package.json" "$src/package-lock.json" "$dst/"
	(cd "$dst" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
	echo "$want_stamp" >"$dst/.stamp"
fi

# --max-problems 1000: list every problem, not the first 100.
status=0
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_COLOR=1 \
	node "$cli" lint --config "$src/redocly.yaml" --max-problems 1000 --format stylish "$root/serve/openapi.yaml" >"$dst/report" 2>&1 || status=$?
# Redocly exits 0 with warnings: a warning fails here too.
if [ "$status" -ne 0 ] || grep -Eq '^[[:space:]]+[0-9]+:[0-9]+[[:space:]]+(error|warning)[[:space:]]|You have [0-9]+ warning' "$dst/report" || ! grep -q 'Your API description is valid' "$dst/report"; then
	cat "$dst/report" >&2
	echo "openapi-lint: serve/openapi.yaml has problems under Redocly's recommended rules (above)" >&2
	exit 1
fi
echo "openapi-lint: serve/openapi.yaml is clean under Redocly's recommended rules"
