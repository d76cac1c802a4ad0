import CMicroHTTPD

/// Names the calling thread for `top -H`, `perf` and `/proc/<pid>/task/*/comm` (at most 15 bytes).
///
/// Not through Foundation: `Thread.current.name = …` names the OS thread only when the starting
/// thread has already recorded the new thread's id, so a thread that ran before that kept the
/// process's name (seen under load: the writer and the acceptor both still called "roost").
func nameCurrentThread(_ name: String) {
    _ = roost_name_current_thread(name)
}
