#ifndef ROOST_CMICROHTTPD_SHIM_H
#define ROOST_CMICROHTTPD_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <unistd.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// glibc's `mallopt(M_ARENA_MAX, arenas)`: M_ARENA_MAX is a macro Swift does not import.
static inline int roost_set_malloc_arena_max(int arenas)
{
    return mallopt(M_ARENA_MAX, arenas);
}

/// Names the calling thread (at most 15 bytes are kept). prctl is variadic, which Swift cannot call.
static inline int roost_name_current_thread(const char *name)
{
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/// Called by MHD with the raw request URI (path + query, still percent-encoded) before
/// anything else; its return value becomes the request's `*con_cls`.
typedef void *(*roost_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// A listening TCP socket on `host` (a numeric IPv4 or IPv6 address) and `port` (0 picks a free
/// one); -1 when the address does not parse or cannot be bound.
static inline int roost_listen(const char *host, uint16_t port, int backlog)
{
    struct sockaddr_storage storage;
    socklen_t length;
    memset(&storage, 0, sizeof storage);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        length = sizeof *v6;
    } else {
        return -1;
    }
    int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (storage.ss_family == AF_INET6) {
        // `::` takes IPv4 too (dual-stack; IPv4 peers show as ::ffff:a.b.c.d); a given IPv6 address, only itself.
        int v6only = IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr) ? 0 : 1;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
    }
    if (bind(fd, (const struct sockaddr *)&storage, length) != 0 || listen(fd, backlog) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/// The port a listening socket is bound to (the real one after asking for port 0).
static inline uint16_t roost_bound_port(int fd)
{
    struct sockaddr_storage storage;
    socklen_t length = sizeof storage;
    if (getsockname(fd, (struct sockaddr *)&storage, &length) != 0) return 0;
    if (storage.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&storage)->sin_port);
    if (storage.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&storage)->sin6_port);
    return 0;
}

/// A CPU mask for the raw sched_getaffinity/sched_setaffinity system calls. glibc's cpu_set_t and
/// its wrappers need _GNU_SOURCE, which a module header must not define: it changes system types
/// (fd_set) that other modules share, and a clean build then fails.
typedef struct { unsigned long bits[1024 / (8 * sizeof(unsigned long))]; } roost_cpu_mask;
#define ROOST_MASK_WORD_BITS (8 * sizeof(unsigned long))

/// The calling thread's CPUs (pid 0 is the calling thread for these system calls).
static inline int roost_get_affinity(roost_cpu_mask *mask)
{
    memset(mask, 0, sizeof *mask);
    return syscall(SYS_sched_getaffinity, 0, sizeof *mask, mask) < 0 ? -1 : 0;
}

static inline int roost_set_affinity(const roost_cpu_mask *mask)
{
    return syscall(SYS_sched_setaffinity, 0, sizeof *mask, mask) == 0 ? 0 : -1;
}

/// The `index`-th CPU (modulo their count) the calling thread may run on, or -1 when it may run on only one.
static inline int roost_allowed_cpu(unsigned int index)
{
    roost_cpu_mask allowed;
    if (roost_get_affinity(&allowed) != 0) return -1;
    int cpus[1024];
    int count = 0;
    for (int cpu = 0; cpu < 1024; cpu++) {
        if ((allowed.bits[cpu / ROOST_MASK_WORD_BITS] >> (cpu % ROOST_MASK_WORD_BITS)) & 1UL) cpus[count++] = cpu;
    }
    return count < 2 ? -1 : cpus[index % (unsigned int)count];
}

/// Each connection's memory pool (MHD's default is 32 KB). It holds the request line and headers (one
/// 64-byte record per header) and the answer's headers. libmicrohttpd 0.9.75 zeroes the whole pool
/// before each request of a kept-alive connection (`MHD_pool_reset`): a pool of 256 KB cost every get
/// a 256 KB memset and kept 256 KB resident per connection (measured with wrk, 16 connections: gets
/// 27–28k/s at 256 KB, 31–37k/s at 64 KB, 34–37k/s at 32 KB; callgrind: 504k → 208k instructions per get;
/// peak RSS 3 MB lower). 64 KB, not 32: at 32 KB a request with a 16 KB Cookie (within Node's 16 KB of
/// headers, which Parse Server takes) was closed unanswered; at 64 KB headers up to 32 KB are served, and
/// more get MHD's 431. It fits because MHD parses no query parameters (`roost_mhd_skip_query_parameters`):
/// the server reads the target it copied itself.
#define ROOST_CONNECTION_MEMORY (64 * 1024)

/// Ends the request target libmicrohttpd keeps just after its `?`, so that MHD parses no query
/// parameters: it would keep one 64-byte record per parameter in the connection's pool, and 0.9.75
/// never answers a request whose parameters overflow it (490 short ones did at 32 KB: the client
/// waited for the connection's timeout). Called from the URI log callback, which MHD 0.9.75 calls
/// after finding the `?` and before parsing what follows it; the callback has copied the whole
/// target by then. Writes to MHD's own (writable) read buffer, which the callback is handed as const.
static inline void roost_mhd_skip_query_parameters(const char *uri)
{
    char *query = strchr((char *)uri, '?');
    if (query != NULL && query[1] != '\0') query[1] = '\0';
}

/// The connection's socket (-1 when unknown). MHD_get_connection_info is variadic.
static inline int roost_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// Answers 431 straight on the connection's socket and shuts it down, for a request target over the
/// server's limits (`HTTPServer.acceptsTarget`). Called before MHD parses the query, while it has
/// written nothing on the connection. MHD closes the shut-down socket when it next reads it (at the latest
/// at its connection timeout); the access handler answers nothing more for such a request.
static inline void roost_mhd_refuse_uri(struct MHD_Connection *connection)
{
    static const char reply[] =
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        "Content-Length: 33\r\n"
        "\r\n"
        "{\"error\":\"request URI too large\"}";
    int fd = roost_mhd_connection_fd(connection);
    if (fd < 0) return;
    (void)send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL);
    shutdown(fd, SHUT_RDWR);
}

/// One daemon with one internal thread (epoll) and no listening socket of its own: connections
/// reach it through `MHD_add_connection` from the server's acceptor thread. MHD_start_daemon is
/// variadic, which Swift cannot call.
/// See https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dinit.html
///
/// `connection_limit` must stay above what the acceptor can ever hand one daemon: libmicrohttpd
/// 0.9.75 (Debian 12's) leaves a mutex locked when an added connection meets the daemon's limit
/// (`new_connection_process_`, fixed upstream after 0.9.76), and the daemon thread deadlocks.
///
/// With `cpu` >= 0 the daemon's thread runs on that CPU only: it inherits the affinity of the
/// thread that creates it, so the caller's is narrowed for the call and then restored.
static inline struct MHD_Daemon *roost_mhd_start_worker(
    unsigned int connection_timeout, unsigned int connection_limit, int cpu,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    roost_uri_log_callback uri_logger, void *uri_logger_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls)
{
    roost_cpu_mask saved;
    int pinned = 0;
    if (cpu >= 0 && cpu < 1024 && roost_get_affinity(&saved) == 0) {
        roost_cpu_mask only;
        memset(&only, 0, sizeof only);
        only.bits[cpu / ROOST_MASK_WORD_BITS] = 1UL << (cpu % ROOST_MASK_WORD_BITS);
        pinned = roost_set_affinity(&only) == 0;
    }
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO
        | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)ROOST_CONNECTION_MEMORY,
        MHD_OPTION_URI_LOG_CALLBACK, uri_logger, uri_logger_cls,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
        MHD_OPTION_END);
    if (pinned) roost_set_affinity(&saved);  // Widening back to a mask it had cannot fail.
    return daemon;
}

/// accept(2) of a non-blocking, close-on-exec socket (accept4 needs _GNU_SOURCE, see roost_cpu_mask).
static inline int roost_accept_nonblocking(int listen_fd, struct sockaddr *address, socklen_t *length)
{
    int client = accept(listen_fd, address, length);
    if (client < 0) return client;
    fcntl(client, F_SETFD, FD_CLOEXEC);
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
    return client;
}

/// The peer's address as libmicrohttpd keeps it (NULL when unknown).
static inline const struct sockaddr *roost_mhd_client_sockaddr(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// What the connection-notify callback stored for the connection (NULL when nothing).
static inline void *roost_mhd_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// The peer's numeric IP address into `buffer` (empty when unknown). MHD_get_connection_info is variadic.
static inline void roost_mhd_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size)
{
    buffer[0] = '\0';
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
    }
}

/// A response holding a copy of `size` bytes at `data` (the Swift buffer may go away at once).
static inline struct MHD_Response *roost_mhd_copied_response(size_t size, const void *data)
{
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}

/// Hands an upgraded connection back to libmicrohttpd, which closes its socket on the daemon's thread
/// (and then reports the connection closed). MHD_upgrade_action is variadic.
static inline enum MHD_Result roost_mhd_upgrade_close(struct MHD_UpgradeResponseHandle *urh)
{
    return MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/// epoll for the upgraded (WebSocket) sockets. struct epoll_event is packed on x86-64, which Swift
/// should not be trusted to lay out: these wrappers take and give plain values.
static inline int roost_epoll_control(int epoll_fd, int operation, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epoll_fd, operation, fd, &event);
}

/// Waits up to `timeout_ms` for at most `capacity` events; fills `data` and `events` and returns how many (-1: errno).
static inline int roost_epoll_wait(int epoll_fd, uint64_t *data, uint32_t *events, int capacity, int timeout_ms)
{
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll_fd, ready, capacity, timeout_ms);
    for (int index = 0; index < count; index++) {
        data[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

#endif
