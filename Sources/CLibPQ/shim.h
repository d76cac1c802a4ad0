#ifndef ROOST_CLIBPQ_SHIM_H
#define ROOST_CLIBPQ_SHIM_H

// libpq (Debian's libpq-dev), PostgreSQL's own client library: blocking calls that fit our request threads,
// one PGconn used by one thread at a time. See https://www.postgresql.org/docs/current/libpq.html
// Debian installs the header under /usr/include/postgresql, which pkg-config libpq names.
#include <libpq-fe.h>

#endif
