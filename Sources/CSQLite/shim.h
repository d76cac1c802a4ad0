#ifndef ROOST_CSQLITE_SHIM_H
#define ROOST_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <sys/syscall.h>
#include <unistd.h>

/// SQLITE_TRANSIENT is a function-pointer macro Swift cannot import: SQLite copies the bound bytes.
static inline int roost_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length)
{
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/// The same for a function's text result: SQLite copies it.
static inline void roost_sqlite3_result_text(sqlite3_context *context, const char *text, int length)
{
    sqlite3_result_text(context, text, length, SQLITE_TRANSIENT);
}

/// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's allocation statistics:
/// with them on, every sqlite3_malloc of every connection takes one process-wide mutex.
/// Only works before SQLite initializes (returns SQLITE_MISUSE after).
static inline int roost_sqlite3_disable_memory_statistics(void)
{
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// Starts writing a file's dirty pages to disk without waiting for them (Linux's sync_file_range with
/// SYNC_FILE_RANGE_WRITE, which needs _GNU_SOURCE and so is not in Swift's Glibc): the checkpointer
/// sends the WAL out in small steps, so the sync SQLite does before each checkpoint finds little left.
/// Durability never rests on it (SQLite still syncs). Returns -1 with errno set on failure.
static inline int roost_start_writeback(int descriptor)
{
    return (int)syscall(SYS_sync_file_range, descriptor, 0L, 0L, 2U /* SYNC_FILE_RANGE_WRITE */);
}

#endif
