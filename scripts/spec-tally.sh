#!/bin/sh
# Counts the Parse Server spec cases carried into our tests, per spec file.
# Convention (Tests/**/*.swift): a line `// spec: <file>.spec.js: <case name>` names a case whose test asserts
# what Parse Server asserts; `// spec-differs: <file>.spec.js: <case name> -- <why>` names one whose test
# asserts our deliberate difference. Usage: scripts/spec-tally.sh [directory, default Tests]
set -eu
root="${1:-$(dirname "$0")/../Tests}"
printf '%-32s %7s %7s %7s\n' "spec file" carried same differs
grep -rhoE '// spec(-differs)?: [A-Za-z.]+\.spec\.js' "$root" --include='*.swift' |
  awk '{ kind = ($2 == "spec-differs:") ? "differs" : "same"; n[$3]++; k[$3, kind]++ }
       END { for (f in n) printf "%-32s %7d %7d %7d\n", f, n[f], k[f, "same"], k[f, "differs"] }' | sort
grep -rhoE '// spec(-differs)?: [A-Za-z.]+\.spec\.js' "$root" --include='*.swift' |
  awk '{ t++; if ($2 == "spec-differs:") d++ } END { printf "%-32s %7d %7d %7d\n", "total", t, t - d, d }'
