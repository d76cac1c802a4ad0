/* The HTTP ceiling for the benchmark: libmicrohttpd, configured as roost configures it,
 * answering every request with a fixed small JSON body. Usage: ceiling PORT THREADS */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char body[] =
    "{\"objectId\":\"AbCdEfGhIj\",\"title\":\"hello\",\"n\":42,\"done\":false,"
    "\"createdAt\":\"2026-11-23T10:00:00.000Z\",\"updatedAt\":\"2026-11-23T10:00:00.000Z\"}";

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state)
{
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*state == NULL) { *state = (void *)1; return MHD_YES; }
    if (*upload_data_size > 0) { *upload_data_size = 0; return MHD_YES; }
    struct MHD_Response *response = MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(response, "Content-Type", "application/json; charset=utf-8");
    enum MHD_Result result = MHD_queue_response(connection, 200, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv)
{
    unsigned short port = argc > 1 ? (unsigned short)atoi(argv[1]) : 8090;
    unsigned int threads = argc > 2 ? (unsigned int)atoi(argv[2]) : 4;
    sigset_t signals;
    int received;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &signals, NULL); /* before the threads start, so only sigwait sees them */
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO, port, NULL, NULL, answer, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT, 30U, MHD_OPTION_END);
    if (daemon == NULL) { fprintf(stderr, "cannot start on port %u\n", port); return 1; }
    printf("ceiling listening on %u\n", port);
    fflush(stdout);
    sigwait(&signals, &received);
    MHD_stop_daemon(daemon);
    return 0;
}
