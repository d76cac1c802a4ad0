/* The fan-out ceiling for bench/livequery.py: the least a server can do to deliver one event to every
 * subscriber over loopback TCP on this machine. One thread, epoll, TCP_NODELAY, as roost's socket hub; no
 * matching, no JSON: once COUNT clients have upgraded and sent anything, it sends ROUNDS events at RATE a
 * second, each a text frame of about the size of roost's `create` event carrying "k", to every client in turn.
 * Writes each round's start (CLOCK_MONOTONIC seconds, as lqclient's arrivals) to OUTFILE.
 *
 * Usage: lqceiling PORT COUNT RATE ROUNDS OUTFILE */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sendAll(int fd, const char *data, size_t length)
{
    while (length > 0) {
        ssize_t wrote = send(fd, data, length, MSG_NOSIGNAL);
        if (wrote < 0 && errno == EAGAIN) continue;  /* a ceiling: spin rather than queue */
        if (wrote <= 0) { perror("lqceiling: send"); exit(1); }
        data += wrote;
        length -= (size_t)wrote;
    }
}

/* An unmasked server text frame. */
static size_t frame(char *out, const char *payload, size_t length)
{
    size_t head = 0;
    out[head++] = (char)0x81;
    if (length < 126) {
        out[head++] = (char)length;
    } else {
        out[head++] = 126;
        out[head++] = (char)(length >> 8);
        out[head++] = (char)(length & 0xff);
    }
    memcpy(out + head, payload, length);
    return head + length;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: lqceiling PORT COUNT RATE ROUNDS OUTFILE\n");
        return 2;
    }
    int port = atoi(argv[1]), count = atoi(argv[2]), rounds = atoi(argv[4]);
    double rate = atof(argv[3]);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4096) != 0) {
        perror("lqceiling: listen");
        return 1;
    }
    int *fds = calloc((size_t)count, sizeof *fds), *stage = calloc((size_t)count, sizeof *stage);
    int epoll = epoll_create1(0), accepted = 0, subscribed = 0;
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    static const char upgraded[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                   "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
    char buffer[16384], message[1024], out[1100];
    size_t length = frame(out, "{\"op\":\"subscribed\",\"requestId\":1}", 34);
    printf("listening\n");
    fflush(stdout);
    while (subscribed < count) {
        struct epoll_event ready[64];
        int n = epoll_wait(epoll, ready, 64, 60000);
        if (n <= 0) { fprintf(stderr, "lqceiling: %d of %d clients after 60 s\n", subscribed, count); return 1; }
        for (int e = 0; e < n; e++) {
            if (ready[e].data.u32 == UINT32_MAX) {
                int fd = accept(listener, NULL, NULL);
                if (fd < 0 || accepted == count) { if (fd >= 0) close(fd); continue; }
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fds[accepted] = fd;
                struct epoll_event in = {.events = EPOLLIN, .data.u32 = (uint32_t)accepted++};
                epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &in);
                continue;
            }
            int i = (int)ready[e].data.u32;
            ssize_t got = recv(fds[i], buffer, sizeof buffer, 0);
            if (got <= 0) { fprintf(stderr, "lqceiling: a client left during setup\n"); return 1; }
            if (stage[i] == 0) {  /* the upgrade request (sent whole by lqclient) */
                sendAll(fds[i], upgraded, sizeof upgraded - 1);
                stage[i] = 1;
            } else if (stage[i] == 1) {  /* connect + subscribe */
                sendAll(fds[i], out, length);
                stage[i] = 2;
                subscribed++;
            }
        }
    }
    double *starts = calloc((size_t)rounds, sizeof *starts);
    double begin = now() + 0.5;
    for (int k = 0; k < rounds; k++) {
        double moment = begin + k / rate;
        double wait = moment - now();
        if (wait > 0) usleep((useconds_t)(wait * 1e6));
        starts[k] = now();
        int size = snprintf(message, sizeof message,
            "{\"clientId\":\"0f5e3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6\",\"object\":{\"ACL\":{\"*\":{\"read\":true}},"
            "\"className\":\"Item\",\"createdAt\":\"2026-11-26T10:00:00.000Z\",\"k\":%d,\"objectId\":\"AbCdEfGhIj\","
            "\"room\":\"bench\",\"title\":\"live\",\"updatedAt\":\"2026-11-26T10:00:00.000Z\"},\"op\":\"create\",\"requestId\":1}", k);
        for (int i = 0; i < count; i++) sendAll(fds[i], out, frame(out, message, (size_t)size));
    }
    FILE *file = fopen(argv[5], "wb");
    fwrite(starts, sizeof *starts, (size_t)rounds, file);
    fclose(file);
    usleep(500000);
    return 0;
}
