/* LiveQuery load client for bench/livequery.py: opens COUNT WebSockets to roost, sends each `connect`
 * and one `subscribe`, then holds them (answering pings) until stdin closes. In C because one Python
 * process cannot read 100,000 frames a second on this 2-core machine without being the bottleneck.
 *
 * Usage: lqclient PORT COUNT PER_SOURCE MODE SUBSCRIBE_JSON OUTFILE
 *   PER_SOURCE: connections per source address (127.0.0.2, 127.0.0.3, ... so the per-IP limit holds)
 *   MODE: "record" writes one (k, arrival) pair per event to OUTFILE when stdin closes (k: the number in the
 *         event object's "k" field, arrival: CLOCK_MONOTONIC seconds, Python's time.monotonic()); "idle" only holds.
 * Prints "ready N" once N sockets are subscribed, and "done RECORDS DROPPED" at the end. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    int open;
    int state; /* 0: awaiting the 101, 1: awaiting subscribed, 2: subscribed, 3: dropped */
    size_t used;
    unsigned char buffer[8192];
} Conn;

typedef struct {
    double k;
    double at;
} Record;

static Record *records;
static size_t recordCount, recordCapacity;
static long dropped;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "lqclient: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* A masked client frame (RFC 6455 §5.3), the mask fixed: this is a benchmark, not a browser. */
static size_t frame(unsigned char *out, int opcode, const char *payload, size_t length)
{
    static const unsigned char mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t head = 0;
    out[head++] = (unsigned char)(0x80 | opcode);
    if (length < 126) {
        out[head++] = (unsigned char)(0x80 | length);
    } else {
        out[head++] = 0x80 | 126;
        out[head++] = (unsigned char)(length >> 8);
        out[head++] = (unsigned char)(length & 0xff);
    }
    memcpy(out + head, mask, 4);
    head += 4;
    for (size_t i = 0; i < length; i++) out[head + i] = (unsigned char)payload[i] ^ mask[i % 4];
    return head + length;
}

static void sendAll(int fd, const void *data, size_t length)
{
    const char *p = data;
    while (length > 0) {
        ssize_t wrote = send(fd, p, length, MSG_NOSIGNAL);
        if (wrote <= 0) die("send");
        p += wrote;
        length -= (size_t)wrote;
    }
}

static void record(const unsigned char *payload, size_t length, double at)
{
    const unsigned char *key = memmem(payload, length, "\"k\":", 4);
    if (key == NULL) return;
    double k = strtod((const char *)key + 4, NULL);
    if (recordCount == recordCapacity) {
        recordCapacity = recordCapacity ? recordCapacity * 2 : 1 << 20;
        records = realloc(records, recordCapacity * sizeof *records);
        if (records == NULL) die("realloc");
    }
    records[recordCount++] = (Record){k, at};
}

/* Handles the whole frames in the buffer: text frames are recorded, pings answered, a close ends it. */
static void frames(Conn *c, int recording, double at)
{
    size_t offset = 0;
    for (;;) {
        size_t left = c->used - offset;
        unsigned char *p = c->buffer + offset;
        if (left < 2) break;
        size_t length = p[1] & 0x7f, head = 2;
        if (length == 126) {
            if (left < 4) break;
            length = (size_t)p[2] << 8 | p[3];
            head = 4;
        } else if (length == 127) {
            if (left < 10) break;
            length = 0;
            for (int i = 0; i < 8; i++) length = length << 8 | p[2 + i];
            head = 10;
        }
        if (head + length > sizeof c->buffer) {
            fprintf(stderr, "lqclient: frame of %zu bytes is larger than the buffer\n", length);
            exit(1);
        }
        if (left < head + length) break;
        int opcode = p[0] & 0x0f;
        if (opcode == 0x1 && c->state == 1) {
            if (memmem(p + head, length, "\"subscribed\"", 12) != NULL) c->state = 2;
        } else if (opcode == 0x1 && recording) {
            record(p + head, length, at);
        } else if (opcode == 0x9) {
            unsigned char pong[140];
            sendAll(c->fd, pong, frame(pong, 0xA, (const char *)p + head, length < 125 ? length : 125));
        } else if (opcode == 0x8) {
            c->open = 0;
        }
        offset += head + length;
    }
    memmove(c->buffer, c->buffer + offset, c->used - offset);
    c->used -= offset;
}

/* Reads what has come on a subscribed socket; a socket the server closed is counted and forgotten. */
static void receive(Conn *c, int epoll, int recording)
{
    ssize_t got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - c->used, 0);
    double at = now();
    if (got > 0) {
        c->used += (size_t)got;
        frames(c, recording, at);
    }
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR) || !c->open) {
        if (c->state == 3) return;
        dropped++;
        epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
        c->open = 0;
        c->state = 3;
    }
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: lqclient PORT COUNT PER_SOURCE MODE SUBSCRIBE_JSON OUTFILE\n");
        return 2;
    }
    int port = atoi(argv[1]), count = atoi(argv[2]), perSource = atoi(argv[3]);
    int recording = strcmp(argv[4], "record") == 0;
    const char *subscribe = argv[5], *outPath = argv[6];
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    Conn *conns = calloc((size_t)count, sizeof *conns);
    if (conns == NULL) die("calloc");
    char request[512];
    int requestLength = snprintf(request, sizeof request,
        "GET /parse HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", port);
    static const char connectMessage[] = "{\"op\":\"connect\",\"applicationId\":\"roost\"}";
    unsigned char messages[8192];
    size_t messagesLength = frame(messages, 0x1, connectMessage, strlen(connectMessage));
    if (strlen(subscribe) > 4000) { fprintf(stderr, "lqclient: subscribe message too long\n"); return 2; }
    messagesLength += frame(messages + messagesLength, 0x1, subscribe, strlen(subscribe));
    /* Connections are set up WINDOW at a time, each a small state machine driven by the same epoll loop that
     * later holds them: a socket set up early answers the server's pings while the others are still coming. */
    int epoll = epoll_create1(0);
    if (epoll < 0) die("epoll_create1");
    struct epoll_event in = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(epoll, EPOLL_CTL_ADD, 0, &in);
    enum { WINDOW = 64 };
    int started = 0, subscribed = 0;
    double setupDeadline = now() + 600;
    struct epoll_event ready[256];
    while (subscribed < count) {
        while (started < count && started - subscribed < WINDOW) {
            Conn *c = &conns[started];
            c->fd = socket(AF_INET, SOCK_STREAM, 0);
            if (c->fd < 0) die("socket");
            int one = 1;
            setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            struct sockaddr_in source = {.sin_family = AF_INET};
            source.sin_addr.s_addr = htonl(0x7f000002u + (uint32_t)(started / perSource));
            if (bind(c->fd, (struct sockaddr *)&source, sizeof source) != 0) die("bind");
            struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
            server.sin_addr.s_addr = htonl(0x7f000001u);
            if (connect(c->fd, (struct sockaddr *)&server, sizeof server) != 0) die("connect");
            sendAll(c->fd, request, (size_t)requestLength);
            fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
            struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)started};
            if (epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event) != 0) die("epoll_ctl");
            started++;
        }
        int n = epoll_wait(epoll, ready, 256, 1000);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        if (now() > setupDeadline) { fprintf(stderr, "lqclient: setup took over 600 s\n"); return 1; }
        for (int e = 0; e < n; e++) {
            if (ready[e].data.u32 == UINT32_MAX) continue;
            Conn *c = &conns[ready[e].data.u32];
            if (c->state == 2) {
                receive(c, epoll, 0);
                continue;
            }
            ssize_t got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - 1 - c->used, 0);
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (got <= 0) { fprintf(stderr, "lqclient: connection %u closed during setup\n", ready[e].data.u32); return 1; }
            c->used += (size_t)got;
            if (memmem(c->buffer, c->used, "\"op\":\"error\"", 12) != NULL) {
                fprintf(stderr, "lqclient: the server answered an error: %.*s\n", (int)c->used, c->buffer);
                return 1;
            }
            if (c->state == 0) {
                unsigned char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
                if (end == NULL) continue;
                if (memcmp(c->buffer, "HTTP/1.1 101", 12) != 0) {
                    fprintf(stderr, "lqclient: upgrade refused: %.*s\n", (int)c->used, c->buffer);
                    return 1;
                }
                size_t head = (size_t)(end + 4 - c->buffer);
                memmove(c->buffer, c->buffer + head, c->used - head);
                c->used -= head;
                c->state = 1;
                c->open = 1;
                sendAll(c->fd, messages, messagesLength);
            }
            frames(c, 0, 0);
            if (!c->open) { fprintf(stderr, "lqclient: closed by the server during setup\n"); return 1; }
            if (c->state == 2) subscribed++;
        }
    }
    printf("ready %d\n", count);
    fflush(stdout);
    int running = 1;
    while (running) {
        int n = epoll_wait(epoll, ready, 256, 1000);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < n; e++) {
            if (ready[e].data.u32 == UINT32_MAX) {  // stdin: closed (or any line) ends the run
                running = 0;
                continue;
            }
            receive(&conns[ready[e].data.u32], epoll, recording);
        }
    }
    if (recording) {
        FILE *out = fopen(outPath, "wb");
        if (out == NULL) die(outPath);
        fwrite(records, sizeof *records, recordCount, out);
        fclose(out);
    }
    printf("done %zu %ld\n", recordCount, dropped);
    fflush(stdout);
    return 0;
}
