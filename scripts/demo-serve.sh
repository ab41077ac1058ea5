#!/usr/bin/env bash
# demo-serve.sh is the serve section of `make demo`: it starts `ptcx serve` on
# loopback, runs one execution whose program calls a client-side tool (the
# client, here curl, answers it), then stops the server with SIGTERM, which
# drains and exits 0. Ids and times are replaced by … so the output is stable.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ptcx=${PTCX_DEMO_BIN:-$root/bin/ptcx} # as scripts/demo.sh
tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

key=demo-key
cat >"$tmp/serve.json" <<JSON
{
  "listen": "127.0.0.1:0",
  "workspace": "$tmp/work",
  "tenants": [
    {"name": "demo", "key_sha256": "$(printf %s "$key" | sha256sum | cut -d' ' -f1)", "mode": "ptc",
     "quotas": {"max_concurrent": 4, "max_pending": 4}}
  ]
}
JSON
mkdir -p "$tmp/work"

stable() { sed -E 's/ex_[0-9a-f]{24}/ex_…/g; s/"expires_at":"[^"]*"/"expires_at":"…"/g; s/"duration_ms":[0-9.e+-]+/"duration_ms":…/g; s/"compute_ms":[0-9.e+-]+/"compute_ms":…/g; s/"memory_bytes":[0-9]+/"memory_bytes":…/g'; }
post() {
  printf '\n$ curl -s -H "Authorization: Bearer $KEY" "http://$ADDR%s" -d %s\n' "$1" "'$2'" | stable
  curl -sS --max-time 30 -H "Authorization: Bearer $key" "http://$addr$1" -d "$2"
}

echo "== serve: a multi-tenant execution service; a program calls a tool the client executes."
printf '\n$ ptcx serve --config serve.json &\n'
"$ptcx" serve --config "$tmp/serve.json" 2>"$tmp/log" &
pid=$!
addr=""
for _ in $(seq 1 200); do
  addr=$(sed -nE 's/.*"msg":"serving","addr":"([^"]+)".*/\1/p' "$tmp/log" | head -n1)
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
  sleep 0.05
done
[ -n "$addr" ] || { echo "demo-serve: the server did not start within 10 s" >&2; cat "$tmp/log" >&2; exit 1; }

body='{"code": "const name = await tools.ask({q: \"Your name?\"}); return \"hello, \" + name", "client_tools": [{"name": "ask", "description": "Ask the user a question.", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]}'
out=$(post /v1/executions "$body")
echo "$out" | stable
id=$(echo "$out" | sed -nE 's/.*"id":"(ex_[0-9a-f]{24})","status".*/\1/p')
call=$(echo "$out" | sed -nE 's/.*"pending":\[\{"id":"([^"]+)".*/\1/p')
[ -n "$id" ] && [ -n "$call" ] || { echo "demo-serve: no pending call in $out" >&2; exit 1; }
post "/v1/executions/$id/tool_results" '{"results": [{"id": "'"$call"'", "ok": true, "value": "Ada"}]}' | stable

printf '\n$ kill -TERM %%1; wait %%1\n'
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=""
echo "(exit status $status after draining)"
[ "$status" -eq 0 ]
