#!/usr/bin/env bash
# Lint proto/ with buf; installs the buf CLI from the npm registry on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
BUF_DIR=tools/.buf
BUF="$BUF_DIR/node_modules/.bin/buf"
if [ ! -x "$BUF" ]; then
  mkdir -p "$BUF_DIR"
  npm install --silent --no-audit --no-fund --prefix "$BUF_DIR" @bufbuild/buf@1 >/dev/null
fi
"$BUF" lint proto
"$BUF" format --diff --exit-code proto
echo "buf lint: ok"
