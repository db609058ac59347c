#!/usr/bin/env bash
# Lists calls of Foundation and Swift APIs that are newer than Tern's declared minimums (macOS
# 10.15, iOS 13, tvOS 13, watchOS 6) outside Sources/Tern/Internal/Compatibility.swift, the one
# file that may call them behind #available. Linux has them all, so a Linux build cannot catch
# these; this script catches the usual ones by name. Exits 1 when it finds any.
set -euo pipefail
cd "$(dirname "$0")/.."

# API (as it appears in a call)          introduced in
patterns=(
    'write\(contentsOf:'                 # FileHandle, macOS 10.15.4 / iOS 13.4
    'read\(upToCount:'                   # FileHandle, macOS 10.15.4 / iOS 13.4
    'readToEnd\(\)'                      # FileHandle, macOS 10.15.4 / iOS 13.4
    'seekToEnd\(\)'                      # FileHandle, macOS 10.15.4 / iOS 13.4
    'seek\(toOffset:'                    # FileHandle, macOS 10.15.4 / iOS 13.4
    'truncate\(atOffset:'                # FileHandle, macOS 10.15.4 / iOS 13.4
    '\.offset\(\)'                       # FileHandle, macOS 10.15.4 / iOS 13.4
    'URL\(filePath:'                     # macOS 13 / iOS 16
    '\.appending\(path:'                 # macOS 13 / iOS 16
    '\.appending\(component:'            # macOS 13 / iOS 16
    '\.path\(percentEncoded:'            # macOS 13 / iOS 16
    '\.formatted\('                      # macOS 12 / iOS 15
    'Task\.sleep\(for:'                  # macOS 13 / iOS 16
    'ContinuousClock|SuspendingClock'    # macOS 13 / iOS 16
    'import Synchronization'             # Mutex and atomics, macOS 15 / iOS 18
    'OSAllocatedUnfairLock'              # macOS 13 / iOS 16
    '\.data\((for|from):.*delegate:'      # URLSession's async data with a delegate, macOS 12 / iOS 15
    '\.(download|upload)\((for|from):'    # URLSession's async download and upload, macOS 12 / iOS 15
    '\.bytes\((for|from):'               # URLSession, macOS 12 / iOS 15
    'AttributedString'                   # macOS 12 / iOS 15
    'Regex<|#/|firstMatch\(of:|wholeMatch\(of:'  # Swift regex, macOS 13 / iOS 16
    'allowsJSON5|assumesTopLevelDictionary'  # JSONDecoder options, macOS 12 / iOS 15
    # A typed-throws closure handed to a standard-library `with…` function: the standard library
    # of Swift 6.0 (Xcode 16.0, the oldest toolchain Package.swift accepts) declares these
    # `rethrows`, so the typed error leaves them as `any Error` and the call does not compile there.
    '(^|[^A-Za-z])with(Unsafe|Contiguous|ExtendedLifetime|Checked|Task|ThrowingTask|DiscardingTask|ThrowingDiscardingTask)[A-Za-z]*(\([^)]*\))? *\{[^{]*throws\('
)
# Lines that carry their own guard say so: `// available:` followed by the reason.
found=0
for pattern in "${patterns[@]}"; do
    while IFS= read -r hit; do
        [ -z "$hit" ] && continue
        case "$hit" in
        Sources/Tern/Internal/Compatibility.swift:*) continue ;;
        *'// available:'*) continue ;;
        esac
        echo "$hit"
        found=1
    done < <(grep -rnE --include='*.swift' "$pattern" Sources Tests | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
done
if [ "$found" = 1 ]; then
    echo "error: the calls above need a newer OS than the declared minimums: go through Sources/Tern/Internal/Compatibility.swift" >&2
    echo "       (or guard them with #available and mark the line '// available: <the guard>')" >&2
    exit 1
fi
echo "== no API above the declared minimums outside Compatibility.swift"
