#ifndef ROOST_CSQLITE_SHIM_H
#define ROOST_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a function-pointer macro Swift cannot import: SQLite copies the bound bytes.
static inline int roost_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length)
{
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

#endif
