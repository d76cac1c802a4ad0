import CMicroHTTPD
import Glibc

/// Bounds glibc's malloc arenas to one per CPU (at least two), unless `MALLOC_ARENA_MAX` says otherwise.
///
/// glibc gives each new thread that finds the arenas busy an arena of its own, up to eight per CPU, and an arena keeps
/// the memory it freed. Roost's HTTP threads, writer and helpers took about a dozen on two CPUs: over three rounds of
/// the benchmark's workloads peak RSS 36.3 MB, 32.5 MB with two arenas, creates and gets per second alike (alternating
/// runs, session 35). Small allocations rarely reach an arena's lock at all: glibc's per-thread cache serves them.
func boundMallocArenas(environment: [String: String]) {
    guard environment["MALLOC_ARENA_MAX"] == nil else { return }
    let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    _ = roost_set_malloc_arena_max(Int32(max(2, min(cpus, 64))))
}
