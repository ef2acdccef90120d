#!/usr/bin/env bash
# Lint proto/ with buf and check it against the released schema; installs the buf CLI (a
# pinned version) from the npm registry on first use.
#   tools/buflint.sh            lint, format check, and `buf breaking` against the release
#   tools/buflint.sh --release  write the current schema as the release image (make release-schema)
set -euo pipefail
cd "$(dirname "$0")/.."
BUF_VERSION=1.75.0
BUF_DIR=tools/.buf
BUF="$BUF_DIR/node_modules/.bin/buf"
RELEASE=proto/releases/medina-v1.binpb
if [ ! -x "$BUF" ] || ! "$BUF" --version | grep -qx "$BUF_VERSION"; then
  mkdir -p "$BUF_DIR"
  npm install --silent --no-audit --no-fund --prefix "$BUF_DIR" "@bufbuild/buf@$BUF_VERSION" >/dev/null
fi
if [ "${1:-}" = "--release" ]; then
  "$BUF" build proto -o "$RELEASE"
  echo "wrote $RELEASE: later schema changes must stay compatible with it"
  exit 0
fi
"$BUF" lint proto
"$BUF" format --diff --exit-code proto
# Protocol 1.0 is released: no change may break a bot built against it.
"$BUF" breaking proto --against "$RELEASE"
echo "buf lint and breaking: ok"
