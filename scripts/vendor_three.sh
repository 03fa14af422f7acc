#!/usr/bin/env bash
# Re-vendors three.js for the browser viewer from the npm registry, pinned by version and checked by the
# registry's sha512 integrity. Run by hand when the pin changes; builds and tests never run it (the files it
# writes are committed, so `cargo build` needs no network and no npm).
set -euo pipefail
VERSION=0.187.0
INTEGRITY='sha512-Qiu7R+Cmh8CstZsY1uJOSWnVlfo7ZtNLV7mF8Jltk3LB3AtDu9cRZlcnRKkAk8Y4z6KKw35z7Y7Urd7jWY8etA=='
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/crates/hydraulink-viewer/assets/vendor/three"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
npm pack --loglevel=error "three@$VERSION" >/dev/null
TGZ="three-$VERSION.tgz"
GOT="sha512-$(openssl dgst -sha512 -binary "$TGZ" | base64 -w0)"
if [ "$GOT" != "$INTEGRITY" ]; then
  echo "integrity mismatch for $TGZ: $GOT" >&2
  exit 1
fi
tar xzf "$TGZ"
rm -rf "$DEST"
mkdir -p "$DEST/build" "$DEST/examples/jsm/controls"
cp package/LICENSE "$DEST/LICENSE"
cp package/build/three.module.js package/build/three.core.js "$DEST/build/"
cp package/examples/jsm/controls/OrbitControls.js "$DEST/examples/jsm/controls/"
cat > "$DEST/VERSION" <<TXT
three $VERSION (MIT licence, see LICENSE), from the npm registry:
https://registry.npmjs.org/three/-/three-$VERSION.tgz
integrity $INTEGRITY
files: build/three.module.js, build/three.core.js, examples/jsm/controls/OrbitControls.js (unmodified)
written by scripts/vendor_three.sh
TXT
echo "vendored three $VERSION into $DEST"
