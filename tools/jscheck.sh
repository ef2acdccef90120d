#!/usr/bin/env bash
# Type-check the viewer's JavaScript (server/medina/web/static) with `tsc --checkJs`
# (tools/jscheck/tsconfig.json); installs the TypeScript its lock pins from the npm registry
# on first use, as tools/buflint.sh installs buf.
set -euo pipefail
cd "$(dirname "$0")/jscheck"
TSC=node_modules/.bin/tsc
WANT=$(sed -n 's/.*"typescript": "\(.*\)".*/\1/p' package.json)
if [ ! -x "$TSC" ] || ! "$TSC" --version | grep -qx "Version $WANT"; then
  npm ci --silent --no-audit --no-fund >/dev/null
fi
"$TSC" -p tsconfig.json
echo "tsc --checkJs (server/medina/web/static): ok"
