#!/usr/bin/env bash
# A paced run with the browser connected (issue: "60 s paced run, under 0.1 % of steps overrun"):
# starts `hydraulink serve MODEL --play-signals`, opens the printed URL in Debian's headless
# chromium (which renders the page and receives the frames), waits SECONDS of wall time, reads
# the engine's statistics from the server's /state endpoint and prints them, then stops both.
#
#   scripts/paced_run.sh [MODEL] [SECONDS]      (defaults: models/excavator.toml, 60)
#
# Needs a release build (`cargo build --release`) and chromium (scripts/install_chromium.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-models/excavator.toml}"
seconds="${2:-60}"
bin=target/release/hydraulink
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
bash scripts/install_chromium.sh
tmp="$(mktemp -d)"
cleanup() {
    kill "${serve_pid:-}" "${chrome_pid:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp" 2>/dev/null || true
}
trap cleanup EXIT
"$bin" serve "$model" --play-signals >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
url=""
for _ in $(seq 1 100); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/serve.out" | head -n1 || true)"
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "serve printed no URL:" >&2; cat "$tmp/serve.err" >&2; exit 1; }
/usr/bin/chromium --headless --no-sandbox --disable-gpu --use-angle=swiftshader \
    --enable-unsafe-swiftshader --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$tmp/profile" \
    --remote-debugging-port=0 "$url" >/dev/null 2>"$tmp/chrome.err" &
chrome_pid=$!
start=$(date +%s)
sleep "$seconds"
state="$(python3 - "$url" <<'EOF'
import json, sys, urllib.request
print(json.dumps(json.load(urllib.request.urlopen(sys.argv[1] + "state"))["stats"]))
EOF
)"
echo "model $model, $seconds s of wall time with the page open (started $(date -u -d "@$start" +%H:%M:%S) UTC)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$state" <<'EOF'
import json, sys
s = json.loads(sys.argv[1])
steps, over = s["steps"], s["overruns"]
print(f"steps {steps}, overruns {over} ({100.0 * over / max(steps, 1):.3f} %), "
      f"real-time factor {s['rtf']}, compute per step mean {s['mean_us']} us, worst {s['max_us']} us, "
      f"worst lag {s['lag_max_us']} us, worst wake-up delay {s.get('wake_max_us')} us, "
      f"snapshots dropped {s['dropped']}, engine thread priority {s.get('priority')}")
EOF
# stop the server as Ctrl-C would: it prints its frames' size and the engine's summary
kill -INT "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
grep -E "^frames:|steps," "$tmp/serve.out" || true
