#!/usr/bin/env bash
# Installs Debian's chromium for the viewer's browser tests (crates/hydraulink-viewer/tests/),
# only when /usr/bin/chromium is missing. Idempotent; needs root (as on CI and the dev machines).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium
