#!/usr/bin/env bash
# The checks that need no servers: formatting (swift-format, which ships with the Swift 6
# toolchain, with the repository's .swift-format) and APIs above the declared minimums.
# `--fix` reformats the tree in place first.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift-format >/dev/null || { echo "error: swift-format not found (it ships with Swift 6 toolchains)" >&2; exit 1; }
if [ "${1:-}" = --fix ]; then swift-format format --in-place --recursive Sources Tests Package.swift; fi
echo "== swift-format lint --strict"
swift-format lint --strict --recursive Sources Tests Package.swift
bash scripts/check-availability.sh
