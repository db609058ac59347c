#!/usr/bin/env bash
# Checks that the release a user installs is named the same everywhere: the newest release in
# CHANGELOG.md, the version constant (Client.version, sent in the User-Agent), the install lines
# of the README and Getting Started, and the CHANGELOG's compare links. With --tagged, also that
# HEAD carries that version's git tag (run it after tagging, before pushing the tag).
# Usage: bash scripts/check-release.sh [--tagged]
set -euo pipefail
cd "$(dirname "$0")/.."
failures=0
fail() { echo "check-release: $*" >&2; failures=$((failures + 1)); }

newest=$(sed -n 's/^## \[\([0-9][0-9.]*\)\] - [0-9-]*$/\1/p' CHANGELOG.md | head -n 1)
[ -n "$newest" ] || { echo "check-release: CHANGELOG.md names no release (## [X.Y.Z] - YYYY-MM-DD)" >&2; exit 1; }
constant=$(sed -n 's/^let ternVersion = "\(.*\)"$/\1/p' Sources/Tern/Internal/Version.swift)
[ "$constant" = "$newest" ] || fail "ternVersion is \"$constant\", the newest release in CHANGELOG.md is $newest"
for doc in README.md Sources/Tern/Tern.docc/GettingStarted.md; do
    grep -q "from: \"$newest\"" "$doc" || fail "$doc does not install from: \"$newest\""
done
grep -q "^\[Unreleased\]: .*/compare/$newest\.\.\.HEAD$" CHANGELOG.md \
    || fail "CHANGELOG.md's [Unreleased] link does not compare from $newest"
grep -q "^\[$newest\]: .*/releases/tag/$newest$" CHANGELOG.md || fail "CHANGELOG.md has no link for [$newest]"
if git rev-parse -q --verify "refs/tags/$newest" >/dev/null; then
    tagged=$(git show "$newest:Sources/Tern/Internal/Version.swift" | sed -n 's/^let ternVersion = "\(.*\)"$/\1/p')
    [ "$tagged" = "$newest" ] || fail "tag $newest points at a tree whose ternVersion is \"$tagged\""
fi
if [ "${1:-}" = "--tagged" ]; then
    git tag --points-at HEAD | grep -qx "$newest" || fail "HEAD is not tagged $newest"
fi
[ "$failures" -eq 0 ] || exit 1
echo "check-release: $newest everywhere"
