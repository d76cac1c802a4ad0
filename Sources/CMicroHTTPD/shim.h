#ifndef ROOST_CMICROHTTPD_SHIM_H
#define ROOST_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// Called by MHD with the raw request URI (path + query, still percent-encoded) before
/// anything else; its return value becomes the request's `*con_cls`.
typedef void *(*roost_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// MHD_start_daemon is variadic, which Swift cannot call: this wrapper passes a fixed option list.
/// `host` is a numeric IPv4 or IPv6 address; returns NULL if it does not parse or the bind fails.
/// See https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dinit.html
static inline struct MHD_Daemon *roost_mhd_start(
    const char *host, uint16_t port, unsigned int thread_pool_size, unsigned int connection_timeout,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    roost_uri_log_callback uri_logger, void *uri_logger_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls)
{
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *address;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        address = (const struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        address = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        return NULL;
    }
    return MHD_start_daemon(
        flags, port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
        MHD_OPTION_URI_LOG_CALLBACK, uri_logger, uri_logger_cls,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024U,
        MHD_OPTION_END);
}

/// The port the daemon is bound to (useful after asking for port 0).
static inline uint16_t roost_mhd_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
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

#endif
