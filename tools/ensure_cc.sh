#!/usr/bin/env bash
# What setup.py needs to compile medina_envs._tensors: a C compiler and the headers of the
# Python it builds for. Installed with apt-get (Debian's gcc, python3-dev) when missing and
# this runs as root; otherwise a note, and the build goes on without its compiled tensors
# (medina_envs then uses its pure-Python join: same tensors, slower).
# Usage: tools/ensure_cc.sh PYTHON
set -euo pipefail
python=${1:-python3}
include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)
[ -f "$include/Python.h" ] || need+=(python3-dev)
[ ${#need[@]} -eq 0 ] && exit 0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
else
	echo "note: ${need[*]} missing (no apt-get as root here): medina_envs builds without its compiled tensors" >&2
fi
