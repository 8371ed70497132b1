# Recipes for humans; CI runs `.ci/run` directly and needs no just.

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list --unsorted

# Start a new daemon and play with it (the README's run command).
play name="playground":
    cargo run --release -- play --name {{name}}

# Run every test (`cargo test --workspace --locked`, as CI and the README do), ending with one total.
test:
    bash .ci/test

# Check formatting, then run clippy on every target with warnings denied.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets --locked -- -D warnings

# Run the CI script: install what is missing, lint, test.
ci:
    bash .ci/run

# Regenerate the protocol types (Rust, TypeScript, bundled schema) from schema/.
codegen:
    cargo run -p opencode-pty-codegen

# Fail if the committed generated files differ from what schema/ gives.
codegen-check:
    cargo run -p opencode-pty-codegen -- --check

# Type-check the TypeScript client.
ts-check:
    cd client-ts && npm ci --no-audit --no-fund && npm run check

# Run the TypeScript client's tests against a freshly built daemon (cargo test runs them too).
ts-test:
    cargo build -p opencode-pty
    cd client-ts && npm ci --no-audit --no-fund && OPENCODE_PTY_BIN=../target/debug/opencode-pty npm test

# `just conformance DAEMON=path [FILTER=text]` (or positionally); without DAEMON, our own daemon, built first,
# with every error message compared as recorded (`--strict-messages`).
# Replay the conformance transcripts against a daemon binary.
conformance DAEMON="" FILTER="":
    daemon=''; filter=''; strict=''; \
    for arg in '{{DAEMON}}' '{{FILTER}}'; do case "$arg" in DAEMON=*) daemon="${arg#DAEMON=}";; FILTER=*) filter="${arg#FILTER=}";; "") ;; *) if [ -z "$daemon" ] && [ "$arg" = '{{DAEMON}}' ]; then daemon="$arg"; else filter="$arg"; fi;; esac; done; \
    if [ -z "$daemon" ]; then cargo build -p opencode-pty; daemon=target/debug/opencode-pty; strict=--strict-messages; fi; \
    cargo run -p opencode-pty-conformance -- --daemon "$daemon" ${strict:+"$strict"} ${filter:+"$filter"}

# Cross-builds the daemon for aarch64-unknown-linux-gnu and runs it under qemu-user (packaging/emulate-aarch64.sh):
# the conformance suite, a PTY smoke test, its archive and npm package; `.ci/run` does the same. Needs Debian's
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user, and `rustup target add aarch64-unknown-linux-gnu`.
# The Linux arm64 build, tested under emulation.
test-arm64:
    cargo build --release --locked --target aarch64-unknown-linux-gnu -p opencode-pty
    OPENCODE_PTY_ARM64_DAEMON=target/aarch64-unknown-linux-gnu/release/opencode-pty cargo test --locked -p opencode-pty-conformance --test arm64 -- --nocapture

# Record transcripts again from their scripts (conformance/scripts) against our daemon; review the diff.
conformance-record FILTER="":
    cargo build -p opencode-pty
    cargo run -p opencode-pty-conformance -- record --daemon target/debug/opencode-pty {{FILTER}}

# Benchmark the libghostty-vt binding.
bench-vt:
    cargo bench -p opencode-pty-vt --bench vt

# Replay n seeded adversarial screens per class through a VT checkpoint and report how many match.
checkpoint-fidelity n="1000":
    cargo run --release -p opencode-pty-vt --example checkpoint_fidelity -- {{n}}

# The daemon's peak memory for unauthenticated frames of the largest size, against their own size.
bench-frames:
    cargo build --release -p opencode-pty --bins --examples
    cargo run --release -p opencode-pty --example measure_frames

# The largest terminals the limits allow against 80x24: create, snapshot, resize, read_rows, terminate.
bench-limits:
    cargo build --release -p opencode-pty --bins --examples
    cargo run --release -p opencode-pty --example measure_limits

# How long a daemon with n pipe processes takes from `shutdown` to its exit.
bench-stop n="1000":
    cargo build --release -p opencode-pty --bins --examples
    cargo run --release -p opencode-pty --example measure_stop -- {{n}}

# The replay ring's compression by blocks: a step's time, the memory of a full ring, reads against an uncompressed twin.
bench-replay:
    cargo run --release -p opencode-pty --example measure_replay

# Every case through a release daemon's socket against tmux and the limits; writes bench/results.json,
# BENCHMARKS.md and bench/charts/. `just bench QUICK=1`: a smoke run of under a minute with tiny sizes into a
# temporary directory (it asserts nothing about speed; `cargo test` runs it too).
# The benchmark harness of issue 14 (`QUICK=1`: a smoke run).
bench QUICK="":
    cargo build --release -p opencode-pty -p opencode-pty-bench
    case '{{QUICK}}' in ''|0|QUICK=|QUICK=0) quick='';; *) quick=--quick;; esac; \
    target/release/opencode-pty-bench $quick

# Targets: frame_decoder, request_decoder, registration, checkpoint (cargo-fuzz, libFuzzer), or ts-framer (the
# TypeScript client's framer loop). Needs cargo-fuzz (installed here when missing) and a nightly toolchain, or
# stable with RUSTC_BOOTSTRAP=1. New inputs go to fuzz/corpus/TARGET, crashes to fuzz/artifacts/TARGET; copy a
# crash to fuzz/regressions/TARGET once fixed. `checkpoint` runs without AddressSanitizer: under it the process
# grows by about 0.4 MB a run (libghostty's memory, not a leak: the same inputs in a plain build stay flat;
# HARDENING.md), reaching the RSS limit.
# Fuzz one target for SECONDS (default 600).
fuzz TARGET SECONDS="600":
    if [ '{{TARGET}}' = ts-framer ]; then cd client-ts && npm ci --no-audit --no-fund && npm run fuzz -- {{SECONDS}}; exit; fi; \
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked; \
    cargo run -q -p opencode-pty-hardening -- seed fuzz/seeds; \
    mkdir -p fuzz/corpus/{{TARGET}}; \
    if rustup toolchain list | grep -q '^nightly'; then toolchain=+nightly; else toolchain=; export RUSTC_BOOTSTRAP=1; fi; \
    sanitizer=; if [ '{{TARGET}}' = checkpoint ]; then sanitizer='--sanitizer none'; fi; \
    cd fuzz && cargo $toolchain fuzz run $sanitizer {{TARGET}} corpus/{{TARGET}} seeds/{{TARGET}} -- -max_total_time={{SECONDS}} -rss_limit_mb=4096

# 200 terminals x 4 MiB, slow and stalled readers, 1,000 cycles of each kind, 500 concurrent requests, the
# connection cap; `just load QUICK=1` is the short version the test command runs. Fails when a case fails.
# The load cases of issue 16 against a release daemon.
load QUICK="":
    cargo build --release -p opencode-pty -p opencode-pty-hardening
    case '{{QUICK}}' in ''|0|QUICK=|QUICK=0) quick='';; *) quick=--quick;; esac; \
    target/release/opencode-pty-hardening load $quick

# RSS and descriptors are sampled each minute into soak.csv and soak.svg; fails if either trends up. Beside
# them, in a daemon of their own, terminals that go quiet and wake up again (soak-quiet.csv, soak-quiet.svg);
# fails if RSS does not come back down after a quiet phase.
# The soak of issues 16 and 31: a dozen busy terminals for MINUTES (an hour by default).
soak MINUTES="60":
    cargo build --release -p opencode-pty -p opencode-pty-hardening
    target/release/opencode-pty-hardening soak {{MINUTES}}

# The release binary, libghostty-vt.so.0 beside it (found through $ORIGIN), LICENSE, NOTICE and the licence
# texts it names, and the shell completions (completions/) and man pages (man/) the binary generates.
# `TARGET=aarch64-unknown-linux-gnu` cross-builds the Linux arm64 archive (Debian's gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross, `rustup target add aarch64-unknown-linux-gnu`).
# The release archive target/dist/opencode-pty-<version>-<target>.tar.gz (x86_64 unless TARGET says).
dist TARGET="":
    target='{{TARGET}}'; target="${target#TARGET=}"; bash packaging/dist.sh ${target:+--target "$target"}

# Under PREFIX/share: the bash, zsh and fish completions and the man pages (`man opencode-pty`).
# Builds the archive and installs it under PREFIX (PREFIX/lib/opencode-pty, and PREFIX/bin/opencode-pty).
install PREFIX:
    archive="$(bash packaging/dist.sh | tail -n 1)"; work="$(mktemp -d)"; \
    tar -xzf "$archive" -C "$work"; bash "$work"/*/install.sh '{{PREFIX}}'; rm -rf "$work"

# The platform package opencode-pty-linux-x64 (or, with `TARGET=aarch64-unknown-linux-gnu`,
# opencode-pty-linux-arm64) is made from the release archive; nothing is left in client-ts/.
# The npm packages (the platform package and the client's tarball), in target/dist/.
npm-packages TARGET="":
    target='{{TARGET}}'; target="${target#TARGET=}"; bash packaging/release.sh ${target:+--target "$target"}

# `just release aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu` (or `TARGET=...` words) for several; without
# a target, this machine's x86_64-unknown-linux-gnu. The release's version is the workspace's (Cargo.toml), and
# client-ts/package.json must say the same (packaging/release.sh refuses otherwise).
# Everything a release publishes, in target/dist/: each platform's archive, its sha256 and npm package, and the client.
release *TARGETS:
    args=(); for target in {{TARGETS}}; do args+=(--target "${target#TARGET=}"); done; \
    bash packaging/release.sh "${args[@]}"
