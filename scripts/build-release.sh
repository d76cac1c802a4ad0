#!/usr/bin/env bash
# Builds in release mode, with the Swift runtime and Foundation linked into the binary (`--static-swift-stdlib`): the
# server is one file that runs on any Debian machine with the C libraries of scripts/install-deps.sh, and it starts
# smaller. Measured (session 17, bench workloads on 10,000 objects): peak RSS 48.1 MB with the shared Swift libraries,
# 42.8 MB static, 40.5 MB static and linked by lld with packed relative relocations (the position-independent
# binary's 2 MB relocation table, read once at start and kept resident, becomes 16 KB; ASLR stays). Instructions per
# request are the same (bench/instructions.sh). Extra arguments go to `swift build` (`--product roost`, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release --static-swift-stdlib)
# lld ships with swift.org's toolchains; an older one without it links with its default linker.
if [ -x "$(dirname "$(readlink -f "$(command -v swift)")")/ld.lld" ]; then
    flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
fi
exec swift build "${flags[@]}" "$@"
